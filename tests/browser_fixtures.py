"""Headless Chromium through Playwright: one browser per test session, Debian's /usr/bin/chromium."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "test-results"


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator[object]:
    if not shutil.which(CHROMIUM):
        pytest.fail(
            f"{CHROMIUM} is missing: scripts/setup.sh installs Debian's chromium for the browser tests"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium_browser):
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def log_in(page: Any, live_server: Any, user: Any, *, replacing: bool = False) -> None:
    """Give the page's browser context a session cookie for ``user`` (Django's test client logs them in);
    ``replacing``: drop the context's cookies first (anyone logged in before, their CSRF cookie)."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    if replacing:
        page.context.clear_cookies()
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )

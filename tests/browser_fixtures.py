"""Headless Chromium through Playwright: one browser per test session, Debian's /usr/bin/chromium."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

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

"""Refusals and missing pages are the app's own pages, never Django's debug page (when the tool
was tried for real): 403 and 404 say what happened, and make run leaves DEBUG off unless asked."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_forbidden_and_missing_pages_are_the_apps_own(settings) -> None:
    annotator_user = UserFactory.create()  # not a researcher
    client = Client()
    client.force_login(annotator_user)
    forbidden = client.get("/studies/")
    assert forbidden.status_code == 403
    assert "You cannot open this page" in forbidden.content.decode()
    assert annotator_user.username in forbidden.content.decode()
    missing = client.get("/no/such/page/")
    assert missing.status_code == 404
    assert "Page not found" in missing.content.decode()


def test_debug_is_off_for_make_run_unless_asked_for(monkeypatch) -> None:
    import importlib

    import config.settings.local as local

    monkeypatch.delenv("DJANGO_DEBUG", raising=False)
    assert importlib.reload(local).DEBUG is False
    monkeypatch.setenv("DJANGO_DEBUG", "1")
    assert importlib.reload(local).DEBUG is True
    monkeypatch.delenv("DJANGO_DEBUG")
    importlib.reload(local)

"""What the server answers to bad hosts, missing tokens, refusals, weak passwords and an HTTPS proxy."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.annotation.work_builders import work_study
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
REPO = Path(__file__).resolve().parent.parent.parent
PASSWORD = "a-long-enough-pass-42"


def test_a_host_outside_allowed_hosts_gets_the_400_page_not_a_500(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        page = Client(raise_request_exception=False).get("/accounts/login/", HTTP_HOST="evil.example.com")
    assert page.status_code == 400
    assert 'id="error-400"' in page.content.decode()
    (refusal,) = [record for record in caplog.records if record.name == "django.security.DisallowedHost"]
    assert refusal.exc_info is None  # one line, no traceback
    api = Client(raise_request_exception=False).get("/api/studies/", HTTP_HOST="evil.example.com")
    assert api.status_code == 400
    assert api["Content-Type"] == "application/json"
    assert "detail" in api.json()


def test_unknown_api_addresses_and_huge_ids_are_json_404s() -> None:
    client = Client()
    for path in ("/api/no-such-endpoint/", f"/api/studies/{2**64}/", f"/api/work/{2**63}/next/"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.json() == {"detail": "Not found."}, path
    assert 'id="error-404"' in client.get(f"/studies/{2**70}/").content.decode()


def test_a_missing_or_bad_token_is_401_with_www_authenticate() -> None:
    client = Client()
    missing = client.get("/api/studies/")
    assert missing.status_code == 401
    assert missing["WWW-Authenticate"] == "Token"
    bad = client.get("/api/studies/", HTTP_AUTHORIZATION="Token not-a-token")
    assert bad.status_code == 401
    assert bad["WWW-Authenticate"] == "Token"
    assert bad.json() == {"detail": "Invalid token."}


def test_a_valid_token_of_someone_without_access_is_still_403() -> None:
    annotator = UserFactory.create()
    token = Token.objects.create(user=annotator)
    response = Client().get("/api/studies/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 403


def test_an_expected_403_is_logged_as_one_line(caplog: pytest.LogCaptureFixture) -> None:
    client = Client()
    client.force_login(UserFactory.create())  # not a researcher
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get("/studies/")
    assert response.status_code == 403
    records = [record for record in caplog.records if record.name == "django.request"]
    assert len(records) == 1
    record = records[0]
    assert record.exc_info is None
    assert not record.exc_text
    assert (
        record.getMessage()
        == "Forbidden (Permission denied): /studies/ (PermissionDenied: This page is for researchers.)"
    )
    formatted = logging.Formatter("%(message)s").format(record)
    assert "Traceback" not in formatted
    assert "\n" not in formatted


def test_the_api_docs_lead_back_to_the_app() -> None:
    client = Client()
    client.force_login(UserFactory.create())
    html = client.get("/api/docs/").content.decode()
    assert re.search(r'<nav class="dialeval-bar" id="api-docs-back">\s*<a class="brand" href="/">', html)
    assert 'href="/api/schema/"' in html
    assert 'id="swagger-ui"' in html


@pytest.mark.parametrize("password", ["password", "12345678", "qwertyui", "aaaaaaaa", "iloveyou"])
def test_sign_up_refuses_common_and_numeric_passwords(password: str) -> None:
    study = work_study(contexts=1)
    response = Client().post(
        f"/work/join/{study.invite_token}/",
        {"username": "volunteer", "password1": password, "password2": password},
    )
    assert response.status_code == 400
    assert "too common" in response.content.decode() or "entirely numeric" in response.content.decode()
    assert not User.objects.filter(username="volunteer").exists()


# --- behind the HTTPS proxy of docs/deployment.md --------------------------------------------------------


def production_settings(**environ: str) -> dict[str, object]:
    """The proxy settings config.settings.production computes from ``environ`` (in a process of its own)."""
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "print(json.dumps({'header': getattr(s, 'SECURE_PROXY_SSL_HEADER', None), "
        "'origins': s.CSRF_TRUSTED_ORIGINS, 'hosts': s.ALLOWED_HOSTS}))"
    )
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DIALEVAL_"))},
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "x" * 50,
        "DIALEVAL_VAR_DIR": str(REPO / "var"),
        **environ,
    }
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def proxied_login(client: Client, username: str) -> int:
    """GET the login form and POST it back as a browser behind the TLS-terminating proxy would."""
    proxy = {"HTTP_HOST": "dialeval.example.org", "HTTP_X_FORWARDED_PROTO": "https"}
    form = client.get("/accounts/login/", **proxy)  # type: ignore[arg-type]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.content.decode())
    assert token is not None
    response = client.post(
        "/accounts/login/",
        {"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)},
        HTTP_ORIGIN="https://dialeval.example.org",
        HTTP_REFERER="https://dialeval.example.org/accounts/login/",
        **proxy,  # type: ignore[arg-type]
    )
    return response.status_code


def test_a_login_through_the_https_proxy_passes_the_csrf_check(settings: object) -> None:
    computed = production_settings(
        DJANGO_ALLOWED_HOSTS="dialeval.example.org",
        DJANGO_SECURE_PROXY_SSL_HEADER="true",
        DJANGO_CSRF_TRUSTED_ORIGINS="https://dialeval.example.org",
    )
    assert computed == {
        "header": ["HTTP_X_FORWARDED_PROTO", "https"],
        "origins": ["https://dialeval.example.org"],
        "hosts": ["dialeval.example.org"],
    }
    User.objects.create_user("proxied", password=PASSWORD)
    settings.ALLOWED_HOSTS = computed["hosts"]  # type: ignore[attr-defined]
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True  # type: ignore[attr-defined]
    settings.SECURE_PROXY_SSL_HEADER = tuple(computed["header"])  # type: ignore[attr-defined,arg-type]
    assert proxied_login(Client(enforce_csrf_checks=True), "proxied") == 302  # to the start page
    # Without the proxy header setting Django sees http:// and refuses the https:// origin, as it did.
    settings.SECURE_PROXY_SSL_HEADER = None  # type: ignore[attr-defined]
    settings.CSRF_TRUSTED_ORIGINS = []  # type: ignore[attr-defined]
    assert proxied_login(Client(enforce_csrf_checks=True), "proxied") == 403


def test_production_sets_no_proxy_header_unless_asked() -> None:
    assert production_settings()["header"] is None
    assert production_settings()["origins"] == []

"""The headers a deployment expects (config/security_headers.py, config/settings/production.py; docs/deployment.md,
"Headers"): a Content-Security-Policy on every answer, Cache-Control: private, no-store on the API and on the
pages of a session (static files keep their caching), and `manage.py check --deploy` clean in the production
environment the documentation gives, where plain HTTP is redirected to HTTPS and HSTS is sent. Whether the
pages work under the policy is tests/browser/test_content_security_policy.py; gunicorn's Server header,
tests/integration/test_gunicorn_headers.py."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

from config.security_headers import EMPTY_STYLE, policy_text
from scoring.models import TrainingJob
from tests.factories import ResearcherFactory, StudyFactory

REPO = Path(__file__).resolve().parent.parent.parent
POLICY = "Content-Security-Policy"


def directives(header: str) -> dict[str, list[str]]:
    return {name: sources for name, *sources in (part.split() for part in header.split(";"))}


@pytest.mark.django_db
def test_every_answer_carries_the_policy_and_no_page_may_run_inline_code() -> None:
    client = Client()
    for path in ("/accounts/login/", "/api/studies/", "/no-such-page/", "/favicon.ico"):
        policy = directives(client.get(path)[POLICY])
        assert policy["script-src"] == ["'self'"], path
        assert policy["style-src"] == ["'self'"], path
        assert policy["object-src"] == ["'none'"], path
        assert policy["frame-ancestors"] == ["'none'"], path
        assert "style-src-attr" not in policy, path


@pytest.mark.django_db
def test_plotly_pages_allow_style_attributes_and_empty_style_elements_only() -> None:
    """A page that draws figures loads plotly.js through {% plotly_script %}, which widens that page's policy
    (plotly writes style attributes, and fills empty <style> elements through the CSSOM); scripts stay 'self'."""
    client = Client()
    researcher = ResearcherFactory.create()
    client.force_login(researcher)
    study = StudyFactory.create(owner=researcher)
    job = TrainingJob.objects.create(
        name="a job", kind="ruber", corpus="a corpus", corpus_path="/data/a", study=study
    )
    page = client.get(f"/scoring/training-jobs/{job.pk}/")
    assert page.status_code == 200
    assert 'src="/static/vendor/plotly/plotly.min.js"' in page.content.decode()
    policy = directives(page[POLICY])
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["style-src-elem"] == ["'self'", EMPTY_STYLE]
    assert policy["style-src-attr"] == ["'self'", "'unsafe-inline'"]


@pytest.mark.django_db
def test_the_redoc_page_gets_a_nonce_for_its_styles_and_no_other_page_does() -> None:
    client = Client()
    client.force_login(ResearcherFactory.create())
    page = client.get("/api/redoc/")
    nonce = re.search(r'data-nonce="([^"]+)"', page.content.decode())
    assert nonce is not None
    assert directives(page[POLICY])["style-src"] == ["'self'", f"'nonce-{nonce.group(1)}'"]
    assert nonce.group(1) not in client.get("/api/redoc/")[POLICY]  # a fresh one each time
    assert "nonce-" not in client.get("/api/docs/")[POLICY]


def test_a_directive_the_policy_lacks_starts_from_its_fallback() -> None:
    policy = {"default-src": ["'self'"], "style-src": ["'self'"]}
    assert policy_text(policy, {"style-src-attr": ["'unsafe-inline'"], "img-src": ["data:"]}) == (
        "default-src 'self'; style-src 'self'; img-src 'self' data:; style-src-attr 'self' 'unsafe-inline'"
    )
    assert policy_text(policy, {"style-src": ["'nonce-x'"], "style-src-elem": ["'sha256-y'"]}) == (
        "default-src 'self'; style-src 'self' 'nonce-x'; style-src-elem 'self' 'nonce-x' 'sha256-y'"
    )


@pytest.mark.django_db
def test_api_answers_are_never_stored() -> None:
    researcher = ResearcherFactory.create()
    token = Token.objects.create(user=researcher)
    answers = {
        "with a token": Client().get("/api/studies/", HTTP_AUTHORIZATION=f"Token {token.key}"),
        "without one": Client().get("/api/studies/"),
    }
    assert answers["with a token"].status_code == 200
    assert answers["without one"].status_code == 401
    for who, answer in answers.items():
        cache = {part.strip() for part in answer["Cache-Control"].split(",")}
        assert {"private", "no-store"} <= cache, who


@pytest.mark.django_db
def test_the_pages_of_a_session_are_never_stored_and_static_files_keep_their_caching(tmp_path: Path) -> None:
    client = Client()
    client.force_login(ResearcherFactory.create())
    for path in ("/studies/", "/reports/benchmark/", "/docs/"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert {"private", "no-store"} <= {part.strip() for part in page["Cache-Control"].split(",")}, path
    # WhiteNoise answers static files before the middleware: public caching, even for a logged-in browser.
    with override_settings(WHITENOISE_USE_FINDERS=True, WHITENOISE_AUTOREFRESH=True):
        static = Client()
        static.cookies = client.cookies
        answer = static.get("/static/css/app.css")
        assert answer.status_code == 200
        assert "no-store" not in answer["Cache-Control"]
        assert "public" in answer["Cache-Control"]


# --- the documented production environment -----------------------------------------------------------------


def documented_dotenv() -> dict[str, str]:
    """The .env that docs/deployment.md's production section writes (its ```sh blocks' NAME=value lines, the
    later ones adding to the earlier), its placeholders (<...>) filled in."""
    text = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8")
    section = text.split("## Production: docker compose", 1)[1].split("\n## ", 1)[0]
    values: dict[str, str] = {}
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL):
        values.update(re.findall(r"^([A-Z][A-Z0-9_]*)=(.*)$", block, flags=re.MULTILINE))
    assert {"DJANGO_SECRET_KEY", "DJANGO_SECURE_PROXY_SSL_HEADER"} <= set(values), values
    placeholders = {"DJANGO_SECRET_KEY": secrets.token_urlsafe(48), "POSTGRES_PASSWORD": "a-password"}
    return {name: placeholders[name] if value.startswith("<") else value for name, value in values.items()}


def compose_environment(dotenv: dict[str, str]) -> dict[str, str]:
    """The environment docker-compose.yml gives the web service from ``dotenv`` (its ${...} filled in as
    compose does: .env fills in the file, it is not passed on by itself)."""
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
    environment = compose["services"]["web"]["environment"]

    def fill(match: re.Match[str]) -> str:
        name, operator, default = match.group(1), match.group(2), match.group(3) or ""
        if dotenv.get(name):
            return dotenv[name]
        assert operator != "?", f"compose refuses to start without {name}"
        return default

    return {
        name: re.sub(r"\$\{(\w+)(?::([-?])([^}]*))?\}", fill, str(value))
        for name, value in environment.items()
    }


def production(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a process of its own with the documented production environment."""
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DIALEVAL_"))},
        **compose_environment(documented_dotenv()),
        "DIALEVAL_VAR_DIR": str(tmp_path),  # the image's /app/var
    }
    assert env["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
    return subprocess.run(
        [sys.executable, *code.split()] if code.startswith("manage.py") else [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_in_the_documented_production_environment(tmp_path: Path) -> None:
    done = production("manage.py check --deploy --fail-level DEBUG", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout, done.stdout + done.stderr


ANSWERS = """
import django, json
django.setup()
from django.middleware.security import SecurityMiddleware
from django.test import Client, RequestFactory
host = {"HTTP_HOST": "dialeval.example.org"}
plain = Client().get("/api/no-such-endpoint/", **host)
secure = Client().get("/api/no-such-endpoint/", HTTP_X_FORWARDED_PROTO="https", **host)
exempt = SecurityMiddleware(lambda request: None).process_request(RequestFactory().get("/health/", **host))
print(json.dumps({
    "plain": [plain.status_code, plain.get("Location"), plain.get("Strict-Transport-Security")],
    "secure": [secure.status_code, secure.get("Strict-Transport-Security")],
    "health_redirected": exempt is not None,
}))
"""


def test_behind_the_documented_proxy_http_is_redirected_and_hsts_sent(tmp_path: Path) -> None:
    done = production(ANSWERS, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    answers: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert answers["plain"] == [301, "https://dialeval.example.org/api/no-such-endpoint/", None]
    assert answers["secure"] == [404, "max-age=31536000; includeSubDomains"]
    # The compose healthcheck asks /health/ over plain HTTP inside the container: never redirected.
    assert answers["health_redirected"] is False

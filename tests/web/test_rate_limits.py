"""Brute force and rate limits (issue 24): log-in lock-out, sign-ups per client and per invite link, the API
per user and per client, bad API tokens. Each answers 429 with Retry-After. The test settings set every
limit very high; each test here lowers the one it checks."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import caches
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.models import Annotator
from tests.annotation.work_builders import work_study
from tests.factories import ResearcherFactory
from tests.live_services import free_port

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-enough-pass-42"


@pytest.fixture(autouse=True)
def fresh_counters() -> Iterator[None]:
    caches["rate_limits"].clear()
    yield
    caches["rate_limits"].clear()


def _log_in(username: str, password: str, address: str = "10.0.0.1") -> Any:
    return Client(REMOTE_ADDR=address).post("/accounts/login/", {"username": username, "password": password})


def test_wrong_passwords_lock_the_account_out_from_that_client(settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = 5
    User.objects.create_user("victim", password=PASSWORD)
    answers = [_log_in("victim", f"guess-{attempt}").status_code for attempt in range(5)]
    assert answers == [200, 200, 200, 200, 429]  # the form again with its error, then the lock-out
    right = _log_in("victim", PASSWORD)
    assert right.status_code == 429, "the right password must not get in during the lock-out"
    assert 800 <= int(right["Retry-After"]) <= 900
    assert "Too many failed log-ins" in right.content.decode()
    assert _log_in("victim", PASSWORD, address="10.0.0.2").status_code == 302  # another client: not locked


def test_sign_ups_are_limited_per_client(settings: Any) -> None:
    settings.DIALEVAL_SIGNUP_RATE_CLIENT = "2/hour"
    study = work_study(contexts=1)
    client = Client(REMOTE_ADDR="10.0.0.7")
    statuses = []
    for index in range(3):
        client.logout()
        response = client.post(
            f"/work/join/{study.invite_token}/",
            {"username": f"volunteer{index}", "password1": PASSWORD, "password2": PASSWORD},
        )
        statuses.append(response.status_code)
    assert statuses == [302, 302, 429]
    assert 0 < int(response["Retry-After"]) <= 3600
    assert 'id="error-429"' in response.content.decode()
    assert not User.objects.filter(username="volunteer2").exists()
    other = Client(REMOTE_ADDR="10.0.0.8").post(
        f"/work/join/{study.invite_token}/",
        {"username": "volunteer3", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert other.status_code == 302


def test_sign_ups_are_limited_per_invite_link_crowd_accounts_included(settings: Any) -> None:
    settings.DIALEVAL_SIGNUP_RATE_INVITE = "3/hour"
    study = work_study(contexts=1, crowd_id_parameter="PROLIFIC_PID")
    statuses = []
    for index in range(2):
        statuses.append(
            Client(REMOTE_ADDR=f"10.0.1.{index}")
            .post(
                f"/work/join/{study.invite_token}/",
                {"username": f"v{index}", "password1": PASSWORD, "password2": PASSWORD},
            )
            .status_code
        )
    for index in range(2):
        url = f"/work/join/{study.invite_token}/?PROLIFIC_PID=worker{index:020d}"
        statuses.append(Client(REMOTE_ADDR=f"10.0.2.{index}").get(url).status_code)
    assert statuses == [302, 302, 302, 429]
    assert Annotator.objects.filter(study=study).count() == 3


def test_the_api_is_limited_per_user(settings: Any) -> None:
    settings.DIALEVAL_API_RATE_USER = "3/hour"
    token = Token.objects.create(user=ResearcherFactory.create())
    client = Client()
    answers = [client.get("/api/studies/", HTTP_AUTHORIZATION=f"Token {token.key}") for _ in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert 0 < int(answers[-1]["Retry-After"]) <= 3600
    assert answers[-1].json()["detail"].startswith("Request was throttled.")


def test_the_api_is_limited_per_client_without_a_login(settings: Any) -> None:
    settings.DIALEVAL_API_RATE_ANON = "2/hour"
    answers = [Client(REMOTE_ADDR="10.0.3.1").get("/api/schema/").status_code for _ in range(3)]
    assert answers == [200, 200, 429]
    assert Client(REMOTE_ADDR="10.0.3.2").get("/api/schema/").status_code == 200


def test_bad_tokens_are_limited_per_client(settings: Any) -> None:
    settings.DIALEVAL_API_RATE_BAD_TOKENS = "3/hour"
    good = Token.objects.create(user=ResearcherFactory.create())
    client = Client(REMOTE_ADDR="10.0.4.1")
    answers = [client.get("/api/studies/", HTTP_AUTHORIZATION=f"Token bad{index}") for index in range(5)]
    assert [answer.status_code for answer in answers] == [401, 401, 401, 429, 429]
    assert 0 < int(answers[-1]["Retry-After"]) <= 3600
    # While blocked, that client's tokens are not even looked up; another client is not blocked.
    assert client.get("/api/studies/", HTTP_AUTHORIZATION=f"Token {good.key}").status_code == 429
    other = Client(REMOTE_ADDR="10.0.4.2")
    assert other.get("/api/studies/", HTTP_AUTHORIZATION=f"Token {good.key}").status_code == 200


def test_behind_a_trusted_proxy_the_client_is_the_forwarded_address(settings: Any) -> None:
    settings.DIALEVAL_TRUSTED_PROXIES = 1
    settings.DIALEVAL_API_RATE_ANON = "1/hour"
    proxy = Client(REMOTE_ADDR="10.9.9.9")
    assert proxy.get("/api/schema/", HTTP_X_FORWARDED_FOR="198.51.100.7, 192.0.2.1").status_code == 200
    assert proxy.get("/api/schema/", HTTP_X_FORWARDED_FOR="192.0.2.2").status_code == 200
    assert proxy.get("/api/schema/", HTTP_X_FORWARDED_FOR="198.51.100.8, 192.0.2.1").status_code == 429
    # What is not an address is not trusted: the proxy's own address counts instead.
    assert proxy.get("/api/schema/", HTTP_X_FORWARDED_FOR="not-an-address").status_code == 200
    assert proxy.get("/api/schema/", HTTP_X_FORWARDED_FOR="also-not").status_code == 429


def test_while_the_counters_cache_is_down_requests_go_through(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "rate_limits": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        },
    }
    settings.DIALEVAL_API_RATE_USER = "1/hour"
    token = Token.objects.create(user=ResearcherFactory.create())
    with caplog.at_level(logging.WARNING, logger="config.rate_limits"):
        answers = [Client().get("/api/studies/", HTTP_AUTHORIZATION=f"Token {token.key}") for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert any("rate limits not applied" in record.getMessage() for record in caplog.records)

"""Brute force and rate limits: log-in lock-out, sign-ups per client and per invite link, the API
per user and per client, bad API tokens. Each answers 429 with Retry-After. The test settings set every
limit very high; each test here lowers the one it checks."""

from __future__ import annotations

import logging
import time
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
# The limits count hits in a sliding window of 20 slots (kernel/http/rate_limits.py) and count the oldest slot
# whole, so a Retry-After can be up to one slot (a twentieth) longer than the period.
SLOT_SLACK = 1.05


class Clock:
    """Stands in for the time module that kernel/http/rate_limits.py reads: the tests set ``now``."""

    def __init__(self) -> None:
        self.now = time.time()

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return time.monotonic()


@pytest.fixture(params=["locmem", "redis"])
def counters(request: pytest.FixtureRequest, settings: Any) -> str:
    """The counters in this process's memory (as the other tests), and in a real Redis as in production
    (its add, incr, decr and get_many answer differently: a missing key, integers stored raw)."""
    if request.param == "redis":
        url = request.getfixturevalue("redis_server").rsplit("/", 1)[0] + "/9"
        settings.CACHES = {
            **settings.CACHES,
            "rate_limits": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url},
        }
        caches["rate_limits"].clear()
    return str(request.param)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr("kernel.http.rate_limits.time", fake)
    return fake


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
    assert 0 < int(response["Retry-After"]) <= SLOT_SLACK * 3600
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
    assert 0 < int(answers[-1]["Retry-After"]) <= SLOT_SLACK * 3600
    assert answers[-1].json()["detail"].startswith("Request was throttled.")


def test_the_api_is_limited_per_client_without_a_login(settings: Any) -> None:
    settings.DIALEVAL_API_RATE_ANON = "2/hour"
    answers = [Client(REMOTE_ADDR="10.0.3.1").get("/api/schema/").status_code for _ in range(3)]
    assert answers == [200, 200, 429]
    assert Client(REMOTE_ADDR="10.0.3.2").get("/api/schema/").status_code == 200


def test_a_valid_token_keeps_working_while_bad_ones_from_the_same_client_are_throttled(
    settings: Any, django_assert_num_queries: Any
) -> None:
    settings.DIALEVAL_API_RATE_BAD_TOKENS = "3/hour"
    good = Token.objects.create(user=ResearcherFactory.create())
    client = Client(REMOTE_ADDR="10.0.4.1")  # behind DIALEVAL_TRUSTED_PROXIES=0, every client of a proxy
    answers = [client.get("/api/studies/", HTTP_AUTHORIZATION="Token bad0") for _ in range(4)]
    with django_assert_num_queries(0):  # a token refused that often from here is not looked up again
        answers.append(client.get("/api/studies/", HTTP_AUTHORIZATION="Token bad0"))
    assert [answer.status_code for answer in answers] == [401, 401, 401, 429, 429]
    assert 0 < int(answers[-1]["Retry-After"]) <= SLOT_SLACK * 3600
    # Another bad token from that client is throttled too: the limit counts bad tokens across tokens.
    assert client.get("/api/studies/", HTTP_AUTHORIZATION="Token bad1").status_code == 429
    # A valid token from the same address is not: it is someone else's, or the owner's after a typo.
    for _ in range(3):
        assert client.get("/api/studies/", HTTP_AUTHORIZATION=f"Token {good.key}").status_code == 200
    # Another client's bad tokens have their own count.
    other = Client(REMOTE_ADDR="10.0.4.2")
    assert other.get("/api/studies/", HTTP_AUTHORIZATION="Token bad0").status_code == 401


def test_bad_tokens_across_a_window_boundary_are_still_limited(
    settings: Any, counters: str, clock: Clock
) -> None:
    settings.DIALEVAL_API_RATE_BAD_TOKENS = "20/minute"
    client = Client(REMOTE_ADDR="10.0.4.4")
    clock.now = 60 * 28_000_000 + 59.5  # half a second before a minute ends
    before = [client.get("/api/studies/", HTTP_AUTHORIZATION=f"Token a{index}") for index in range(20)]
    assert {answer.status_code for answer in before} == {401}
    clock.now += 1  # the next minute: a fixed window would start counting again here
    after = [client.get("/api/studies/", HTTP_AUTHORIZATION=f"Token b{index}") for index in range(5)]
    assert [answer.status_code for answer in after] == [429] * 5
    # The Retry-After is honest: a second earlier the client is still refused, at it a bad token is a 401.
    wait = int(after[-1]["Retry-After"])
    assert 59 <= wait <= SLOT_SLACK * 60
    clock.now += wait - 1
    assert client.get("/api/studies/", HTTP_AUTHORIZATION="Token c0").status_code == 429
    clock.now += 1
    assert client.get("/api/studies/", HTTP_AUTHORIZATION="Token c1").status_code == 401


def test_password_spraying_from_one_client_is_refused_and_other_clients_still_log_in(settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = 5
    settings.DIALEVAL_LOGIN_FAILURE_RATE_CLIENT = "30/hour"
    for index in range(60):
        User.objects.create_user(f"user{index}", password=PASSWORD)
    User.objects.create_user("sprayer", password=PASSWORD)
    statuses = []
    for index in range(60):
        if index == 10:
            # The sprayer's own account logs in fine, and that does not clear the client's failures.
            assert _log_in("sprayer", PASSWORD, address="10.0.5.1").status_code == 302
        answer = _log_in(f"user{index}", "Summer2025!", address="10.0.5.1")
        statuses.append(answer.status_code)
    assert 429 in statuses
    first = statuses.index(429)
    assert first < 59
    assert statuses[:first] == [200] * first  # the form again with its error
    assert statuses[first:] == [429] * (60 - first)
    assert 0 < int(answer["Retry-After"]) <= SLOT_SLACK * 3600
    assert "Too many failed log-ins from here" in answer.content.decode()
    # Another client is not locked out, for the same accounts either.
    assert _log_in("user59", PASSWORD, address="10.0.5.2").status_code == 302


def test_api_answers_carry_the_remaining_budget(settings: Any) -> None:
    settings.DIALEVAL_API_RATE_USER = "3/minute"
    token = Token.objects.create(user=ResearcherFactory.create())
    client = Client(REMOTE_ADDR="10.0.6.1")
    answers = [client.get("/api/studies/", HTTP_AUTHORIZATION=f"Token {token.key}") for _ in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert [answer.get("RateLimit-Limit") for answer in answers] == ["3"] * 4
    assert [answer.get("RateLimit-Remaining") for answer in answers] == ["2", "1", "0", "0"]
    assert all(0 < int(answer["RateLimit-Reset"]) <= SLOT_SLACK * 60 for answer in answers)
    assert answers[-1]["RateLimit-Reset"] == answers[-1]["Retry-After"]
    # Without a login: the budget of this client's requests.
    settings.DIALEVAL_API_RATE_ANON = "2/minute"
    anonymous = Client(REMOTE_ADDR="10.0.6.2").get("/api/schema/")
    assert (anonymous["RateLimit-Limit"], anonymous["RateLimit-Remaining"]) == ("2", "1")
    # A bad token: the budget of this client's bad tokens.
    settings.DIALEVAL_API_RATE_BAD_TOKENS = "4/minute"
    bad = Client(REMOTE_ADDR="10.0.6.3").get("/api/studies/", HTTP_AUTHORIZATION="Token nope")
    assert bad.status_code == 401
    assert (bad["RateLimit-Limit"], bad["RateLimit-Remaining"]) == ("4", "3")


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
    with caplog.at_level(logging.WARNING, logger="kernel.http.rate_limits"):
        answers = [Client().get("/api/studies/", HTTP_AUTHORIZATION=f"Token {token.key}") for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert any("rate limits not applied" in record.getMessage() for record in caplog.records)

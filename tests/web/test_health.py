"""The health endpoints (config/health.py) against a real redis-server: /health/ and /health/workers/."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.http.response import HttpResponseBase
from django.test import Client, override_settings

from scoring.worker_presence import WorkerPresence, presence_publish, redis_client
from tests.live_services import free_port

pytestmark = pytest.mark.integration


@pytest.fixture
def broker_url(redis_server: str) -> Iterator[str]:
    """The session's Redis, in a database of its own, emptied, as the broker of this test."""
    url = redis_server.rsplit("/", 1)[0] + "/8"
    redis_client(url).flushdb()
    with override_settings(CELERY_BROKER_URL=url, REDIS_URL=url):
        yield url
    redis_client(url).flushdb()


@pytest.fixture
def broker_down() -> Iterator[str]:
    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"  # nothing listens there; the password must not show
    with override_settings(CELERY_BROKER_URL=url, REDIS_URL=url):
        yield url


def get(path: str, client: Client | None = None, **headers: Any) -> Any:
    """GET ``path`` (anonymously, unless ``client`` is logged in), from a thread of its own: django-health-check
    runs sync checks through asgiref's AsyncToSync, which refuses a thread with a running event loop, and
    earlier tests in the same pytest process (Playwright's sync API) leave one in the main thread. A WSGI
    worker has none."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit((client or Client()).get, path, **headers).result(timeout=30)


def checks(response: HttpResponseBase) -> dict[str, str]:
    assert response["Content-Type"].startswith("application/json")
    return dict(json.loads(response.content))  # type: ignore[attr-defined]


def entry(results: dict[str, str], check: str) -> str:
    (value,) = [value for name, value in results.items() if name.startswith(f"{check}(")]
    return value


def announce(url: str, *queues: str, cuda: bool = False) -> None:
    presence = WorkerPresence(
        hostname=f"celery@{'-'.join(queues)}",
        queues=queues,
        pid=1,
        cuda=cuda,
        device_name=None,
        concurrency=1,
        seen_at=time.time(),
    )
    presence_publish(presence, client=redis_client(url), ttl_seconds=30)


@pytest.mark.django_db
def test_web_health_is_ok_with_the_database_and_redis_up(broker_url: str) -> None:
    response = get("/health/?format=json")  # anonymous: no login, no redirect
    assert response.status_code == 200
    results = checks(response)
    assert entry(results, "Database") == "OK"
    assert entry(results, "Redis") == "OK"
    assert len(results) == 2
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_the_accept_header_selects_json_and_the_page_renders_for_a_browser(broker_url: str) -> None:
    assert checks(get("/health/", HTTP_ACCEPT="application/json")) != {}
    page = get("/health/", HTTP_ACCEPT="text/html")
    assert page.status_code == 200
    assert page["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_web_health_names_redis_when_it_is_down_answers_quickly_and_shows_no_password(
    broker_down: str,
) -> None:
    started = time.monotonic()
    response = get("/health/?format=json")
    assert time.monotonic() - started < 2.0
    assert response.status_code == 500
    results = checks(response)
    assert entry(results, "Database") == "OK"
    assert entry(results, "Redis") == "Unavailable: the broker does not answer"  # anonymous: no address
    for format_ in ("json", "text", "openmetrics", "atom"):
        assert b"hunter2" not in get(f"/health/?format={format_}").content, format_
    assert b"hunter2" not in get("/health/", HTTP_ACCEPT="text/html").content


@override_settings(DIALEVAL_HEALTH_QUEUES=["cpu", "gpu"])
def test_worker_health_wants_a_live_worker_on_each_configured_queue(broker_url: str) -> None:
    response = get("/health/workers/?format=json")
    assert response.status_code == 500
    results = checks(response)
    assert entry(results, "Redis") == "OK"
    assert results["QueueWorker(queue='cpu')"] == "Unavailable: no live worker consumes the 'cpu' queue"
    assert results["QueueWorker(queue='gpu')"] == "Unavailable: no live worker consumes the 'gpu' queue"

    announce(broker_url, "cpu")
    results = checks(get("/health/workers/?format=json"))
    assert results["QueueWorker(queue='cpu')"] == "OK"
    assert results["QueueWorker(queue='gpu')"].startswith("Unavailable")

    announce(broker_url, "gpu", cuda=True)
    response = get("/health/workers/?format=json")
    assert response.status_code == 200
    assert set(checks(response).values()) == {"OK"}


def test_worker_health_checks_only_the_cpu_queue_by_default(broker_url: str) -> None:
    announce(broker_url, "cpu")
    response = get("/health/workers/?format=json")
    assert response.status_code == 200
    assert [name for name in checks(response) if name.startswith("QueueWorker")] == [
        "QueueWorker(queue='cpu')"
    ]


def test_worker_health_with_redis_down_says_so_quickly(broker_down: str) -> None:
    started = time.monotonic()
    response = get("/health/workers/?format=json")
    assert time.monotonic() - started < 2.0
    assert response.status_code == 500
    results = checks(response)
    assert entry(results, "Redis").startswith("Unavailable")
    assert (
        entry(results, "QueueWorker") == "Unavailable: the broker holding the worker records is unreachable"
    )
    assert b"hunter2" not in response.content


def test_worker_health_lists_every_queue_a_live_worker_serves(broker_url: str) -> None:
    """a worker on cpu,gpu (as `make run` starts) showed as the cpu queue alone, since only the
    configured queues were checked; every queue a live worker consumes is listed too."""
    announce(broker_url, "cpu", "gpu")
    response = get("/health/workers/?format=json")
    assert response.status_code == 200
    queues = {name: value for name, value in checks(response).items() if name.startswith("QueueWorker")}
    assert queues == {"QueueWorker(queue='cpu')": "OK", "QueueWorker(queue='gpu')": "OK"}


# --- who sees where the services run -----------------------------------------------------------------------

FORMATS = [{"format": name} for name in ("json", "text", "openmetrics", "atom", "rss")] + [{}]


def every_format(path: str, client: Client | None = None, **headers: Any) -> dict[str, str]:
    """``path``'s answer in every format (the HTML page last), decoded, by format."""
    answers = {}
    for query in FORMATS:
        name = query.get("format", "html")
        suffix = f"?format={name}" if query else ""
        answers[name] = get(path + suffix, client, HTTP_ACCEPT="text/html", **headers).content.decode()
    return answers


@pytest.mark.parametrize("path", ["/health/", "/health/workers/"])
def test_anonymous_callers_see_no_host_or_port(broker_down: str, path: str) -> None:
    port = broker_down.rsplit(":", 1)[1].split("/")[0]
    for name, text in every_format(path).items():
        assert "127.0.0.1" not in text, (name, text)
        assert port not in text, (name, text)
        assert "Redis" in text, name  # each check is still named


@pytest.mark.django_db(transaction=True)  # the session is read by the request's own thread
@pytest.mark.parametrize("path", ["/health/", "/health/workers/"])
def test_staff_see_the_details_and_other_users_do_not(broker_url: str, path: str) -> None:
    from tests.factories import UserFactory

    port = broker_url.rsplit(":", 1)[1].split("/")[0]
    staff, member = Client(), Client()
    staff.force_login(UserFactory.create(is_staff=True))
    member.force_login(UserFactory.create())
    detailed = checks(get(f"{path}?format=json", staff))
    assert entry(detailed, "Redis") == "OK"
    assert f"Redis(db=8, host='127.0.0.1', port={port})" in detailed
    assert f"port={port}" not in get(f"{path}?format=json", member).content.decode()
    assert get(f"{path}?format=json", staff)["Vary"].count("Cookie") == 1


@pytest.mark.django_db
@override_settings(DIALEVAL_HEALTH_TOKEN="a-monitoring-token")
def test_the_health_token_shows_the_details(broker_down: str) -> None:
    port = broker_down.rsplit(":", 1)[1].split("/")[0]
    right = get("/health/?format=json", HTTP_AUTHORIZATION="Bearer a-monitoring-token")
    assert f"port={port}" in right.content.decode()
    assert entry(checks(right), "Redis").startswith("Unavailable: Unable to connect to Redis")
    assert b"hunter2" not in right.content
    for wrong in ("Bearer another-token", "Bearer ", "Token a-monitoring-token", ""):
        answer = get("/health/?format=json", HTTP_AUTHORIZATION=wrong)
        assert f"port={port}" not in answer.content.decode(), wrong
        assert answer.status_code == 500  # the checks' outcome is the same for everyone


@pytest.mark.django_db
def test_no_token_configured_means_no_token_is_accepted(broker_down: str) -> None:
    port = broker_down.rsplit(":", 1)[1].split("/")[0]
    answer = get("/health/?format=json", HTTP_AUTHORIZATION="Bearer ")
    assert f"port={port}" not in answer.content.decode()

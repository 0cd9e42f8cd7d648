"""Shared fixtures. Service fixtures (redis-server, Celery worker, Chromium) live in tests/live_services.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["tests.live_services", "tests.browser_fixtures"]

# Playwright's sync API runs an event loop in the test thread; the ORM calls made by tests around it are
# still synchronous, so Django's async-safety guard must be relaxed in tests.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
# torch (and OpenMP/OpenBLAS under numpy) take every core by default; the tests train tiny models beside a
# Celery worker, a browser and a second pytest on 2 shared cores, where a second spinning thread made a
# 400-pair RUBER training take 176 s instead of 15. Code that sets its own count (scoring/torch_threads.py)
# still does; this is only the default that the environment gives a process and its children.
for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


@pytest.fixture(scope="session", autouse=True)
def _live_server_sends_at_once() -> None:
    """The live server (pytest-django's, Django's threaded WSGI server) answers with TCP_NODELAY, as gunicorn
    does. Without it a kept-alive connection (schemathesis's, Chromium's) waited 40 ms on every answer:
    the server writes the headers and the body in two sends, Nagle's algorithm holds the body until the
    headers are acknowledged, and the client delays that acknowledgement by 40 ms. Measured on this machine:
    50 ms a request on a kept-alive connection, 5 ms on a new one."""
    import socket

    from django.core.servers.basehttp import ThreadedWSGIServer
    from django.test.testcases import LiveServerThread

    class NoDelayServer(ThreadedWSGIServer):
        def get_request(self) -> tuple[socket.socket, object]:
            connection, address = super().get_request()
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return connection, address

    LiveServerThread.server_class = NoDelayServer  # type: ignore[attr-defined]  # not in django-stubs


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or a skip that says it is missing (never a silent pass)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real-data check skipped: {SHARED_DATA} is not present in this checkout")
    return SHARED_DATA


@pytest.fixture
def researcher(db):
    from tests.factories import ResearcherFactory

    return ResearcherFactory.create(username="alice")


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """``with committed():`` runs the on-commit callbacks of what the block committed, at its end (a test's
    own transaction never commits, so the services' after-commit work would not run otherwise)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback"}


@pytest.fixture(autouse=True)
def _celery_pools_forgotten_after_each_test() -> Iterator[None]:
    """After every test, the Celery app publishes to the broker the settings name again and forgets its
    connection and producer pools: a test that pointed the broker at a live Redis (the settings fixture,
    celery_broker) would otherwise leave later tests of the same process publishing there, and a test that
    needs an unreachable broker would see its message sent (found when the suite first ran in two processes,
    in another order)."""
    yield
    import sys

    if "config.celery_app" in sys.modules:
        from django.conf import settings

        from config.celery_app import app

        # The broker the settings name (pytest-django has restored them by now): tests/live_services.py's
        # celery_broker writes the URL it found on entry back into the app's own configuration on exit, which
        # outlives the settings fixture when that fixture had pointed the broker at a live Redis.
        app.conf.broker_url = settings.CELERY_BROKER_URL
        app._pool = None
        app.amqp._producer_pool = None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--database-only",
        action="store_true",
        help="run only the tests that touch the database (the PostgreSQL pass of scripts/test_postgres.sh: "
        "a test that never opens a connection behaves the same on every database)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:  # a test that reads ../shared/data through the fixture carries the marker too
        if (
            "shared_data" in getattr(item, "fixturenames", ())
            and item.get_closest_marker("shared_data") is None
        ):
            item.add_marker(pytest.mark.shared_data)
    if not config.getoption("--database-only"):
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        touches = item.get_closest_marker("django_db") is not None or bool(fixtures & DATABASE_FIXTURES)
        (keep if touches else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run in which no test passed (all skipped or deselected) fails like an empty one (exit 5)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    passed = len(reporter.stats.get("passed", [])) if reporter else 0
    if exitstatus == 0 and passed == 0:
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED

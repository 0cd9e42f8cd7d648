"""A busy or full database: API clients get JSON 503 with Retry-After, pages a 503 page, reads
keep working, and the database wait ends before gunicorn's worker timeout. On SQLite (a write lock held by
another connection past the busy timeout; the file at its page limit, as on a full disk) and on PostgreSQL
(a table lock held past lock_timeout), through scripts/test_postgres.sh."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.models import Study
from config import gunicorn_conf
from kernel.http.database_errors import BUSY, FULL
from tests.factories import ResearcherFactory, StudyFactory

pytestmark = pytest.mark.django_db(transaction=True)  # committed rows: another connection holds the lock
SHORT_WAIT_MS = 300


@contextmanager
def write_lock_held_elsewhere() -> Iterator[None]:
    """Another connection holds what a write needs, and this one waits only SHORT_WAIT_MS for it."""
    connection.ensure_connection()
    if connection.vendor == "sqlite":
        connection.connection.execute(f"PRAGMA busy_timeout = {SHORT_WAIT_MS}")
        other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # SQLite's write lock; readers go on (WAL)
        try:
            yield
        finally:
            other.execute("ROLLBACK")
            other.close()
            connection.connection.execute("PRAGMA busy_timeout = 20000")
        return
    import psycopg

    settings = connection.settings_dict
    other_pg = psycopg.connect(
        dbname=settings["NAME"],
        user=settings["USER"],
        password=settings["PASSWORD"],
        host=settings["HOST"],
        port=settings["PORT"],
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SET lock_timeout = {SHORT_WAIT_MS}")
    try:
        other_pg.execute(f"LOCK TABLE {Study._meta.db_table} IN SHARE MODE")  # blocks writes, not reads
        yield
    finally:
        other_pg.rollback()
        other_pg.close()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")


@contextmanager
def database_full() -> Iterator[None]:
    """SQLite's file may not grow (as on a full disk): every write that needs a new page fails."""
    connection.ensure_connection()
    raw = connection.connection
    raw.execute("VACUUM")  # no free pages left for the writes to reuse
    pages = raw.execute("PRAGMA page_count").fetchone()[0]
    raw.execute(f"PRAGMA max_page_count = {pages}")
    try:
        yield
    finally:
        raw.execute("PRAGMA max_page_count = 4294967294")


def _api(token: Token) -> Client:
    return Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Token {token.key}")


def _create_studies(client: Client, count: int = 1) -> Any:
    response = None
    for index in range(count):
        response = client.post(
            "/api/studies/", {"name": f"new study {index}", "scale": "0-2"}, content_type="application/json"
        )
        if response.status_code != 201:
            return response
    return response


def _assert_503_json(response: Any, detail: str) -> None:
    assert response.status_code == 503, response.content[:300]
    assert response["Content-Type"] == "application/json"
    assert response["Retry-After"] == "30"
    assert response.json() == {"detail": detail}


def test_a_write_waiting_past_the_lock_wait_is_a_json_503_and_reads_go_on() -> None:
    owner = ResearcherFactory.create()
    StudyFactory.create(owner=owner, name="kept")
    client = _api(Token.objects.create(user=owner))
    with write_lock_held_elsewhere():
        _assert_503_json(_create_studies(client), BUSY)
        listed = client.get("/api/studies/")
        assert listed.status_code == 200
        assert [study["name"] for study in listed.json()] == ["kept"]
    assert _create_studies(client).status_code == 201  # and once the lock is gone, it works


def test_a_page_whose_write_waits_too_long_gets_the_503_page() -> None:
    owner = ResearcherFactory.create()
    client = Client(raise_request_exception=False)
    client.force_login(owner)
    with write_lock_held_elsewhere():
        response = client.post(
            "/studies/new/", {"name": "page study", "scale": "0-2", "language": "en", "ratings_per_item": 3}
        )
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert 'id="error-503"' in response.content.decode()


@pytest.mark.skipif("connection.vendor != 'sqlite'", reason="SQLite's page limit stands in for a full disk")
def test_a_full_database_is_a_json_503_and_reads_keep_working() -> None:
    owner = ResearcherFactory.create()
    StudyFactory.create(owner=owner, name="kept")
    client = _api(Token.objects.create(user=owner))
    with database_full():
        _assert_503_json(_create_studies(client, count=200), FULL)
        assert client.get("/api/studies/").status_code == 200


def test_the_database_wait_ends_before_gunicorns_worker_timeout() -> None:
    timeout = gunicorn_conf.timeout
    connection.ensure_connection()
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA busy_timeout")
            waits_ms = [cursor.fetchone()[0]]
    else:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT setting::int FROM pg_settings WHERE name IN ('lock_timeout', 'statement_timeout')"
            )
            waits_ms = [row[0] for row in cursor.fetchall()]
        assert 0 not in waits_ms, "PostgreSQL waits for ever without lock_timeout and statement_timeout"
    assert waits_ms
    assert all(0 < wait < timeout * 1000 for wait in waits_ms), (waits_ms, timeout)

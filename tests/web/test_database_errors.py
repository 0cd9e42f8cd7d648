"""Which database errors are an outage (503) and which a bug (500): kernel/http/database_errors.py on the drivers' own
error objects (the live outage is tests/integration/test_database_outage.py)."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from django.db import utils

from kernel.http.database_errors import BUSY, READ_ONLY, UNREACHABLE, database_unavailable_reason


def _wrapped(kind: type[Exception], cause: Exception) -> Exception:
    """What Django raises: its own class, the driver's error as the cause (django.db.utils.DatabaseErrorWrapper)."""
    error = kind(str(cause))
    error.__cause__ = cause
    return error


def _with_state(state: str) -> psycopg.Error:
    """A psycopg error of the class its SQLSTATE maps to (psycopg.errors.lookup)."""
    return psycopg.errors.lookup(state)("server said so")


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        # no server answered: psycopg's error has no SQLSTATE (these were 500s)
        (
            _wrapped(
                utils.OperationalError, psycopg.OperationalError("connection failed: Connection refused")
            ),
            UNREACHABLE,
        ),
        (_wrapped(utils.InterfaceError, psycopg.InterfaceError("the connection is closed")), UNREACHABLE),
        (utils.InterfaceError("connection already closed"), UNREACHABLE),
        (_wrapped(utils.OperationalError, _with_state("57P03")), UNREACHABLE),  # starting up
        (_wrapped(utils.OperationalError, _with_state("08006")), UNREACHABLE),
        (_wrapped(utils.InternalError, _with_state("25006")), READ_ONLY),
        (_wrapped(utils.OperationalError, _with_state("55P03")), BUSY),
        # bugs stay 500s
        (_wrapped(utils.OperationalError, sqlite3.OperationalError("no such table: annotation_study")), None),
        (_wrapped(utils.InterfaceError, sqlite3.InterfaceError("Error binding parameter 1")), None),
        (_wrapped(utils.ProgrammingError, _with_state("42P01")), None),  # undefined table
        (ValueError("not a database error"), None),
    ],
)
def test_outages_are_told_apart_from_bugs(error: Exception, reason: str | None) -> None:
    assert database_unavailable_reason(error) == reason

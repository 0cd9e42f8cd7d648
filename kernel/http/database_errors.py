"""Which database errors mean "busy or full, try again later" (503) rather than a bug (500).

- SQLite: "database is locked" once a writer held the lock past the busy timeout (``DIALEVAL_DB_WAIT_SECONDS``),
  "database or disk is full", and the disk I/O error SQLite gives when a write to a full disk fails.
- PostgreSQL (by SQLSTATE): a lock not granted within ``lock_timeout`` (55P03), a statement cancelled by
  ``statement_timeout`` (57014), insufficient resources (class 53: disk full, out of memory, too many
  connections), the server starting up or shutting down (57P01-57P03), a connection that failed (class 08),
  and a write to a read-only database (25006: a standby, or ``default_transaction_read_only`` during
  maintenance).
- PostgreSQL without SQLSTATE: a server that cannot be reached at all (refused, gone, timed out) fails in the
  driver, before any server answered, and psycopg's error carries no SQLSTATE (such errors fell
  through to 500); so does a connection Django finds closed (``InterfaceError``).

The wait is bounded below gunicorn's worker timeout (config/gunicorn_conf.py), so the client gets this 503
rather than a dropped connection.
"""

from __future__ import annotations

from django.db import DatabaseError, InterfaceError

SQLITE_BUSY = ("database is locked", "database table is locked")
SQLITE_FULL = ("database or disk is full", "disk i/o error")
PG_BUSY_STATES = {"55P03", "57014"}
PG_RESTARTING_STATES = {"57P01", "57P02", "57P03"}
PG_READ_ONLY_STATES = {"25006"}

BUSY = "The database is busy; nothing in this request was saved. Try again in a moment."
FULL = "The database cannot store more data right now (its disk is full); nothing in this request was saved."
UNREACHABLE = (
    "The database cannot be reached right now (it is down or restarting); nothing in this request was saved. "
    "Try again in a moment."
)
READ_ONLY = (
    "The database accepts no changes right now (it is read-only, e.g. during maintenance); nothing in this "
    "request was saved. Try again later."
)


def database_unavailable_reason(error: BaseException | None) -> str | None:
    """The message for a 503 when ``error`` is a busy, full, read-only or unreachable database, else None."""
    if isinstance(error, InterfaceError):  # Django's own: psycopg's, or a connection it found closed
        closed = "connection already closed" in str(error).lower()
        return UNREACHABLE if closed or _driver_failed_to_reach_the_server(error.__cause__) else None
    if not isinstance(error, DatabaseError):
        return None
    cause = error.__cause__
    state = getattr(cause, "sqlstate", None)
    if isinstance(state, str):
        if state.startswith("53"):
            return FULL
        if state in PG_BUSY_STATES:
            return BUSY
        if state in PG_RESTARTING_STATES or state.startswith("08"):
            return UNREACHABLE
        if state in PG_READ_ONLY_STATES:
            return READ_ONLY
    elif _driver_failed_to_reach_the_server(cause):
        return UNREACHABLE
    message = str(error).lower()
    if any(text in message for text in SQLITE_BUSY):
        return BUSY
    if any(text in message for text in SQLITE_FULL):
        return FULL
    return None


def _driver_failed_to_reach_the_server(cause: BaseException | None) -> bool:
    """psycopg's OperationalError or InterfaceError without SQLSTATE: no server answered (SQLite's errors
    carry no SQLSTATE either, but come from the sqlite3 module and are told apart by their messages above)."""
    if cause is None:
        return False
    kind = type(cause)
    return kind.__module__.split(".")[0] == "psycopg" and any(
        base.__name__ in ("OperationalError", "InterfaceError") for base in kind.__mro__
    )

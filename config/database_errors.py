"""Which database errors mean "busy or full, try again later" (503) rather than a bug (500), issue 24.

- SQLite: "database is locked" once a writer held the lock past the busy timeout (``DIALEVAL_DB_WAIT_SECONDS``),
  "database or disk is full", and the disk I/O error SQLite gives when a write to a full disk fails.
- PostgreSQL (by SQLSTATE): a lock not granted within ``lock_timeout`` (55P03), a statement cancelled by
  ``statement_timeout`` (57014), insufficient resources (class 53: disk full, out of memory, too many
  connections), the server starting up or shutting down (57P01-57P03), and a connection that failed (class 08).

The wait is bounded below gunicorn's worker timeout (config/gunicorn_conf.py), so the client gets this 503
rather than a dropped connection.
"""

from __future__ import annotations

from django.db import DatabaseError

SQLITE_BUSY = ("database is locked", "database table is locked")
SQLITE_FULL = ("database or disk is full", "disk i/o error")
PG_BUSY_STATES = {"55P03", "57014", "57P01", "57P02", "57P03"}

BUSY = "The database is busy; nothing in this request was saved. Try again in a moment."
FULL = "The database cannot store more data right now (its disk is full); nothing in this request was saved."


def database_unavailable_reason(error: BaseException | None) -> str | None:
    """The message for a 503 when ``error`` is a busy or full database, else None."""
    if not isinstance(error, DatabaseError):
        return None
    state = getattr(error.__cause__, "sqlstate", None)
    if isinstance(state, str):
        if state.startswith("53"):
            return FULL
        if state in PG_BUSY_STATES or state.startswith("08"):
            return BUSY
    message = str(error).lower()
    if any(text in message for text in SQLITE_BUSY):
        return BUSY
    if any(text in message for text in SQLITE_FULL):
        return FULL
    return None

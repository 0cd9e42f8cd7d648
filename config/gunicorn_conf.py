"""gunicorn's settings, for `make run` (scripts/run_local.sh) and the compose web service alike:
``gunicorn -c python:config.gunicorn_conf config.wsgi:application``. GUNICORN_CMD_ARGS and the command line
still override each one.

The worker timeout is longer than the database wait (DIALEVAL_DB_WAIT_SECONDS, 20 s, and PostgreSQL's
statement timeout, 25 s; config/settings/base.py), so a request stuck on a lock is answered 503 with
Retry-After by Django before gunicorn would kill its worker and drop the connection.
"""

from __future__ import annotations

import os

from gunicorn.http import wsgi as gunicorn_wsgi

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 20
accesslog = "-"
# `make run` with DIALEVAL_RELOAD=1: restart the workers when a source file changes (development only).
reload = os.environ.get("DIALEVAL_RELOAD", "").lower() in {"1", "true", "yes", "on"}


# No "Server: gunicorn" header: it tells a scanner which server (and which of its bugs) to try, and gunicorn
# has no setting for it. Its HTTP/1 responses write the header in Response.default_headers; this file is read
# by the master before it forks the workers, so they all answer without it. (gunicorn's own error pages,
# util.write_error, never name the server.)
_default_headers = gunicorn_wsgi.Response.default_headers


def default_headers_without_server(self: gunicorn_wsgi.Response) -> list[str]:
    return [line for line in _default_headers(self) if not line.lower().startswith("server:")]


gunicorn_wsgi.Response.default_headers = default_headers_without_server

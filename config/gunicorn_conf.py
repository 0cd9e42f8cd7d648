"""gunicorn's settings, for `make run` (scripts/run_local.sh) and the compose web service alike:
``gunicorn -c python:config.gunicorn_conf config.wsgi:application``. GUNICORN_CMD_ARGS and the command line
still override each one.

The worker timeout is longer than the database wait (DIALEVAL_DB_WAIT_SECONDS, 20 s, and PostgreSQL's
statement timeout, 25 s; config/settings/base.py), so a request stuck on a lock is answered 503 with
Retry-After by Django before gunicorn would kill its worker and drop the connection (issue 24).
"""

from __future__ import annotations

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 20
accesslog = "-"
# `make run` with DIALEVAL_RELOAD=1: restart the workers when a source file changes (development only).
reload = os.environ.get("DIALEVAL_RELOAD", "").lower() in {"1", "true", "yes", "on"}

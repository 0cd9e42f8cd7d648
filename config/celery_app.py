"""The Celery application. Workers: `celery -A config.celery_app worker -Q cpu` (and `-Q gpu` on a GPU host);
the periodic recovery of scoring runs: `celery -A config.celery_app beat` (CELERY_BEAT_SCHEDULE)."""

import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

# Worker signal handlers, connected wherever a worker loads this app:
# - each worker announces its queues and CUDA in Redis (scoring.worker_presence: GPU routing, /health/workers/);
# - each pool process sets torch's thread count from DIALEVAL_TORCH_THREADS, else cores / pool processes.
import kernel.kombu_close_guard  # noqa: F401  (a worker survives a Redis drop: see the module)
import scoring.torch_threads
import scoring.worker_presence  # noqa: F401

app = Celery("dialeval")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.worker_process_init.connect
def _no_statement_timeout_in_workers(**_: object) -> None:
    """PostgreSQL's statement_timeout (DIALEVAL_DB_STATEMENT_TIMEOUT_SECONDS) bounds what a web request may
    wait, below gunicorn's worker timeout; a worker's chunk or import has no such deadline, so its
    pool processes lift it on each connection they open."""
    from django.db.backends.signals import connection_created

    def lift(sender: object, connection: object, **kwargs: object) -> None:
        if getattr(connection, "vendor", "") == "postgresql":
            with connection.cursor() as cursor:  # type: ignore[attr-defined]
                cursor.execute("SET statement_timeout = 0")

    connection_created.connect(lift, weak=False)

"""The Celery application. Workers: `celery -A config.celery_app worker -Q cpu` (and `-Q gpu` on a GPU host);
the periodic recovery of scoring runs: `celery -A config.celery_app beat` (CELERY_BEAT_SCHEDULE)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

# Worker signal handlers (issue 11), connected wherever a worker loads this app:
# - each worker announces its queues and CUDA in Redis (scoring.worker_presence: GPU routing, /health/workers/);
# - each pool process sets torch's thread count from DIALEVAL_TORCH_THREADS, else cores / pool processes.
import scoring.torch_threads
import scoring.worker_presence  # noqa: F401

app = Celery("dialeval")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

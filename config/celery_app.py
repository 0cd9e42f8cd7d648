"""The Celery application. Workers: `celery -A config.celery_app worker -Q cpu` (and `-Q gpu` on a GPU host)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("dialeval")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

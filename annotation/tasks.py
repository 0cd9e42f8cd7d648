"""Celery tasks of the annotation app: thin wrappers that take ids and call a service.

- ``annotation.run_import(job_id)``: run a queued large import (annotation/services/import_jobs.py), on
  "cpu". Late acknowledgement: a worker killed mid-import leaves nothing written (one transaction) and the
  message is delivered again; the job's claim makes a second delivery harmless.
- ``annotation.recover_imports()``: the periodic check, sent by Celery beat (CELERY_BEAT_SCHEDULE).
"""

from __future__ import annotations

import logging

from celery import shared_task

from annotation.services.import_jobs import import_job_run, import_jobs_recover

logger = logging.getLogger(__name__)


@shared_task(name="annotation.run_import", acks_late=True, reject_on_worker_lost=True)
def import_job_run_task(job_id: int) -> None:
    if import_job_run(job_id=job_id) is None:
        logger.info("import job %s: held by another attempt, finished, or gone; nothing to do", job_id)


@shared_task(name="annotation.recover_imports", ignore_result=True)
def import_jobs_recover_task() -> None:
    import_jobs_recover()

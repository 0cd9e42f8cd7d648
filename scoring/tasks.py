"""Celery tasks for scoring: thin wrappers that take ids and call a service (scoring.services.execution).

- ``scoring.execute_run(run_id)``: plan a pending run into chunks and start its chunk chains.
- ``scoring.work_on_run(run_id, queue)``: claim one chunk of the run on that queue, compute and store it,
  pass the baton. Its soft/hard time limits are per chunk (DIALEVAL_CHUNK_SOFT_TIME_LIMIT, _TIME_LIMIT).
- ``scoring.recover()``: the periodic check, sent by Celery beat (CELERY_BEAT_SCHEDULE) and run when a
  worker starts.
- ``scoring.train_model(job_id)``: claim a pending training job and train it; sent to the "gpu"
  queue when a worker with CUDA is live, else "cpu". No time limit: a training reports a heartbeat at least
  every few seconds, and the periodic check retries a job whose worker stopped.
- ``scoring.convert_word_vectors(vectors_id)``: claim an uploaded word vectors file and convert it into its
  store (docs/word-vectors.md); sent to the "cpu" queue, progress on the row.
- ``scoring.judge_preview(preview_id)``: claim an LLM judge's preview and read its one reply
  (scoring/judges/previews.py); a local model's to the "gpu" queue while a GPU worker is live.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from scoring.judges.previews import judge_preview_compute
from scoring.models import ScoringRun, TrainingJob
from scoring.services import scoring_run_start, scoring_run_work, scoring_runs_recover
from scoring.services.training_jobs import training_job_run
from scoring.services.word_vectors import word_vectors_convert

logger = logging.getLogger(__name__)


@shared_task(name="scoring.execute_run", acks_late=True, reject_on_worker_lost=True)
def scoring_run_execute_task(run_id: int) -> None:
    try:
        scoring_run_start(run_id=run_id)
    except ScoringRun.DoesNotExist:
        logger.warning("scoring run %s no longer exists; nothing to do", run_id)


@shared_task(
    name="scoring.work_on_run",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.DIALEVAL_CHUNK_SOFT_TIME_LIMIT,
    time_limit=settings.DIALEVAL_CHUNK_TIME_LIMIT,
)
def scoring_run_work_task(run_id: int, queue: str) -> None:
    try:
        scoring_run_work(run_id=run_id, queue=queue)
    except ScoringRun.DoesNotExist:
        logger.warning("scoring run %s no longer exists; nothing to do", run_id)


@shared_task(name="scoring.train_model", acks_late=True, reject_on_worker_lost=True)
def training_job_run_task(job_id: int) -> None:
    try:
        training_job_run(job_id=job_id)
    except TrainingJob.DoesNotExist:
        logger.warning("training job %s no longer exists; nothing to do", job_id)


@shared_task(name="scoring.convert_word_vectors", acks_late=True, reject_on_worker_lost=True)
def word_vectors_convert_task(vectors_id: int) -> None:
    word_vectors_convert(vectors_id=vectors_id)  # a deleted row is simply not pending: nothing to do


@shared_task(name="scoring.recover", ignore_result=True)
def scoring_runs_recover_task() -> None:
    scoring_runs_recover()


@worker_ready.connect
def scoring_runs_recover_on_worker_start(**kwargs: Any) -> None:
    """A starting worker makes the queue agree with the run rows (e.g. a broker restarted empty)."""
    try:
        scoring_runs_recover()
    except Exception:  # never keep a worker from starting; beat runs the check again
        logger.exception("could not recover scoring runs")


@shared_task(
    name="scoring.judge_preview",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.DIALEVAL_CHUNK_SOFT_TIME_LIMIT,
    time_limit=settings.DIALEVAL_CHUNK_TIME_LIMIT,
)
def judge_preview_task(preview_id: int) -> None:
    judge_preview_compute(preview_id=preview_id)  # a deleted row is simply not claimable: nothing to do

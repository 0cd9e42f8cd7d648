"""Scoring runs that wait for a model still being trained.

A run created while the model of one of its learned metrics is being trained holds a placeholder record for
that kind (``{"name", "training_job"}``) and ``waiting_for`` = the job (:mod:`scoring.services.runs`). When a
job ends, :func:`waiting_runs_reconsider` looks at every run waiting on it:

- the job succeeded: its model replaces the placeholder (id, name, hash, path, as for any run); once no
  placeholder is left the run's cells/variants are checked, its request key is recomputed from the real
  hashes and it is sent. If another placeholder's job is still training, the run now waits for that one.
- the job failed or was cancelled: the run fails, naming the job and why.

It is idempotent (a run without placeholders is left alone), so the periodic recovery calls it too, for a
job that ended while the worker that finished it died before sending its runs.
"""

from __future__ import annotations

import logging
from functools import partial

from django.db import IntegrityError, transaction
from django.utils import timezone

from scoring.models import ACTIVE_RUN_STATUSES, ACTIVE_TRAINING_STATUSES, RunStatus, ScoringRun, TrainingJob
from scoring.models import TrainingStatus as Status
from scoring.services.runs import is_waiting_record, scoring_request_key, scoring_run_send, vectors_hash
from scoring.trained_model_services import TrainedModelError, run_model_record, trained_cells_check

logger = logging.getLogger(__name__)


def waiting_runs_reconsider(*, job: TrainingJob) -> list[int]:
    """Reconsider the pending runs that wait for a model after ``job`` ended (a run may hold placeholders
    of several jobs, one per kind, and wait for any of them; there are few such runs, so all are looked
    at); the ids of the runs that are no longer waiting (sent, failed or cancelled)."""
    waiting = ScoringRun.objects.filter(status=RunStatus.PENDING, waiting_for__isnull=False)
    candidates = list(waiting.order_by("created_at", "pk").values_list("pk", flat=True))
    released = [run_id for run_id in candidates if waiting_run_reconsider(run_id=run_id)]
    if released:
        logger.info("training job %s %s: runs %s no longer wait", job.pk, job.status, released)
    return released


def waiting_run_reconsider(*, run_id: int) -> bool:
    """See the module docstring; True when the run stopped waiting (it was sent, failed or cancelled)."""
    with transaction.atomic():
        run = ScoringRun.objects.filter(pk=run_id, status=RunStatus.PENDING).first()
        if run is None:
            return False
        records = dict(run.trained_models)
        placeholders = {kind: record for kind, record in records.items() if is_waiting_record(record)}
        if not placeholders:
            return False
        jobs = TrainingJob.objects.select_related("trained_model").in_bulk(
            [int(record["training_job"]) for record in placeholders.values()]
        )
        still_training: TrainingJob | None = None
        for kind, record in placeholders.items():
            job = jobs.get(int(record["training_job"]))
            if job is None:
                return _fail(run, f"the training job of the {kind} model {record['name']} no longer exists")
            if job.status == Status.SUCCEEDED and job.trained_model is not None:
                records[kind] = run_model_record(job.trained_model)
            elif job.status == Status.SUCCEEDED:
                return _fail(run, f"the {kind} model {job.name} of training job {job.pk} was deleted since")
            elif job.status in ACTIVE_TRAINING_STATUSES:
                still_training = still_training or job
            else:
                why = f": {job.error.splitlines()[0]}" if job.error else ""
                return _fail(
                    run,
                    f"the {kind} model {job.name} it waited for was not trained: training job {job.pk} "
                    f"{job.get_status_display()}{why}",
                )
        if still_training is not None:
            if records != run.trained_models or still_training.pk != run.waiting_for_id:
                ScoringRun.objects.filter(pk=run.pk, status=RunStatus.PENDING).update(
                    trained_models=records, waiting_for=still_training
                )
            return False
        models = {
            kind: jobs[int(record["training_job"])].trained_model for kind, record in placeholders.items()
        }
        try:
            trained_cells_check(
                metrics=run.metrics,
                trained={kind: model for kind, model in models.items() if model is not None},
            )
        except TrainedModelError as error:
            return _fail(run, str(error))
        key = scoring_request_key(
            study_id=run.study_id,
            metrics=run.metrics,
            references=run.references,
            tokenizer=run.tokenizer,
            models=records,
            implementation=run.implementation,
            options=run.options,
            vectors=vectors_hash(run.vectors),
        )
        try:
            with transaction.atomic():
                ScoringRun.objects.filter(pk=run.pk, status=RunStatus.PENDING).update(
                    trained_models=records, request_key=key
                )
        except IntegrityError:  # the same run, with the same model, was started meanwhile
            same = ScoringRun.objects.filter(request_key=key, status__in=ACTIVE_RUN_STATUSES).first()
            ScoringRun.objects.filter(pk=run.pk, status=RunStatus.PENDING).update(
                status=RunStatus.CANCELLED,
                finished_at=timezone.now(),
                notes=f"not started: run {same.pk if same else '?'} does the same work with the new model",
            )
            return True
        transaction.on_commit(partial(scoring_run_send, run_id=run.pk))
    logger.info("scoring run %s: the model it waited for is trained; sent", run_id)
    return True


def _fail(run: ScoringRun, error: str) -> bool:
    ScoringRun.objects.filter(pk=run.pk, status=RunStatus.PENDING).update(
        status=RunStatus.FAILED, error=error, finished_at=timezone.now()
    )
    return True

"""The periodic check (Celery beat, every ``settings.DIALEVAL_RECOVERY_INTERVAL_SECONDS``; also when a worker
starts, and ``manage.py recover_scoring_runs``): the run rows are the source of truth, and this makes the
queue agree with them.

- PENDING runs whose message was never sent (the broker was down when they were created) or was lost (a
  broker restarted empty; a web process died between commit and send) are sent.
- RUNNING runs with claimable chunks (waiting, or held by a worker whose heartbeat went stale: killed,
  restarted, lost with its reserved messages) and no live chain get new chunk messages; a killed worker's
  run so resumes from its stored chunks within stale + interval seconds (60 + 30 by default).
- Chunks that used every attempt are failed (and their run); runs whose chunks are all done are finished.
- Chunks waiting on the "gpu" queue when no GPU worker is live any more are moved to the "cpu" queue.
- Training jobs (:func:`scoring.services.training_jobs.training_jobs_recover`): a running job whose
  heartbeat went stale is queued again (failed past its attempt cap); pending jobs never sent are sent.
- Word vector conversions (:func:`scoring.services.word_vectors.word_vectors_recover`): pending ones never sent
  are sent; one whose progress stopped is queued again (failed past its attempt cap).
- Runs waiting for a training job are never sent while the job is pending or running; a run whose job has
  ended but that still waits (the worker died between the two) is sent or failed now.

Sending twice is harmless: planning and chunk claims are leases (kernel/lease.py), conditional updates, so a
duplicate finds nothing. A pass returns one :class:`kernel.lease.RecoveryReport` per kind of work (scoring
runs, their chunks, trainings, word vectors), and logs them in one line.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from kernel.lease import RecoveryReport, fenced, recovery_summary
from scoring.models import ACTIVE_TRAINING_STATUSES, ChunkStatus, RunStatus, ScoringChunk, ScoringRun
from scoring.services.chunk_claims import CHUNK_LEASE, chunk_fail_exhausted, of_a_running_run, stale_before
from scoring.services.execution import chains_start
from scoring.services.queueing import GPU_QUEUE, default_queue, gpu_worker_available
from scoring.services.run_finish import scoring_run_advance
from scoring.services.runs import scoring_run_send
from scoring.services.training_jobs import training_jobs_recover
from scoring.services.waiting_runs import waiting_run_reconsider
from scoring.services.word_vectors import word_vectors_recover

logger = logging.getLogger(__name__)


RUN_KIND = "scoring run"
CHUNK_KIND = "scoring chunk"


def scoring_runs_recover(*, pending_grace_seconds: float = 5.0) -> list[RecoveryReport]:
    """One pass of the periodic check (see the module docstring); what it did, per kind of work: runs
    (``resent``: pending runs sent; ``requeued``: running runs given new chunk messages; ``finished``: runs
    whose chunks were all done; a run that waited for a training job that ended is ``resent`` or
    ``failed``), chunks (``failed``: past the attempt cap), trainings and word vectors."""
    runs, chunks = RecoveryReport(RUN_KIND), RecoveryReport(CHUNK_KIND)
    training = training_jobs_recover(pending_grace_seconds=pending_grace_seconds)
    vectors = word_vectors_recover(pending_grace_seconds=pending_grace_seconds)
    now = timezone.now()
    stale = stale_before()
    resend_before = now - timedelta(seconds=settings.DIALEVAL_RUN_STALE_SECONDS)
    ended = ScoringRun.objects.filter(status=RunStatus.PENDING, waiting_for__isnull=False).exclude(
        waiting_for__status__in=ACTIVE_TRAINING_STATUSES
    )
    for run_id in ended.order_by("created_at").values_list("pk", flat=True):
        if waiting_run_reconsider(run_id=run_id):
            status = ScoringRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
            (runs.failed if status in (RunStatus.FAILED, RunStatus.CANCELLED) else runs.resent).append(run_id)
    pending = (
        ScoringRun.objects.filter(
            status=RunStatus.PENDING, created_at__lt=now - timedelta(seconds=pending_grace_seconds)
        )
        .filter(Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=resend_before))
        .exclude(waiting_for__status__in=ACTIVE_TRAINING_STATUSES)  # waits for its model: never sent
    )
    for run_id in pending.order_by("created_at").values_list("pk", flat=True):
        runs.resend(run_id, lambda pk: scoring_run_send(run_id=pk))
    if not gpu_worker_available():
        rerouted = fenced(
            ScoringChunk.objects.filter(of_a_running_run(), queue=GPU_QUEUE, status=ChunkStatus.PENDING)
        ).update(queue=default_queue())
        if rerouted:
            chunks.notes.append(f"moved {rerouted} chunk(s) from the gpu queue to cpu (no GPU worker)")
    for run in ScoringRun.objects.filter(status=RunStatus.RUNNING).order_by("created_at"):
        exhausted = (
            CHUNK_LEASE.stale().filter(run=run, attempts__gte=settings.DIALEVAL_SCORING_MAX_ATTEMPTS).first()
        )
        if exhausted is not None:
            chunk_fail_exhausted(chunk=exhausted)
            chunks.failed.append(exhausted.pk)
            continue
        if scoring_run_advance(run_id=run.pk):
            runs.finished.append(run.pk)
            continue
        live = ScoringChunk.objects.filter(
            run=run, status=ChunkStatus.RUNNING, heartbeat_at__gte=stale
        ).exists()
        recently_sent = run.enqueued_at is not None and run.enqueued_at >= resend_before
        if live or recently_sent:
            continue
        if chains_start(run_id=run.pk, per_queue=settings.DIALEVAL_SCORING_PARALLEL_CHUNKS):
            runs.requeued.append(run.pk)
    reports = [runs, chunks, training, vectors]
    if any(reports):
        logger.warning("scoring recovery: %s", recovery_summary(reports))
    return reports

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
- Training jobs (issue 14, :func:`scoring.services.training_jobs.training_jobs_recover`): a running job whose
  heartbeat went stale is queued again (failed past its attempt cap); pending jobs never sent are sent.
- Word vector conversions (:func:`scoring.services.word_vectors.word_vectors_recover`): pending ones never sent
  are sent; one whose progress stopped is queued again (failed past its attempt cap).
- Runs waiting for a training job are never sent while the job is pending or running; a run whose job has
  ended but that still waits (the worker died between the two) is sent or failed now.

Sending twice is harmless: planning and chunk claims are conditional updates, so a duplicate finds nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from scoring.models import ACTIVE_TRAINING_STATUSES, ChunkStatus, RunStatus, ScoringChunk, ScoringRun
from scoring.services.chunks import chunk_fail_exhausted, scoring_run_advance, stale_before
from scoring.services.execution import chains_start
from scoring.services.queueing import GPU_QUEUE, default_queue, gpu_worker_available
from scoring.services.runs import scoring_run_send
from scoring.services.training_jobs import TrainingRecoveryReport, training_jobs_recover
from scoring.services.waiting_runs import waiting_run_reconsider
from scoring.services.word_vectors import VectorsRecoveryReport, word_vectors_recover

logger = logging.getLogger(__name__)


@dataclass
class RecoveryReport:
    sent_runs: list[int] = field(default_factory=list)  # pending runs sent to a worker
    resumed_runs: list[int] = field(default_factory=list)  # running runs given new chunk messages
    failed_chunks: list[int] = field(default_factory=list)  # chunks past the attempt cap
    finished_runs: list[int] = field(default_factory=list)
    rerouted_chunks: int = 0
    released_runs: list[int] = field(default_factory=list)  # waiting runs whose job had ended: sent or failed
    training: TrainingRecoveryReport = field(default_factory=TrainingRecoveryReport)
    vectors: VectorsRecoveryReport = field(default_factory=VectorsRecoveryReport)

    def __bool__(self) -> bool:
        return bool(
            self.sent_runs
            or self.resumed_runs
            or self.failed_chunks
            or self.finished_runs
            or self.rerouted_chunks
            or self.released_runs
            or self.training
            or self.vectors
        )


def scoring_runs_recover(*, pending_grace_seconds: float = 5.0) -> RecoveryReport:
    """One pass of the periodic check (see the module docstring); what it did."""
    report = RecoveryReport()
    report.training = training_jobs_recover(pending_grace_seconds=pending_grace_seconds)
    report.vectors = word_vectors_recover(pending_grace_seconds=pending_grace_seconds)
    now = timezone.now()
    stale = stale_before()
    resend_before = now - timedelta(seconds=settings.DIALEVAL_RUN_STALE_SECONDS)
    ended = ScoringRun.objects.filter(status=RunStatus.PENDING, waiting_for__isnull=False).exclude(
        waiting_for__status__in=ACTIVE_TRAINING_STATUSES
    )
    for run_id in ended.order_by("created_at").values_list("pk", flat=True):
        if waiting_run_reconsider(run_id=run_id):
            report.released_runs.append(run_id)
    pending = (
        ScoringRun.objects.filter(
            status=RunStatus.PENDING, created_at__lt=now - timedelta(seconds=pending_grace_seconds)
        )
        .filter(Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=resend_before))
        .exclude(waiting_for__status__in=ACTIVE_TRAINING_STATUSES)  # waits for its model: never sent
    )
    for run_id in pending.order_by("created_at").values_list("pk", flat=True):
        if scoring_run_send(run_id=run_id):
            report.sent_runs.append(run_id)
    if not gpu_worker_available():
        report.rerouted_chunks = ScoringChunk.objects.filter(
            queue=GPU_QUEUE, status=ChunkStatus.PENDING, run__status=RunStatus.RUNNING
        ).update(queue=default_queue())
    for run in ScoringRun.objects.filter(status=RunStatus.RUNNING).order_by("created_at"):
        exhausted = ScoringChunk.objects.filter(
            run=run,
            status=ChunkStatus.RUNNING,
            heartbeat_at__lt=stale,
            attempts__gte=settings.DIALEVAL_SCORING_MAX_ATTEMPTS,
        ).first()
        if exhausted is not None:
            chunk_fail_exhausted(chunk=exhausted)
            report.failed_chunks.append(exhausted.pk)
            continue
        if scoring_run_advance(run_id=run.pk):
            report.finished_runs.append(run.pk)
            continue
        live = ScoringChunk.objects.filter(
            run=run, status=ChunkStatus.RUNNING, heartbeat_at__gte=stale
        ).exists()
        recently_sent = run.enqueued_at is not None and run.enqueued_at >= resend_before
        if live or recently_sent:
            continue
        if chains_start(run_id=run.pk, per_queue=settings.DIALEVAL_SCORING_PARALLEL_CHUNKS):
            report.resumed_runs.append(run.pk)
    if report:
        logger.warning("scoring recovery: %s", report)
    return report

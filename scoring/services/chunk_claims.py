"""Claiming a run's chunks: the lease every chunk is held by, and failing a chunk (and its run).

The healthchecks pattern, per chunk: a chunk is held by a lease (kernel/lease.py, :data:`CHUNK_LEASE`):
claimed with a conditional UPDATE (PENDING, or RUNNING with a heartbeat older than
``settings.DIALEVAL_RUN_STALE_SECONDS``: its worker died) that bumps ``attempts``, the fencing token: every
later write of the attempt is conditional on it, so a worker that lost its chunk (taken over, or the run
cancelled) stops instead of writing. A worker that dies (killed, out of memory, over the hard time limit)
leaves its chunk to be taken over once stale, at most ``settings.DIALEVAL_SCORING_MAX_ATTEMPTS`` times;
then the chunk and the run FAIL saying so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Response
from kernel.lease import Lease, LeaseLost, LeaseTerms, lease_claim, lease_give_up
from scoring.models import (
    ChunkKind,
    ChunkStatus,
    RunStatus,
    ScoringChunk,
    ScoringRun,
)
from scoring.services.errors import error_text

logger = logging.getLogger(__name__)


CHUNK_LEASE = LeaseTerms(
    model=ScoringChunk,
    running=ChunkStatus.RUNNING,
    waiting=ChunkStatus.PENDING,
    stale_seconds=lambda: float(settings.DIALEVAL_RUN_STALE_SECONDS),
    max_attempts=lambda: int(settings.DIALEVAL_SCORING_MAX_ATTEMPTS),
)


class ChunkLostError(LeaseLost):
    """This attempt no longer owns its chunk (taken over, or the run was cancelled); stop without writing."""


class ChunkComputeError(Exception):
    """A metric failed on every reply of a chunk; ``response_id`` is the first reply that failed."""

    def __init__(self, message: str, *, response_id: int | None = None) -> None:
        super().__init__(message)
        self.response_id = response_id


@dataclass
class ClaimedChunk:
    chunk: ScoringChunk
    attempt: int

    @property
    def lease(self) -> Lease:
        """Every write of this attempt goes through it (the fence)."""
        return Lease(CHUNK_LEASE, self.chunk.pk, self.attempt)


def stale_before() -> Any:
    return CHUNK_LEASE.stale_before()


def claimable_q() -> Q:
    """Chunks a worker may take: waiting, or running under a worker whose heartbeat went stale."""
    return CHUNK_LEASE.claimable()


def of_a_running_run() -> Q:
    """Chunks of a running run, as a condition on the chunk's own ``run_id`` (a claim's or a store's filter
    must not join the run's table: :func:`kernel.lease.fenced`)."""
    return Q(run_id__in=ScoringRun.objects.filter(status=RunStatus.RUNNING).values("pk"))


def chunk_claim_next(*, run_id: int, queue: str | None) -> ClaimedChunk | None:
    """Claim the next chunk of run ``run_id`` on ``queue`` (any queue when None); None when there is none.

    Stage-1 chunks (blends) wait until every stage-0 chunk is done. A stale chunk that already used every
    attempt is failed here (and the run with it) instead of being claimed again.
    """
    chunks = ScoringChunk.objects.filter(run_id=run_id, run__status=RunStatus.RUNNING)
    if queue is not None:
        chunks = chunks.filter(queue=queue)
    # The candidates as plain values, not their reply lists and results (a replies chunk lists up to 512
    # ids: reading 50 of them per claim cost more than some metrics), in one query that also checks that
    # the run is running; the claimed chunk is read whole below.
    candidates = chunks.filter(claimable_q()).order_by("stage", "index")
    for pk, stage, attempts in candidates.values_list("pk", "stage", "attempts")[:50]:
        if stage > 0 and _stage_zero_open(run_id):  # stage-0 candidates come first: asked at most once
            return None
        if CHUNK_LEASE.exhausted(attempts):
            chunk_fail_exhausted(chunk=ScoringChunk.objects.get(pk=pk))
            return None
        lease = lease_claim(
            CHUNK_LEASE,
            pk,
            attempts=attempts,
            where=of_a_running_run(),
            started_at=timezone.now(),
            units_done=0,
        )
        if lease is not None:
            chunk = ScoringChunk.objects.get(pk=pk)  # every field, as claimed
            return ClaimedChunk(chunk=chunk, attempt=lease.attempt)
    return None


@dataclass(frozen=True)
class RunChunksState:
    """Where a run's chunks stand, read in one grouped query (what a worker asks after every chunk)."""

    open: bool  # some chunk is not done yet
    claimable_queues: list[str]  # queues with a chunk a worker could claim now (stage 1 once stage 0 is done)


def run_chunks_state(*, run_id: int) -> RunChunksState:
    """The run's chunks that are not done, grouped by stage and queue, with how many of each are claimable."""
    groups = list(
        ScoringChunk.objects.filter(run_id=run_id)
        .exclude(status=ChunkStatus.DONE)
        .values("stage", "queue")
        .annotate(claimable=Count("id", filter=claimable_q()))
        .order_by()
    )
    stage_zero_open = any(group["stage"] == 0 for group in groups)
    queues = {
        group["queue"]
        for group in groups
        if group["claimable"] and (group["stage"] == 0 or not stage_zero_open)
    }
    return RunChunksState(open=bool(groups), claimable_queues=sorted(queues))


def _stage_zero_open(run_id: int) -> bool:
    """Whether some stage-0 chunk of the run is not done yet (stage-1 chunks wait for them)."""
    return ScoringChunk.objects.filter(run_id=run_id, stage=0).exclude(status=ChunkStatus.DONE).exists()


def chunk_release(*, claimed: ClaimedChunk, reason: str) -> None:
    """Give a chunk back for another attempt (e.g. over the soft time limit), keeping why in ``error``."""
    claimed.lease.release(error=reason, units_done=0)


def chunk_fail(*, claimed: ClaimedChunk, error: BaseException) -> None:
    """Fail the chunk and its run with ``error`` (one readable line first, then the traceback's tail)."""
    chunk = claimed.chunk
    response_id = getattr(error, "response_id", None)
    where = _chunk_description(chunk)
    if response_id is not None:
        where += f"; first failing reply: {_reply_description(response_id)}"
    text = error_text(error, where=where)
    now = timezone.now()
    _fail_run(
        lambda: claimed.lease.finish(ChunkStatus.FAILED, error=text, finished_at=now),
        run_id=chunk.run_id,
        run_error=text,
    )


def chunk_fail_exhausted(*, chunk: ScoringChunk) -> None:
    """Fail a stale chunk whose worker died on every allowed attempt (and its run), saying so."""
    limit = settings.DIALEVAL_SCORING_MAX_ATTEMPTS
    text = (
        f"the worker computing {_chunk_description(chunk)} stopped {chunk.attempts} time(s) without finishing "
        f"(the limit is {limit}; DIALEVAL_SCORING_MAX_ATTEMPTS): it was killed, ran out of memory "
        f"(worker_max_memory_per_child) or passed the hard time limit (DIALEVAL_CHUNK_TIME_LIMIT = "
        f"{settings.DIALEVAL_CHUNK_TIME_LIMIT} s); last heartbeat {chunk.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC"
    )
    if chunk.error:
        text += f"\n\nlast recorded error: {chunk.error}"
    now = timezone.now()
    _fail_run(
        lambda: lease_give_up(
            CHUNK_LEASE,
            chunk.pk,
            attempts=chunk.attempts,
            status=ChunkStatus.FAILED,
            error=text,
            finished_at=now,
        ),
        run_id=chunk.run_id,
        run_error=text,
    )


def _fail_run(fail_chunk: Callable[[], bool], *, run_id: int, run_error: str) -> None:
    """Fail the chunk (``fail_chunk``: a write fenced by its attempt, False when that attempt lost it) and,
    when it did, the run, cancelling the run's other chunks."""
    now = timezone.now()
    with transaction.atomic():
        if not fail_chunk():
            return
        ended = ScoringRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
            status=RunStatus.FAILED, error=run_error, finished_at=now, heartbeat_at=now
        )
        if ended:
            ScoringChunk.objects.filter(
                run_id=run_id, status__in=[ChunkStatus.PENDING, ChunkStatus.RUNNING]
            ).update(status=ChunkStatus.CANCELLED, finished_at=now)
    logger.error("scoring run %s failed: %s", run_id, run_error.splitlines()[0])


def _chunk_description(chunk: ScoringChunk) -> str:
    if chunk.kind == ChunkKind.DIVERSITY:
        return (
            f"chunk {chunk.index} ({', '.join(chunk.metrics)} on {len(chunk.pairs)} (system, context) pairs)"
        )
    if chunk.kind == ChunkKind.PAIRWISE:
        return f"chunk {chunk.index} ({', '.join(chunk.metrics)} on {len(chunk.pairs)} pairs of replies)"
    if chunk.kind in (ChunkKind.REPLIES, ChunkKind.PER_REFERENCE):
        return f"chunk {chunk.index} ({', '.join(chunk.metrics)} on {len(chunk.response_ids)} replies)"
    return f"chunk {chunk.index} ({chunk.get_kind_display()}: {', '.join(chunk.metrics)})"


def _reply_description(response_id: int) -> str:
    response = Response.objects.filter(pk=response_id).select_related("system", "context").first()
    if response is None:
        return f"reply {response_id} (since deleted)"
    return (
        f"reply {response_id} (system {response.system.name!r}, context {str(response.context)!r}): "
        f"{response.text[:80]!r}"
    )

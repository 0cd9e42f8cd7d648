"""What the scoring tasks do: plan a run and start its chunk workers; work on the next chunk and pass the
baton; run everything in this process (``score_study --sync``).

A run's work is done by chains of task messages per queue: each message claims one chunk, computes it, and
sends the next message of its chain while the queue still has claimable chunks of the run, so several
workers share a large run (``settings.DIALEVAL_SCORING_PARALLEL_CHUNKS`` chains per queue), a message is
one chunk (the per-chunk time limits are task time limits), and a lost message costs one chain, which the
other chains and the periodic recovery make up for.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone

from scoring.judges.answer_cache import answers_for_run
from scoring.models import RunStatus, ScoringChunk, ScoringRun
from scoring.selectors import scoring_run_progress
from scoring.services.chunk_claims import (
    ChunkLostError,
    chunk_claim_next,
    chunk_release,
    claimable_q,
    run_chunks_state,
)
from scoring.services.chunks import chunk_execute
from scoring.services.planning import scoring_run_plan
from scoring.services.queueing import CHUNK_TASK, gpu_worker_available, task_send
from scoring.services.run_finish import scoring_run_advance

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]  # (scores done, scores in total)


def scoring_run_start(*, run_id: int) -> None:
    """Plan the run if it is pending (a duplicate message finds it planned and does nothing more than
    starting chains), then start its chunk chains."""
    planned = scoring_run_plan(run_id=run_id, gpu_available=gpu_worker_available())
    if planned:
        scoring_run_advance(run_id=run_id)  # nothing to compute: finished at once
    chains_start(run_id=run_id, per_queue=settings.DIALEVAL_SCORING_PARALLEL_CHUNKS)


def chains_start(*, run_id: int, per_queue: int) -> int:
    """Send up to ``per_queue`` chunk messages for every queue with claimable chunks; the number sent."""
    if not ScoringRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists():
        return 0
    sent = 0
    for queue in queues_with_claimable_chunks(run_id=run_id):
        claimable = ScoringChunk.objects.filter(run_id=run_id, queue=queue).filter(claimable_q()).count()
        for _ in range(min(per_queue, claimable)):
            sent += task_send(CHUNK_TASK, args=[run_id, queue], queue=queue)
    if sent:
        ScoringRun.objects.filter(pk=run_id).update(enqueued_at=timezone.now())
    return sent


def queues_with_claimable_chunks(*, run_id: int) -> list[str]:
    """The queues that have a chunk of the run a worker could claim now (stage 1 only once stage 0 is done)."""
    return run_chunks_state(run_id=run_id).claimable_queues


def scoring_run_work(*, run_id: int, queue: str) -> bool:
    """Claim and compute one chunk of run ``run_id`` on ``queue``, then pass the baton: send the next
    message of this chain if the queue has more, and start chains on queues whose chunks became claimable
    (the blends, once every stage-0 chunk is done). Returns whether a chunk was computed."""
    claimed = chunk_claim_next(run_id=run_id, queue=queue)
    if claimed is None:
        scoring_run_advance(run_id=run_id)
        return False
    try:
        with answers_for_run(run_id):  # a judge's server answers are paid for by this run
            chunk_execute(claimed=claimed)
    except ChunkLostError:
        logger.warning("chunk %s of scoring run %s was taken over or cancelled", claimed.chunk.index, run_id)
        return False
    except SoftTimeLimitExceeded:
        chunk_release(
            claimed=claimed,
            reason=f"over the soft time limit of {settings.DIALEVAL_CHUNK_SOFT_TIME_LIMIT} s "
            "(DIALEVAL_CHUNK_SOFT_TIME_LIMIT); released for another attempt",
        )
        raise
    state = run_chunks_state(run_id=run_id)  # one query where finishing and passing the baton took three
    if not state.open:
        scoring_run_advance(run_id=run_id)
    for next_queue in state.claimable_queues:
        task_send(CHUNK_TASK, args=[run_id, next_queue], queue=next_queue)
    return True


def scoring_run_execute(*, run_id: int, progress: ProgressCallback | None = None) -> ScoringRun:
    """Plan and compute run ``run_id`` entirely in this process (the same chunks and writes as workers);
    return the run as it stands afterwards. Chunks held by live workers are left to them."""
    scoring_run_plan(run_id=run_id, gpu_available=False)
    scoring_run_advance(run_id=run_id)

    def report_progress() -> None:
        if progress is not None:
            state = scoring_run_progress(run=ScoringRun.objects.get(pk=run_id))
            progress(state.done, state.total)

    scoring_run_work_here(run_id=run_id, after_chunk=report_progress)
    scoring_run_advance(run_id=run_id)
    return ScoringRun.objects.get(pk=run_id)


def scoring_run_work_here(
    *,
    run_id: int,
    chunk_progress: Callable[[int], None] | None = None,
    after_chunk: Callable[[], None] | None = None,
) -> None:
    """Claim and compute run ``run_id``'s chunks in this process, one after the other, until none is
    claimable now; chunks that live workers hold are left to them. The run advances after every chunk;
    ``chunk_progress`` gets a chunk's units done at each heartbeat, ``after_chunk`` is called once a chunk
    is stored. ``score_study --sync`` and a report waiting for its values both work this way."""
    while (claimed := chunk_claim_next(run_id=run_id, queue=None)) is not None:
        try:
            with answers_for_run(run_id):
                chunk_execute(claimed=claimed, progress=chunk_progress)
        except ChunkLostError:
            logger.warning(
                "chunk %s of scoring run %s was taken over or cancelled", claimed.chunk.index, run_id
            )
            continue
        scoring_run_advance(run_id=run_id)
        if after_chunk is not None:
            after_chunk()

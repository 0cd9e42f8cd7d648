"""A chunk's heartbeat is kept by a thread while the chunk computes (kernel/lease_keeper.py), on a committed
database as in a worker: a computation that gives no progress for several stale periods (a fresh process
loading WordNet or a model) is not taken for a dead worker, while a lost or ended attempt's keeper writes
nothing and stops.

The chunk's computation is replaced by a body that sleeps without beating, then looks at the chunk as
another worker would: whether it may claim it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction

from kernel.lease import Lease
from kernel.lease_keeper import LeaseKeeper
from scoring.models import ChunkKind, ChunkStatus, ScoringChunk
from scoring.services import chunks
from scoring.services.chunk_claims import CHUNK_LEASE, claimable_q
from tests.factories import a_running_run_chunk

pytestmark = pytest.mark.django_db(transaction=True)

STALE_SECONDS = 0.6  # the keeper beats every 0.15 s (a quarter of it)


@pytest.fixture(autouse=True)
def short_stale_period(settings: Any) -> None:
    settings.DIALEVAL_RUN_STALE_SECONDS = STALE_SECONDS


def a_chunk(monkeypatch: pytest.MonkeyPatch, body: Callable[[chunks.ChunkFence], None]) -> ScoringChunk:
    """A running run with one replies chunk whose computation is ``body``."""
    chunk = a_running_run_chunk()

    def compute(chunk: Any, run: Any, fence: chunks.ChunkFence) -> chunks.ChunkOutcome:
        body(fence)
        return chunks.ChunkOutcome()

    monkeypatch.setitem(chunks.CHUNK_COMPUTERS, ChunkKind.REPLIES, compute)
    return chunk


def claimable_by_another_worker(chunk: ScoringChunk) -> bool:
    return ScoringChunk.objects.filter(claimable_q(), pk=chunk.pk).exists()


def test_a_chunk_silent_for_several_stale_periods_is_not_taken_for_dead(monkeypatch) -> None:
    seen: list[bool] = []

    def long_silent_load(fence: chunks.ChunkFence) -> None:
        for _ in range(4):  # four stale periods without a beat of the computation's own
            time.sleep(STALE_SECONDS)
            seen.append(claimable_by_another_worker(chunk))

    chunk = a_chunk(monkeypatch, long_silent_load)
    claimed = chunks.chunk_claim_next(run_id=chunk.run_id, queue=None)
    assert claimed is not None
    chunks.chunk_execute(claimed=claimed)

    assert seen == [False] * 4
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.DONE
    assert chunk.attempts == 1  # never taken over


def test_without_its_keeper_the_same_chunk_is_taken_for_dead(monkeypatch) -> None:
    """The test above can fail: with the keeper a no-op, the silent chunk goes stale."""
    seen: list[bool] = []

    def long_silent_load(fence: chunks.ChunkFence) -> None:
        time.sleep(2 * STALE_SECONDS)
        seen.append(claimable_by_another_worker(chunk))

    chunk = a_chunk(monkeypatch, long_silent_load)
    monkeypatch.setattr(LeaseKeeper, "_keep", lambda self: None)
    claimed = chunks.chunk_claim_next(run_id=chunk.run_id, queue=None)
    assert claimed is not None
    with contextlib.suppress(chunks.ChunkLostError):
        chunks.chunk_execute(claimed=claimed)
    assert seen == [True]


def test_a_cancelled_chunk_s_keeper_stops_and_the_computation_learns_it_at_its_next_beat(monkeypatch) -> None:
    keepers: list[LeaseKeeper] = []

    def cancelled_meanwhile(fence: chunks.ChunkFence) -> None:
        assert fence.keeper is not None
        keepers.append(fence.keeper)
        ScoringChunk.objects.filter(pk=chunk.pk).update(status=ChunkStatus.CANCELLED)
        deadline = time.monotonic() + 10 * STALE_SECONDS
        while not fence.keeper.lost and time.monotonic() < deadline:
            time.sleep(0.05)
        fence.beat(1)  # not forced: only the keeper's finding makes it raise

    chunk = a_chunk(monkeypatch, cancelled_meanwhile)
    claimed = chunks.chunk_claim_next(run_id=chunk.run_id, queue=None)
    assert claimed is not None
    with pytest.raises(chunks.ChunkLostError):
        chunks.chunk_execute(claimed=claimed)
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.CANCELLED  # nothing stored over the cancel
    assert keepers[0].lost
    assert not keepers[0].active


def test_the_keeper_writes_only_while_its_block_runs() -> None:
    chunk = a_running_run_chunk(units=1, status=ChunkStatus.RUNNING, attempts=1)
    lease = Lease(CHUNK_LEASE, chunk.pk, 1)
    with LeaseKeeper(lease, interval=0.05) as keeper:
        assert keeper.active
        time.sleep(0.5)
    beats = keeper.beats
    assert beats >= 3
    after = ScoringChunk.objects.get(pk=chunk.pk).heartbeat_at
    time.sleep(0.3)
    assert ScoringChunk.objects.get(pk=chunk.pk).heartbeat_at == after
    assert keeper.beats == beats
    assert not any(thread.name.startswith("lease-keeper-") for thread in threading.enumerate())


def test_inside_a_transaction_no_keeper_thread_is_started() -> None:
    """Another connection would wait on the uncommitted claim's row lock: the holder's beats stand alone."""
    chunk = a_running_run_chunk(units=1)
    with transaction.atomic(), LeaseKeeper(Lease(CHUNK_LEASE, chunk.pk, 1), interval=0.05) as keeper:
        assert not keeper.active
        time.sleep(0.2)
    assert keeper.beats == 0

"""Two workers' writes to one chunk at the same moment, on PostgreSQL: the one that commits second finds the
fence changed and writes nothing (kernel/lease.py, :func:`kernel.lease.fenced`).

Each test holds the first write's transaction open, starts the second write in another thread (its own
connection), waits until PostgreSQL shows that connection waiting for the row's lock, then commits the
first. PostgreSQL then checks the second UPDATE's WHERE again against the row as the first left it. A
filter that joined the run's table was written by Django as ``id IN (SELECT ... JOIN ...)``, which that
check does not read again: both claims took the chunk, each bumped ``attempts``, neither held it, and the
chunk's attempts ran out with no worker computing it (how the pool-kill fault test failed in CI).

SQLite takes one writer at a time for the whole database, so the second write starts only after the first
committed and these interleavings cannot happen there; the guard that refuses a joined fence runs on both.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.db.models import Q
from django.utils import timezone

from kernel.lease import JoinedFenceError, fenced, lease_claim
from scoring.models import ChunkStatus, RunStatus, ScoringChunk, ScoringRun
from scoring.services.chunk_claims import CHUNK_LEASE, ChunkLostError, ClaimedChunk, chunk_claim_next
from scoring.services.chunk_storage import chunk_store
from scoring.services.chunks import ChunkOutcome
from tests.factories import a_running_run_chunk

pytestmark = pytest.mark.django_db(transaction=True)

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="PostgreSQL lets a second writer wait on a row's lock and recheck; SQLite has one writer at once",
)


class SecondWriter:
    """``write`` in a thread of its own (its own connection); what it returned or raised."""

    def __init__(self, write: Callable[[], Any]) -> None:
        self.write = write
        self.pid: int | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                self.pid = cursor.fetchone()[0]
            self.result = self.write()
        except BaseException as error:  # reported to the test
            self.error = error
        finally:
            connections.close_all()

    def start_and_wait_for_the_lock(self) -> None:
        """Start, then return once PostgreSQL shows this writer waiting for a lock (at most 10 s)."""
        self.thread.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.pid is not None:
                with connections["default"].cursor() as cursor:
                    cursor.execute(
                        "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'",
                        [self.pid],
                    )
                    if cursor.fetchone() is not None:
                        return
            if not self.thread.is_alive():
                pytest.fail(f"the second writer did not wait for the first: {self.result!r} {self.error!r}")
            time.sleep(0.02)
        pytest.fail("the second writer never waited for the row's lock")

    def finished(self) -> SecondWriter:
        self.thread.join(timeout=20)
        assert not self.thread.is_alive(), "the second writer is still waiting"
        return self


@postgres_only
def test_of_two_claims_of_one_waiting_chunk_only_the_first_holds_it() -> None:
    chunk = a_running_run_chunk()
    second = SecondWriter(lambda: chunk_claim_next(run_id=chunk.run_id, queue=None))
    with transaction.atomic():
        first = chunk_claim_next(run_id=chunk.run_id, queue=None)
        assert first is not None
        assert first.attempt == 1
        second.start_and_wait_for_the_lock()  # it read the chunk as waiting, before the first committed
    second.finished()

    assert second.error is None
    assert second.result is None  # it found the chunk claimed: no second holder
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.RUNNING, 1)
    assert first.lease.write(units_done=2)  # the first claim holds what it claimed


@postgres_only
def test_a_takeover_that_commits_first_fences_out_the_silent_holders_result() -> None:
    long_ago = timezone.now() - timedelta(hours=1)  # the first holder's heartbeat went stale
    chunk = a_running_run_chunk(status=ChunkStatus.RUNNING, attempts=1, heartbeat_at=long_ago)
    silent = ClaimedChunk(chunk=chunk, attempt=1)
    second = SecondWriter(lambda: chunk_store(silent, chunk.run, ChunkOutcome()))
    with transaction.atomic():
        takeover = chunk_claim_next(run_id=chunk.run_id, queue=None)
        assert takeover is not None
        assert takeover.attempt == 2
        second.start_and_wait_for_the_lock()
    second.finished()

    assert isinstance(second.error, ChunkLostError)  # the silent holder stored nothing
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.RUNNING, 2)


def test_a_fence_that_joins_another_table_is_refused() -> None:
    chunk = a_running_run_chunk()
    through_the_run = Q(run__status=RunStatus.RUNNING)
    with pytest.raises(JoinedFenceError, match="ScoringChunk filters through another table"):
        fenced(ScoringChunk.objects.filter(through_the_run, pk=chunk.pk))
    with pytest.raises(JoinedFenceError):
        lease_claim(CHUNK_LEASE, chunk.pk, where=through_the_run)
    with pytest.raises(JoinedFenceError):
        ClaimedChunk(chunk=chunk, attempt=0).lease.write(where=through_the_run, units_done=1)
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts, chunk.units_done) == (ChunkStatus.PENDING, 0, 0)  # nothing written
    own_columns = Q(run_id__in=ScoringRun.objects.filter(status=RunStatus.RUNNING).values("pk"))
    assert fenced(ScoringChunk.objects.filter(own_columns, pk=chunk.pk)).count() == 1

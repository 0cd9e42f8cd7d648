"""A lease's heartbeat kept from a thread of the holder's process, so that silence means a dead process.

A holder beats its lease between steps of its work. A step that runs long without a beat (loading WordNet or
a model in a fresh pool process, one slow metric call on a loaded machine) made a live holder look dead:
after the stale period another attempt took the work over, and a run whose takeovers used every attempt
failed though no process had died. :class:`LeaseKeeper` writes the heartbeat every ``interval`` seconds from
a daemon thread while the holder works. A holder that dies (SIGKILL, the out-of-memory killer, Celery's hard
time limit) takes its keeper with it, and its heartbeat goes stale as before; a holder that hangs is stopped
by the hard time limit, which kills the process.

The keeper writes through the lease (the fence): once the attempt lost its work (taken over, cancelled,
finished) it writes nothing, records :attr:`LeaseKeeper.lost` and stops; the holder learns it at its own
next beat. It writes ``heartbeat_at`` only; progress stays the holder's.

The keeper needs its own database connection to see the claim. Inside a transaction (a test's, or a caller's
``atomic`` block) the claim is not committed, another connection would wait on its row lock (PostgreSQL) or
find the table locked (SQLite), so no thread is started there and the holder's own beats are the heartbeat.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType

from django.db import connection, connections
from django.utils import timezone

from kernel.lease import Lease

logger = logging.getLogger(__name__)


class LeaseKeeper:
    """``with LeaseKeeper(lease, interval=s):`` keeps ``lease``'s heartbeat fresh while the block runs."""

    def __init__(self, lease: Lease, *, interval: float) -> None:
        self.lease = lease
        self.interval = max(0.05, float(interval))
        self.lost = False  # the attempt lost its work: the keeper stopped; the holder stops at its next beat
        self.beats = 0  # heartbeats the keeper wrote
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def active(self) -> bool:
        """Whether a thread keeps the heartbeat (not inside a transaction)."""
        return self._thread is not None

    def __enter__(self) -> LeaseKeeper:
        if not connection.in_atomic_block:
            self._thread = threading.Thread(
                target=self._keep, name=f"lease-keeper-{self.lease.pk}-{self.lease.attempt}", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _keep(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    held = self.lease.write(heartbeat_at=timezone.now())
                except Exception:  # the database is busy or gone: tried again at the next interval
                    logger.warning("the heartbeat keeper of %s could not write", self.lease, exc_info=True)
                    connections.close_all()  # a broken connection is opened afresh
                    continue
                if not held:
                    self.lost = True
                    return
                self.beats += 1
        finally:
            connections.close_all()  # this thread's connections only (they are per thread)

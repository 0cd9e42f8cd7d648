"""Waiting for work done elsewhere (a Celery worker, another process, a training) for as long as it moves.

A fixed budget ("done within 60 s") fails a test on a loaded machine whose work is merely slow, and lets a
hung one sit out the whole budget. ``wait_until`` waits for a cause instead: while the watched progress (a
job's units done or heartbeat, a worker log's size, a row count) keeps changing and the process doing the
work is alive, it keeps waiting; it fails, naming what it waited for and the last progress seen, once the
progress has stood still for ``stall_seconds`` or the process died. A generous ceiling stays as the last
resort against progress that never ends.

pytest-timeout's limit (300 s in pyproject.toml) still bounds the whole test; a test whose waits may run
longer on a loaded machine carries ``WAITS_ON_PROGRESS``, a limit past the ceiling of its waits, so that
the waits' own failures (a stall, a dead process) are what ends it.

``watched_training`` does the same for a training run in a fixture: the trainer's progress reports re-arm
a stall alarm, and the tests that use such a fixture carry ``TRAINING_FIXTURE_TIMEOUT``, whose limit counts
the test's body only (pytest-timeout counts a fixture's setup into the first test that requests it).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TypeVar

import pytest

if TYPE_CHECKING:
    from scoring.metrics.training_progress import TrainingReport

T = TypeVar("T")

STALL_SECONDS = 60.0  # no change in the watched progress for this long: the work is stuck, not slow
# The last resort, for progress that never ends. Not much longer than a slow wait on a loaded machine: a
# worker that keeps failing keeps its log growing, which reads as progress, and a whole suite must not
# spend a quarter of an hour finding out.
CEILING_SECONDS = 360.0
WAITS_ON_PROGRESS = pytest.mark.timeout(2 * CEILING_SECONDS)
TEST_BODY_SECONDS = 300  # pyproject.toml's timeout, for the body of a test whose fixture trains a model
TRAINING_FIXTURE_TIMEOUT = pytest.mark.timeout(TEST_BODY_SECONDS, func_only=True)

_UNSEEN = object()


def wait_until(
    condition: Callable[[], T],
    *,
    what: str,
    progress: Callable[[], object] | None = None,
    stall_seconds: float = STALL_SECONDS,
    ceiling_seconds: float = CEILING_SECONDS,
    alive: Callable[[], bool] | None = None,
    poll: float = 0.1,
    details: Callable[[], str] | None = None,
) -> T:
    """Poll ``condition`` until it returns something true, and return that.

    ``progress()`` is sampled at every poll; each change starts ``stall_seconds`` afresh. Without a
    ``progress``, ``stall_seconds`` is the whole budget (a wait with nothing to watch). ``alive()`` is the
    process that does the work: once it is false (and the condition still is), waiting longer is pointless.
    ``details()`` (a worker's log) is appended to the failure.
    """
    started = time.monotonic()
    moved = started
    last: object = _UNSEEN
    while True:
        result = condition()
        if result:
            return result
        now = time.monotonic()
        if progress is not None:
            seen = progress()
            if seen != last:
                last, moved = seen, now
        reason = ""
        if alive is not None and not alive():
            result = condition()  # it may have finished just before it exited
            if result:
                return result
            reason = "the process doing the work died"
        elif now - moved > stall_seconds:
            reason = (
                f"no progress for {stall_seconds:.0f} s"
                if progress is not None
                else f"not within {stall_seconds:.0f} s (nothing to watch)"
            )
        elif now - started > ceiling_seconds:
            reason = f"still progressing, but past the ceiling of {ceiling_seconds:.0f} s"
        if reason:
            seen_text = "" if last is _UNSEEN else f"; last progress seen: {last!r}"
            extra = f"\n{details()}" if details is not None else ""
            pytest.fail(f"{what}: {reason} ({now - started:.0f} s in all{seen_text}){extra}")
        time.sleep(poll)


def cpu_ticks(pid: int) -> int:
    """The CPU time (clock ticks) used so far by process ``pid`` and its descendants, 0 once it is gone: a
    progress value for a process that neither logs nor writes while it computes."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            for children in Path(f"/proc/{current}/task").glob("*/children"):  # the children of each thread
                pending.extend(int(child) for child in children.read_text().split())
        except (OSError, IndexError, ValueError):
            continue  # gone between the listing and the read
        # utime, stime, and the same of its children that have ended: fields 14 to 17 of proc(5)
        total += sum(int(field) for field in fields[11:15])
    return total


@contextmanager
def watched_training(
    what: str, *, stall_seconds: float = STALL_SECONDS, ceiling_seconds: float = CEILING_SECONDS
) -> Iterator[Callable[[TrainingReport], None]]:
    """``with watched_training("RUBER") as on_progress: train_ruber(..., on_progress=on_progress)``.

    The training may take as long as it keeps reporting: every report re-arms a SIGALRM alarm of
    ``stall_seconds``; when it rings, the training is interrupted (``pytest.fail``, in the thread that
    trains) with the last report in the message. A
    report past ``ceiling_seconds`` in all stops it too. When another alarm is already armed (pytest-timeout's
    own, for a test that does not carry ``TRAINING_FIXTURE_TIMEOUT``), that one bounds the training instead
    and only the ceiling is checked here.
    """
    started = time.monotonic()
    last: list[TrainingReport | None] = [None]

    def describe() -> str:
        report = last[0]
        seen = "no report yet" if report is None else f"last report: {report}"
        return f"{what}: {seen}, {time.monotonic() - started:.0f} s in all"

    own_alarm = signal.getitimer(signal.ITIMER_REAL)[0] == 0.0 and hasattr(signal, "SIGALRM")

    def ring(signum: int, frame: FrameType | None) -> None:
        pytest.fail(f"no training progress for {stall_seconds:.0f} s ({describe()})")

    def on_progress(report: TrainingReport) -> None:
        last[0] = report
        if time.monotonic() - started > ceiling_seconds:
            pytest.fail(f"still training past the ceiling of {ceiling_seconds:.0f} s ({describe()})")
        if own_alarm:
            signal.setitimer(signal.ITIMER_REAL, stall_seconds)

    if not own_alarm:
        yield on_progress
        return
    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, stall_seconds)
    try:
        yield on_progress
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

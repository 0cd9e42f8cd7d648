"""tests/waiting.py: a wait goes on while its progress moves and fails, saying why, when it stops moving."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import pytest

from scoring.metrics.training_progress import TrainingReport
from tests.waiting import wait_until, watched_training


def test_the_wait_returns_what_the_condition_returned() -> None:
    answers = iter([None, None, {"fresh": True}])

    assert wait_until(lambda: next(answers), what="a status", poll=0.001) == {"fresh": True}


def test_moving_progress_keeps_the_wait_going_past_the_stall_time() -> None:
    started = time.monotonic()
    counter = itertools.count()

    waited = wait_until(
        lambda: time.monotonic() - started > 0.3,
        what="a slow job",
        progress=lambda: next(counter),  # a new value at every poll
        stall_seconds=0.05,
        poll=0.01,
    )

    assert waited
    assert time.monotonic() - started > 0.3


def test_progress_that_stands_still_fails_the_wait_naming_what_and_the_last_progress() -> None:
    with pytest.raises(pytest.fail.Exception) as failure:
        wait_until(
            lambda: False,
            what="run 7 to finish",
            progress=lambda: ("running", 12),
            stall_seconds=0.05,
            poll=0.01,
            details=lambda: "worker log tail",
        )

    message = str(failure.value)
    assert message.startswith("run 7 to finish: no progress for 0 s")
    assert "last progress seen: ('running', 12)" in message
    assert message.endswith("\nworker log tail")


def test_a_dead_process_ends_the_wait_at_once() -> None:
    started = time.monotonic()

    with pytest.raises(pytest.fail.Exception, match="the import: the process doing the work died"):
        wait_until(lambda: False, what="the import", alive=lambda: False, stall_seconds=60, poll=0.01)

    assert time.monotonic() - started < 5


def test_the_condition_is_asked_once_more_when_the_process_has_exited() -> None:
    answers = iter([False, True])

    assert wait_until(lambda: next(answers), what="a job", alive=lambda: False, poll=0.01)


def test_the_ceiling_ends_progress_that_never_ends() -> None:
    counter = itertools.count()

    with pytest.raises(pytest.fail.Exception, match="past the ceiling of 0 s"):
        wait_until(
            lambda: False, what="a job", progress=lambda: next(counter), ceiling_seconds=0.05, poll=0.01
        )


def test_without_progress_the_stall_time_is_the_whole_budget() -> None:
    with pytest.raises(pytest.fail.Exception, match=r"a file: not within 0 s \(nothing to watch\)"):
        wait_until(lambda: False, what="a file", stall_seconds=0.05, poll=0.01)


@pytest.mark.timeout(0)  # no pytest-timeout alarm: the watch arms its own
def test_a_training_that_keeps_reporting_runs_past_the_stall_time() -> None:
    with watched_training("tiny", stall_seconds=0.2) as on_progress:
        for step in range(6):
            time.sleep(0.1)
            on_progress(TrainingReport("batch", step=step, steps=6))


def hanging_training(on_progress: Callable[[TrainingReport], None]) -> None:
    on_progress(TrainingReport("epoch", epoch=1, epochs=3))
    time.sleep(5)  # a step that hangs


@pytest.mark.timeout(0)  # no pytest-timeout alarm: the watch arms its own
def test_a_training_that_stops_reporting_is_interrupted_with_its_last_report() -> None:
    started = time.monotonic()
    with (
        watched_training("tiny RUBER", stall_seconds=0.2) as on_progress,
        pytest.raises(pytest.fail.Exception) as failure,
    ):
        hanging_training(on_progress)

    message = str(failure.value)
    assert message.startswith(
        "no training progress for 0 s (tiny RUBER: last report: TrainingReport(stage='epoch'"
    )
    assert time.monotonic() - started < 4  # interrupted, not slept out

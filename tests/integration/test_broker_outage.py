"""Redis going away and coming back: web requests answer at once, the worker reconnects.

The outage tests stop a private redis-server (tests/live_services.RedisProcess, append-only file on, as
under `make run`), never the session's shared one. The outage here is 10 s to keep the suite fast; the
worker's reconnect attempts are 2, 4, 6 s apart, so it reconnects about 12 s after Redis went away.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.urls import reverse

from config.celery_app import app
from correlation.models import ReportSnapshot, SnapshotStatus
from kernel.broker import task_publish
from tests.correlation.builders import Item, add_items, signature
from tests.factories import QuestionFactory, StudyFactory
from tests.live_services import CeleryWorkerProcess, RedisProcess, celery_broker, free_port
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

PROMPT_SECONDS = 3.0  # what "answers at once" means here; Celery's own retry=False path takes about 6 s
OUTAGE_SECONDS = 10.0
RECONNECT_TIMEOUT = 30.0  # the log standing still this long: no reconnect attempt is being made
RECONNECT_CEILING = 180.0
MISSING_SNAPSHOT = 2**31 - 1  # a report task for no snapshot: the worker claims nothing and succeeds


def closed_url() -> str:
    return f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there


def timed(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    started = time.monotonic()
    result = call(*args, **kwargs)
    return result, time.monotonic() - started


def test_task_publish_returns_false_at_once_when_redis_is_unreachable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with celery_broker(closed_url()), caplog.at_level(logging.WARNING, logger="kernel.broker"):
        first, first_seconds = timed(task_publish, "correlation.build_report", args=[1], queue="cpu")
        second, second_seconds = timed(task_publish, "correlation.build_report", args=[2], queue="cpu")

    assert (first, second) == (False, False)
    assert first_seconds < PROMPT_SECONDS, f"{first_seconds:.1f} s"
    assert second_seconds < PROMPT_SECONDS, f"{second_seconds:.1f} s"
    assert sum("could not queue correlation.build_report" in r.getMessage() for r in caplog.records) == 2


def test_report_page_and_its_status_poll_answer_at_once_while_redis_is_down(
    transactional_db: None, client: Client, settings: Any
) -> None:
    settings.DIALEVAL_REPORT_INLINE_MAX_CELLS = 0  # every report goes to a worker: each view queues one
    settings.DIALEVAL_REPORT_INLINE_MAX_PAIRS = 0
    settings.DIALEVAL_REPORT_STALE_SECONDS = 0  # and every poll queues it again, as after a long outage
    study = StudyFactory.create()
    question = QuestionFactory.create(study=study, name="appropriateness")
    bleu = signature("bleu-2")
    add_items(
        study=study,
        question=question,
        items=[Item("hred", ratings=(2, 1), scores={bleu.text: 0.4}), Item("human", ratings=(0, 1))],
    )
    client.force_login(study.owner)

    with celery_broker(closed_url()):
        page, page_seconds = timed(client.get, reverse("correlation:study-report", args=[study.pk]))
        polls = [
            timed(client.get, reverse("correlation:study-report-status", args=[study.pk])) for _ in range(3)
        ]

    assert page.status_code == 200
    assert page_seconds < PROMPT_SECONDS, f"page: {page_seconds:.1f} s"
    for poll, seconds in polls:
        assert poll.status_code == 200
        assert "no worker could be reached" in poll.json()["error"]
        assert seconds < PROMPT_SECONDS, f"status.json: {seconds:.1f} s"
    assert ReportSnapshot.objects.get(study=study).status == SnapshotStatus.PENDING  # queued at the next view


@pytest.fixture
def private_stack(
    transactional_db: None, tmp_path: Path
) -> Iterator[tuple[RedisProcess, CeleryWorkerProcess]]:
    """A Redis of its own (the test stops it) and a worker on it, with this process publishing there."""
    redis = RedisProcess(tmp_path)
    redis.start()
    worker = CeleryWorkerProcess(
        redis_url=redis.url,
        database=dict(django_settings.DATABASES["default"]),
        log_path=tmp_path / "worker.log",
    )
    try:
        worker.start()
        with celery_broker(redis.url):
            yield redis, worker
    finally:
        worker.stop()
        redis.stop()


def log_since(worker: CeleryWorkerProcess, offset: int) -> str:
    return worker.log_path.read_bytes()[offset:].decode(errors="replace")


def wait_for_log(worker: CeleryWorkerProcess, offset: int, text: str, *, count: int = 1) -> None:
    """Until the worker has logged ``text`` ``count`` times since ``offset``: for as long as its log grows
    (each reconnect attempt is logged) and it lives, up to a ceiling: a worker that never reconnects but
    keeps trying is stuck too."""
    wait_until(
        lambda: log_since(worker, offset).count(text) >= count,
        what=f"{text!r} in the worker's log",
        progress=worker.log_size,
        stall_seconds=RECONNECT_TIMEOUT,
        ceiling_seconds=RECONNECT_CEILING,
        alive=worker.is_alive,
        details=lambda: f"exit status {worker.process and worker.process.poll()}\n{worker.log()}",
    )


def ping(worker: CeleryWorkerProcess) -> list[str]:
    """The names of the workers that answer ``celery inspect ping`` (this worker's only, by its name)."""
    name = worker.hostname.replace("%h", socket.gethostname())
    replies = app.control.ping(destination=[name], timeout=2.0) or []
    return [node for reply in replies for node in reply]


def test_a_worker_survives_a_redis_restart_and_consumes_again(
    private_stack: tuple[RedisProcess, CeleryWorkerProcess],
) -> None:
    redis, worker = private_stack
    done = "correlation.build_report["
    offset = worker.log_path.stat().st_size
    assert task_publish("correlation.build_report", args=[MISSING_SNAPSHOT], queue="cpu")
    wait_for_log(worker, offset, "succeeded in")  # the connections of both sides are in use

    redis.stop()
    outage_started = time.monotonic()
    sent, seconds = timed(task_publish, "correlation.build_report", args=[MISSING_SNAPSHOT], queue="cpu")
    assert sent is False  # a pooled connection to a Redis that went away: refused at once, not retried
    assert seconds < PROMPT_SECONDS, f"{seconds:.1f} s"
    time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - outage_started)))
    assert worker.is_alive(), worker.log()
    assert "Cannot connect to redis" in log_since(worker, offset), worker.log()

    reconnect_offset = worker.log_path.stat().st_size
    redis.start()
    wait_for_log(worker, reconnect_offset, "Connected to redis://")
    assert task_publish("correlation.build_report", args=[MISSING_SNAPSHOT], queue="cpu")
    wait_for_log(worker, reconnect_offset, "succeeded in")

    assert worker.is_alive(), worker.log()
    assert ping(worker) == [worker.hostname.replace("%h", socket.gethostname())], worker.log()
    after = log_since(worker, reconnect_offset)
    assert done in after, worker.log()
    assert "Unrecoverable error" not in after, worker.log()

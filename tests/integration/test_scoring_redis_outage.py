"""Redis stopped for 30 s (SIGTERM, as a restart would) while a run scores: the busy worker
survives and goes on, a run started during the outage stays pending saying so and starts once Redis is
back, and the app's pages answer throughout."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from scoring.models import ChunkStatus, RunStatus, ScoringChunk, ScoringRun
from scoring.services import scoring_run_create
from tests.integration.test_scoring_faults import (
    STALE_SECONDS,
    Stack,
    assert_scored_exactly_once,
    build_study,
    finished,
    wait_for,
)
from tests.live_services import celery_broker
from tests.waiting import WAITS_ON_PROGRESS

pytestmark = [pytest.mark.integration, WAITS_ON_PROGRESS]

OUTAGE_SECONDS = 30.0


@pytest.mark.django_db(transaction=True)
def test_a_30_second_redis_outage_mid_run(tmp_path: Path, settings: Any, researcher: Any) -> None:
    settings.DIALEVAL_RUN_STALE_SECONDS = STALE_SECONDS
    stack = Stack(tmp_path)
    try:
        settings.CELERY_BROKER_URL = settings.REDIS_URL = stack.redis.url
        with celery_broker(stack.redis.url):
            _outage(stack, researcher)
    finally:
        stack.close()


def _outage(stack: Stack, researcher: Any) -> None:
    study = build_study(contexts=150)
    study.owner = researcher
    study.save()
    worker_pid = stack.worker.process.pid if stack.worker.process else None
    run = scoring_run_create(
        study=study, metrics=["bleu-1", "bleu-2", "bleu-3", "bleu-4", "rouge-l", "meteor"]
    )
    wait_for(
        lambda: ScoringChunk.objects.filter(run=run, status=ChunkStatus.DONE).count() >= 2,
        run=run,
        stack=stack,
        what="two chunks done",
    )

    stack.redis.stop()
    down_at = time.monotonic()
    client = Client()
    client.force_login(researcher)
    pages = 0
    during: ScoringRun | None = None
    while time.monotonic() - down_at < OUTAGE_SECONDS:
        response = client.get(f"/studies/{study.pk}/")
        assert response.status_code == 200, response.content[:500]
        pages += 1
        if during is None:  # a run started while the broker is down: pending, saying so, not FAILED
            during = scoring_run_create(study=study, metrics=["distinct-1", "distinct-2"])
            during.refresh_from_db()
            assert during.status == RunStatus.PENDING
            assert during.notes.startswith("not queued yet: the task broker (Redis) is unreachable")
        time.sleep(1.0)
    stack.redis.start()
    assert pages >= 10
    assert during is not None

    for each in (run, during):
        wait_for(
            finished(each),
            run=each,
            stack=stack,
            what=f"run {each.pk} after the outage",
        )
    assert stack.worker.is_alive(), stack.logs()
    assert stack.worker.process is not None
    assert stack.worker.process.pid == worker_pid  # the same worker went on: it never exited
    assert_scored_exactly_once(run, study)
    during.refresh_from_db()
    assert during.status == RunStatus.SUCCEEDED, during.error

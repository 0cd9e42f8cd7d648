"""A judge's run on a real llama.cpp server, killed mid-way (SIGKILL of the whole worker) and resumed: the
server is asked for no answered item twice, since every answer is kept the moment it arrives."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotation.models import Study
from scoring.judges.definitions import JudgeRequest, judge_metric_names
from scoring.models import JudgeAnswer, MetricScore, RunStatus, ScoringRun
from scoring.services import scoring_run_create
from tests.factories import DialogContextFactory, QuestionFactory, ResponseFactory, StudyFactory
from tests.integration.test_scoring_faults import RECOVERY_DEADLINE, STALE_SECONDS, Stack, wait_for
from tests.live_services import LlamaServer, celery_broker
from tests.waiting import WAITS_ON_PROGRESS, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.language_model, WAITS_ON_PROGRESS]

REPLIES = 16
CHUNK_SIZE = 4  # replies per chunk: a worker holds at most two chunks at once (2 pool processes)
CONCURRENCY = 1  # requests at once per chunk


@pytest.fixture
def judge_stack(
    transactional_db: None, tmp_path: Path, settings, llama_server: LlamaServer
) -> Iterator[tuple[Stack, LlamaServer]]:
    endpoints = [
        {"name": "llama", "base_url": llama_server.base_url, "model": "smollm2", "concurrency": CONCURRENCY}
    ]
    settings.DIALEVAL_LLM_ENDPOINTS = endpoints
    settings.DIALEVAL_RUN_STALE_SECONDS = STALE_SECONDS
    running = Stack(
        tmp_path,
        worker_env={
            "DIALEVAL_LLM_ENDPOINTS": json.dumps(endpoints),
            "DIALEVAL_SCORING_CHUNK_SIZE": str(CHUNK_SIZE),
        },
    )
    try:
        with celery_broker(running.redis.url):
            yield running, llama_server
    finally:
        running.close()


def _study() -> Study:
    study = StudyFactory.create()
    QuestionFactory.create(study=study, prompt="How appropriate is the reply?")
    for index in range(REPLIES):
        context = DialogContextFactory.create(study=study, position=index)
        ResponseFactory.create(context=context, text=f"reply number {index}: that sounds fine to me.")
    return study


def test_a_killed_judge_run_asks_the_server_no_answered_item_twice(
    judge_stack: tuple[Stack, LlamaServer],
) -> None:
    stack, server = judge_stack
    study = _study()
    names = judge_metric_names(
        study=study, requests=[JudgeRequest("single-answer", "server", "llama")], user=None
    )
    before = server.requests()
    run = scoring_run_create(study=study, metrics=names)
    wait_until(
        lambda: server.requests() - before >= CHUNK_SIZE + 1,
        what="the server to answer a chunk and more",
        progress=server.requests,
        alive=stack.worker.is_alive,
        details=stack.logs,
    )
    stack.worker.kill_group()
    killed_at = time.monotonic()
    answered_before_the_kill = JudgeAnswer.objects.count()
    stack.worker.start()
    wait_for(lambda: ScoringRun.objects.get(pk=run.pk).is_finished, run=run, stack=stack, what="the run")
    assert time.monotonic() - killed_at < RECOVERY_DEADLINE

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert 0 < answered_before_the_kill < REPLIES  # the kill came mid-way
    assert MetricScore.objects.filter(signature__name=names[0]).count() == REPLIES
    assert JudgeAnswer.objects.count() == REPLIES  # one answer kept per item
    # Only the requests in flight when the worker died (one per chunk held, two chunks at most) are asked again.
    asked = server.requests() - before
    assert REPLIES <= asked <= REPLIES + 2 * CONCURRENCY, stack.logs()

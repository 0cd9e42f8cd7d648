"""Scoring through a real Redis broker and a real Celery worker process (no eager mode, no mocks)."""

from __future__ import annotations

import time
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Response, Study
from scoring.metrics.registry import compute_metrics
from scoring.models import ChunkStatus, MetricScore, RunStatus, ScoringChunk, ScoringRun
from scoring.services import scoring_run_create, scoring_runs_recover
from scoring.services.execution import chains_start
from scoring.services.planning import scoring_run_plan
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)
from tests.live_services import WORKER_STALE_SECONDS, CeleryWorkerProcess
from tests.waiting import WAITS_ON_PROGRESS, wait_until

pytestmark = [pytest.mark.integration, WAITS_ON_PROGRESS]


def build_study(contexts: int = 4) -> Study:
    study = StudyFactory.create()
    systems = [SystemFactory.create(study=study, name=name) for name in ("echo", "other")]
    for index in range(contexts):
        context = DialogContextFactory.create(study=study, position=index)
        ReferenceFactory.create(context=context, text=f"i am fine , thank you {index} .", origin="original")
        ReferenceFactory.create(context=context, text="not bad , and you ?", origin="collected")
        ResponseFactory.create(context=context, system=systems[0], text=f"i am fine , thank you {index} .")
        ResponseFactory.create(context=context, system=systems[1], text="not too bad , you ?")
    return study


def scoring_run_progress(run_id: int) -> tuple[object, ...]:
    """What moves while a run is worked on: its status and scores done, and each chunk's state, units done,
    attempts and heartbeat (a running chunk beats while it computes)."""
    run = ScoringRun.objects.get(pk=run_id)
    chunks = ScoringChunk.objects.filter(run_id=run_id).order_by("index")
    return (
        run.status,
        run.progress_done,
        tuple(chunks.values_list("status", "units_done", "attempts", "heartbeat_at")),
    )


def wait_until_finished(run: ScoringRun, worker: CeleryWorkerProcess) -> ScoringRun:
    """Until the run is finished, for as long as it or the worker's log moves and the worker lives."""
    wait_until(
        lambda: ScoringRun.objects.get(pk=run.pk).is_finished,
        what=f"run {run.pk} to finish",
        progress=lambda: (scoring_run_progress(run.pk), worker.log_size()),
        alive=worker.is_alive,
        poll=0.2,
        details=worker.log,
    )
    run.refresh_from_db()
    return run


def expected_scores(study: Study, metrics: list[str]) -> dict[tuple[int, str], float | None]:
    """What the metric core gives for every response with all of its context's references."""
    responses = list(Response.objects.filter(context__study=study).prefetch_related("context__references"))
    references = [[r.text for r in response.context.references.all()] for response in responses]
    scores = compute_metrics(
        metrics, [r.text for r in responses], references, [r.context.query for r in responses], "en"
    )
    return {(response.pk, name): scores[name][i] for name in metrics for i, response in enumerate(responses)}


def test_a_queued_run_is_scored_by_the_worker(celery_worker_process: CeleryWorkerProcess) -> None:
    study = build_study()
    metrics = ["bleu-1", "bleu-2", "bleu-4"]

    run = scoring_run_create(study=study, metrics=metrics, references="multi")  # enqueued on commit

    run = wait_until_finished(run, celery_worker_process)
    assert run.status == RunStatus.SUCCEEDED, f"{run.error}\n{celery_worker_process.log()}"
    assert run.progress_done == run.progress_total == 24  # scores: 8 replies x 3 metrics
    assert run.attempts == 1
    assert set(run.timings) == set(metrics)
    stored = {
        (score.response_id, score.signature.name): score.value
        for score in MetricScore.objects.filter(response__context__study=study).select_related("signature")
    }
    expected = expected_scores(study, metrics)
    assert stored.keys() == expected.keys()
    for key, value in expected.items():
        assert stored[key] == pytest.approx(value, abs=1e-12), key
    log = celery_worker_process.log()
    assert "scoring.execute_run" in log
    assert "scoring.work_on_run" in log


def test_a_chunk_whose_worker_died_is_taken_over_once_stale(
    celery_worker_process: CeleryWorkerProcess,
) -> None:
    """A chunk RUNNING with a fresh heartbeat (its worker died a moment ago) is left alone until it is
    stale (5 s for the test worker), then the periodic recovery gives it to a live worker."""
    study = build_study(contexts=2)
    run = scoring_run_create(study=study, metrics=["bleu-2", "rouge-l"], enqueue=False)
    assert scoring_run_plan(run_id=run.pk)
    dead = ScoringChunk.objects.filter(run=run).earliest("index")
    ScoringChunk.objects.filter(pk=dead.pk).update(
        status=ChunkStatus.RUNNING, attempts=1, started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    started = time.monotonic()
    chains_start(run_id=run.pk, per_queue=2)  # the other chunk is computed at once

    def recovered_and_finished() -> bool:  # this test process plays Celery beat
        scoring_runs_recover()
        return ScoringRun.objects.get(pk=run.pk).is_finished

    wait_until(
        recovered_and_finished,
        what=f"run {run.pk} to finish once its dead chunk is taken over",
        progress=lambda: (scoring_run_progress(run.pk), celery_worker_process.log_size()),
        alive=celery_worker_process.is_alive,
        poll=0.5,
        details=celery_worker_process.log,
    )
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, f"{run.error}\n{celery_worker_process.log()}"
    dead.refresh_from_db()
    assert dead.attempts == 2
    assert time.monotonic() - started >= WORKER_STALE_SECONDS - 1  # it waited for the heartbeat to go stale
    assert MetricScore.objects.filter(response__context__study=study).count() == 8


def test_score_study_command_follows_a_run_on_the_worker(celery_worker_process: CeleryWorkerProcess) -> None:
    study = build_study(contexts=2)
    out = StringIO()

    call_command(
        "score_study", study.name, "--metrics", "bleu-1", "--poll", "0.2", "--timeout", "60", stdout=out
    )

    run = ScoringRun.objects.get(study=study)
    assert run.status == RunStatus.SUCCEEDED, celery_worker_process.log()
    assert f"run {run.pk} succeeded: 4 scores: 4 replies x 1 metric in " in out.getvalue()
    assert MetricScore.objects.filter(response__context__study=study).count() == 4


def test_a_starting_worker_recovers_runs_whose_message_was_lost(
    celery_worker_process: CeleryWorkerProcess,
) -> None:
    """Runs with no task message (a broker restarted empty) are sent again when a worker starts: a pending
    run never sent, and a running run whose chunk's worker died long ago."""
    study = build_study(contexts=2)
    long_ago = timezone.now() - timedelta(minutes=10)
    orphaned = scoring_run_create(study=study, metrics=["bleu-1"], references="single", enqueue=False)
    stale = scoring_run_create(study=study, metrics=["bleu-2"], references="single", enqueue=False)
    ScoringRun.objects.filter(pk=orphaned.pk).update(created_at=long_ago)
    assert scoring_run_plan(run_id=stale.pk)
    ScoringChunk.objects.filter(run=stale).update(
        status=ChunkStatus.RUNNING, attempts=1, heartbeat_at=long_ago
    )
    ScoringRun.objects.filter(pk=stale.pk).update(created_at=long_ago, enqueued_at=long_ago)

    celery_worker_process.stop()
    celery_worker_process.start()

    for run in (orphaned, stale):
        finished = wait_until_finished(run, celery_worker_process)
        assert finished.status == RunStatus.SUCCEEDED, f"{finished.error}\n{celery_worker_process.log()}"
        assert finished.progress_done == 4
    assert ScoringChunk.objects.get(run=stale).attempts == 2  # taken over, not started from nothing

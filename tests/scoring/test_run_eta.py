"""The time left of a scoring run: the study page said "about 15 min left" at 20 of 5,020 scores,
10 s before the run ended, because the rate was measured from the first partial chunk (model loading
included) since the run started. The estimate now waits until a few chunks are done, says "estimating…"
until then, and measures the scores done per second since the work began."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from scoring.models import ChunkStatus, RunStatus, ScoringChunk, ScoringRun
from scoring.selectors import ETA_CHUNKS, scoring_run_progress
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db

TOTAL = 5020
UNITS = 100  # scores per chunk


def running_run() -> ScoringRun:
    now = timezone.now()
    run = ScoringRun.objects.create(
        study=StudyFactory.create(),
        status=RunStatus.RUNNING,
        started_at=now - timedelta(seconds=60),  # it waited for a worker first: not part of the rate
        progress_total=TOTAL,
    )
    for index in range(TOTAL // UNITS + 1):
        ScoringChunk.objects.create(run=run, index=index, units=min(UNITS, TOTAL - index * UNITS))
    return run


def work(run: ScoringRun, *, finished: int, seconds_each: float, partial: int) -> float:
    """Chunks 0..finished-1 done one after the other, each in ``seconds_each``, ending now, and the next one
    running with ``partial`` scores reported; returns when the first chunk started (seconds ago)."""
    now = timezone.now()
    began = finished * seconds_each + (seconds_each if partial else 0)
    chunks = list(ScoringChunk.objects.filter(run=run).order_by("index"))
    for position, chunk in enumerate(chunks[:finished]):
        chunk.status = ChunkStatus.DONE
        chunk.units_done = chunk.units
        chunk.started_at = now - timedelta(seconds=began - position * seconds_each)
        chunk.finished_at = chunk.started_at + timedelta(seconds=seconds_each)
        chunk.save()
    if partial:
        running = chunks[finished]
        running.status = ChunkStatus.RUNNING
        running.units_done = partial
        running.started_at = now - timedelta(seconds=seconds_each)
        running.save()
    ScoringRun.objects.filter(pk=run.pk).update(progress_done=sum(chunk.units for chunk in chunks[:finished]))
    run.refresh_from_db()
    return began


def test_the_first_partial_chunk_gives_no_estimate() -> None:
    run = running_run()
    work(run, finished=0, seconds_each=3, partial=20)  # the user study's 20 of 5,020 scores
    progress = scoring_run_progress(run=run)
    assert progress.done == 20
    assert progress.eta_seconds is None
    assert progress.eta_text == "estimating…"


def test_fewer_than_the_chunks_needed_still_estimating() -> None:
    run = running_run()
    work(run, finished=ETA_CHUNKS - 1, seconds_each=2, partial=50)
    progress = scoring_run_progress(run=run)
    assert progress.eta_seconds is None
    assert progress.rate_per_second is None
    assert progress.eta_text == "estimating…"


def test_after_a_few_chunks_the_estimate_follows_the_scores_per_second() -> None:
    run = running_run()
    seconds_each = 10.0
    began = work(run, finished=ETA_CHUNKS, seconds_each=seconds_each, partial=50)
    progress = scoring_run_progress(run=run)
    done = ETA_CHUNKS * UNITS + 50
    assert progress.done == done
    rate = done / began  # scores per second since the first chunk started, not since the run was created
    assert progress.rate_per_second == pytest.approx(rate, rel=0.01)
    assert progress.eta_seconds == pytest.approx((TOTAL - done) / rate, rel=0.01)
    assert progress.eta_text == f"about {round((TOTAL - done) / rate / 60)} min left"


def test_the_api_gives_the_text_the_page_shows() -> None:
    run = running_run()
    work(run, finished=1, seconds_each=3, partial=20)
    client = APIClient()
    client.force_authenticate(run.study.owner)
    answer = client.get(reverse("api-scoring-run-detail", args=[run.pk])).json()
    assert answer["eta_seconds"] is None
    assert answer["eta_text"] == "estimating…"


def test_a_finished_run_says_nothing_about_time_left() -> None:
    run = running_run()
    work(run, finished=ETA_CHUNKS, seconds_each=1, partial=0)
    ScoringRun.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED, finished_at=timezone.now())
    run.refresh_from_db()
    assert scoring_run_progress(run=run).eta_text == ""

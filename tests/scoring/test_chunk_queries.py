"""A scoring worker's database work per chunk is bounded and does not grow with the chunk: the
queue's own cost had come to outweigh the metrics, one claim, read and store per chunk and family.

Counted with Django's CaptureQueriesContext around ``scoring_run_work`` (what one ``scoring.work_on_run``
message does: claim, read, compute, store, pass the baton), on the real database; only the broker is
replaced (a recorder of the messages sent), since the queries are what is measured. A machine-independent
measure: the count, not the time.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from scoring.models import ChunkStatus, MetricScore, RunStatus, ScoringChunk, ScoringRun
from scoring.services import execution, scoring_run_create
from scoring.services.planning import scoring_run_plan
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)

pytestmark = pytest.mark.django_db

METRICS = ["bleu-1", "bleu-4", "rouge-l"]  # two families: BLEU's and ROUGE-L on its own
PER_CHUNK = 14  # claim 3 (candidates, UPDATE, the row), the run 1, replies 2, store <= 6, what is left 1


def build_study(contexts: int):
    study = StudyFactory.create()
    system = SystemFactory.create(study=study)
    for index in range(contexts):
        context = DialogContextFactory.create(
            study=study, position=index, turns=[{"speaker": "A", "text": f"how was day {index} ?"}]
        )
        ReferenceFactory.create(context=context, text=f"day {index} was a fine day")
        ResponseFactory.create(context=context, system=system, text=f"it was a fine day {index % 3}")
    return study


def queries_per_chunk(
    study, metrics: list[str], monkeypatch: pytest.MonkeyPatch, *, recompute: bool = True
) -> tuple[ScoringRun, list[int]]:
    sent: list[list[object]] = []

    def send(name: str, *, args: list[object], queue: str | None = None) -> bool:
        sent.append(list(args))
        return True

    monkeypatch.setattr(execution, "task_send", send)
    run = scoring_run_create(study=study, metrics=metrics, enqueue=False, recompute=recompute)
    assert scoring_run_plan(run_id=run.pk)
    counts = []
    while True:
        with CaptureQueriesContext(connection) as captured:
            worked = execution.scoring_run_work(run_id=run.pk, queue="cpu")
        if not worked:
            break
        counts.append(len(captured.captured_queries))
    assert len(sent) == len(counts) - 1  # each chunk but the last passed the baton
    return ScoringRun.objects.get(pk=run.pk), counts


def test_families_that_score_the_same_replies_share_their_chunks(settings) -> None:
    settings.DIALEVAL_SCORING_CHUNK_SIZE = 4
    study = build_study(contexts=10)
    run = scoring_run_create(study=study, metrics=METRICS, enqueue=False)
    assert scoring_run_plan(run_id=run.pk)
    chunks = list(ScoringChunk.objects.filter(run=run).order_by("index"))
    assert [chunk.metrics for chunk in chunks] == [["bleu-1", "bleu-4", "rouge-l"]] * 3
    assert [len(chunk.response_ids) for chunk in chunks] == [4, 4, 2]
    assert sum(chunk.units for chunk in chunks) == 10 * 3


def test_a_chunk_costs_a_bounded_number_of_queries_whatever_its_size(
    settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = build_study(contexts=24)
    found = {}
    for size in (4, 12):
        settings.DIALEVAL_SCORING_CHUNK_SIZE = size
        run, counts = queries_per_chunk(study, METRICS, monkeypatch)
        assert run.status == RunStatus.SUCCEEDED, run.error
        assert len(counts) == 24 // size
        assert MetricScore.objects.filter(response__context__study=study).count() == 24 * 3
        found[size] = counts
    assert max(found[4][:-1]) <= PER_CHUNK, found  # the last chunk also finishes the run
    assert max(found[4][-1], found[12][-1]) <= PER_CHUNK + 8, found
    assert found[4][0] == found[12][0], found  # three times the replies, the same queries


def test_families_missing_different_replies_keep_chunks_of_their_own(
    settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DIALEVAL_SCORING_CHUNK_SIZE = 100
    study = build_study(contexts=4)
    queries_per_chunk(study, ["rouge-l"], monkeypatch)
    MetricScore.objects.filter(response__context__study=study).order_by("response_id")[0].delete()
    run, _ = queries_per_chunk(study, ["bleu-1", "rouge-l"], monkeypatch, recompute=False)
    assert run.status == RunStatus.SUCCEEDED, run.error
    chunks = ScoringChunk.objects.filter(run=run).order_by("index")
    assert [(chunk.metrics, len(chunk.response_ids)) for chunk in chunks] == [
        (["bleu-1"], 4),
        (["rouge-l"], 1),
    ]
    assert all(chunk.status == ChunkStatus.DONE for chunk in chunks)
    stored = MetricScore.objects.filter(response__context__study=study)
    assert stored.filter(signature__name="bleu-1").count() == 4
    assert stored.filter(signature__name="rouge-l").count() == 4

"""Scores are written with one multi-row INSERT ... ON CONFLICT per batch: the same rows as before,
updated in place on a rerun, on SQLite and on PostgreSQL (scripts/test_postgres.sh runs these too)."""

from __future__ import annotations

import math

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from scoring.metrics.registry import compute_metrics
from scoring.models import MetricScore, RunStatus
from scoring.services import chunk_reads, chunk_storage, scoring_run_create, scoring_run_execute
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)

pytestmark = pytest.mark.django_db

REPLIES = ["i am fine , thanks .", "not bad , and you ?", "fine", "no idea what you mean", "thanks !"]


def build_study(contexts: int = 3):
    study = StudyFactory.create()
    systems = [SystemFactory.create(study=study, name=f"system {index}") for index in range(len(REPLIES))]
    for index in range(contexts):
        context = DialogContextFactory.create(study=study, position=index)
        ReferenceFactory.create(context=context, text=f"i am fine , thank you . ({index})", origin="original")
        for system, text in zip(systems, REPLIES, strict=True):
            ResponseFactory.create(context=context, system=system, text=f"{text} {index}")
    return study


def run(study, metrics: list[str], *, recompute: bool = False):
    created = scoring_run_create(
        study=study, metrics=metrics, references="single", enqueue=False, recompute=recompute
    )
    return scoring_run_execute(run_id=created.pk)


def stored(study) -> dict[tuple[int, str], tuple[int, float]]:
    return {
        (score.response_id, score.signature.name): (score.pk, score.value)
        for score in MetricScore.objects.filter(response__context__study=study).select_related("signature")
    }


def test_scores_are_inserted_in_multi_row_statements_of_the_batch_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    study = build_study()  # 15 replies
    monkeypatch.setattr(chunk_storage, "UPSERT_ROWS", 4)
    with CaptureQueriesContext(connection) as queries:
        finished = run(study, ["bleu-1", "bleu-2"])  # one chunk: 15 replies x 2 metrics = 30 rows
    assert finished.status == RunStatus.SUCCEEDED
    table = MetricScore._meta.db_table
    inserts = [
        query["sql"] for query in queries if f"INSERT INTO {connection.ops.quote_name(table)}" in query["sql"]
    ]
    assert len(inserts) == math.ceil(30 / 4)  # one statement per batch, not one per row
    assert all("ON CONFLICT" in sql for sql in inserts)
    values = stored(study)
    assert len(values) == 30
    responses = list(study.contexts.order_by("position").values_list("responses__pk", "responses__text"))
    for response_id, text in responses:
        reference = f"i am fine , thank you . ({text.rsplit(' ', 1)[1]})"
        expected = compute_metrics(["bleu-1", "bleu-2"], [text], [[reference]], [""], "en")
        assert values[(response_id, "bleu-1")][1] == expected["bleu-1"][0]
        assert values[(response_id, "bleu-2")][1] == expected["bleu-2"][0]


def test_a_rerun_updates_the_same_rows_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    study = build_study()
    monkeypatch.setattr(chunk_storage, "UPSERT_ROWS", 7)
    run(study, ["bleu-1", "rouge-l"])
    before = stored(study)
    first_written = dict(MetricScore.objects.values_list("pk", "computed_at"))
    MetricScore.objects.update(value=-1.0)  # what the rerun must overwrite
    assert run(study, ["bleu-1", "rouge-l"], recompute=True).status == RunStatus.SUCCEEDED
    after = stored(study)
    assert after == before  # same primary keys, the computed values back
    assert MetricScore.objects.count() == len(before) == 30
    assert all(
        written >= first_written[pk] for pk, written in MetricScore.objects.values_list("pk", "computed_at")
    )


def test_the_parameter_limit_fits_the_database() -> None:
    limit = chunk_reads.bind_parameter_limit()
    if connection.vendor == "sqlite":
        assert limit >= 999
    else:
        assert limit == 65_535
    assert min(chunk_storage.UPSERT_ROWS, limit // 4) * 4 <= limit

"""CSV injection in the report's files: the correlation table (page download and ``manage.py study_report
--format csv``) and the per-response scores CSV. Text from users (a question name, a metric signature, a
reply, a system name, a context id) that starts with ``=``, ``+``, ``-``, ``@``, tab or carriage return
comes out with a leading ``'``; numbers, negative ones included, come out as numbers."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Study
from scoring.models import MetricScore
from stats.report.csv_columns import CSV_COLUMNS
from tests.correlation.builders import Item, add_items, signature
from tests.correlation.report_helpers import report_document, report_get
from tests.factories import QuestionFactory, StudyFactory

pytestmark = pytest.mark.django_db

PAYLOAD = "=cmd|' /C calc'!A0"
QUESTION = "-coherence"  # a valid slug that a spreadsheet reads as a formula
# The last reply holds a formula after a carriage return: it must stay inside its quoted cell.
TEXTS = [PAYLOAD, "-5", "+1", "@me", "\tx", "\ry", "fine", "ok\r" + PAYLOAD]


@pytest.fixture
def study() -> Study:
    """A study whose question name, metric signature, replies, system and context ids look like formulas,
    with a metric that correlates negatively with the human scores (negative numbers in every column)."""
    study = StudyFactory.create(name="injected")
    question = QuestionFactory.create(study=study, name=QUESTION)
    metric = signature("@bleu-2")
    humans = [0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 2, 0]
    noise = [0.0, 0.001, -0.002, 0.003, 0.0, 0.002, -0.001, 0.004, 0.001, -0.003, 0.0, 0.002]
    responses = add_items(
        study=study,
        question=question,
        items=[
            Item(
                PAYLOAD if i % 2 else "human",
                ratings=[human, human],
                scores={metric.text: -0.0067 * (human + 1) + noise[i]},
                text=TEXTS[i % len(TEXTS)],
            )
            for i, human in enumerate(humans)
        ],
    )
    first = responses[0].context
    first.external_id = "=ctx"
    first.save(update_fields=["external_id"])
    return study


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _check_correlation_csv(text: str, study: Study) -> None:
    rows = _csv_rows(text)
    (expected,) = report_document(study)["rows"]
    (row,) = rows
    assert row["question"] == "'" + QUESTION
    assert row["metric"] == "'@bleu-2"
    assert row["signature"] == "'" + expected["signature"]
    assert expected["pearson"] is not None
    assert expected["pearson"] < 0
    assert expected["spearman"] is not None
    assert expected["spearman"] < 0
    # numbers are written as numbers, minus sign and every digit kept
    assert row["n"] == str(expected["n"]) == "12"
    for column in ("pearson", "pearson_p", "spearman", "spearman_p"):
        assert row[column] == repr(expected[column]), column
    assert row["pearson_ci_low"] == repr(expected["pearson_ci"][0])
    assert row["spearman_ci_high"] == repr(expected["spearman_ci"][1])
    assert text.splitlines()[0] == ",".join(CSV_COLUMNS)


def test_report_csv_download_neutralises_question_and_signature(study) -> None:
    client = Client()
    client.force_login(study.owner)
    response = report_get(client, reverse("correlation:study-report-csv", args=[study.pk]))
    assert response.status_code == 200
    _check_correlation_csv(response.content.decode(), study)


def test_study_report_command_csv_neutralises_question_and_signature(study) -> None:
    out = io.StringIO()
    call_command("study_report", "injected", "--format", "csv", stdout=out, stderr=io.StringIO())
    _check_correlation_csv(out.getvalue(), study)


def test_scores_csv_neutralises_replies_names_and_headers(study) -> None:
    client = Client()
    client.force_login(study.owner)
    response = client.get(reverse("correlation:study-item-scores", args=[study.pk]))
    assert response.status_code == 200
    text = response.content.decode()
    (metric_text,) = MetricScore.objects.values_list("signature__text", flat=True).distinct()
    assert text.splitlines()[0] == f"response_id,context_id,system,response,human:{QUESTION},'{metric_text}"

    rows = _csv_rows(text)
    assert len(rows) == 12
    assert {row["response"] for row in rows} == {
        "'" + PAYLOAD, "'-5", "'+1", "'@me", "'\tx", "'\ry", "fine", "ok\r" + PAYLOAD,
    }  # fmt: skip
    assert {row["system"] for row in rows} == {"'" + PAYLOAD, "human"}
    assert "'=ctx" in {row["context_id"] for row in rows}

    scores = dict(MetricScore.objects.values_list("response_id", "value"))
    for row in rows:
        assert row[f"'{metric_text}"] == repr(scores[int(row["response_id"])])
        assert float(row[f"human:{QUESTION}"]) >= 0
    assert "-0.0067" in {row[f"'{metric_text}"] for row in rows}

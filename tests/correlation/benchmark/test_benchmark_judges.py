"""LLM judges in the benchmark across studies (stats/benchmark/judges.py): a judge's metric name and
signature differ on every study (its key hashes the question), so the benchmark matches the judge of each
study's compared question by template, backend, model, model file and reading: "g-eval on qwen" is one row
across two studies whose questions differ, two templates are two rows, a judge of another question is a row
of its own ("asked engagingness"), and the masses on labels are no row but each judge cell's ``label_mass``.
Read from stored reports or computed from the inputs, the cells are the same; each equals the study's report.

"own pilot" asks "appropriateness" first (then "engagingness"), "GRADE convai2" only "quality".
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from annotation.models import Question, Response, Study
from correlation.benchmark.selectors import metric_benchmark
from correlation.report.cache import report_current
from stats.benchmark.options import BenchmarkOptions
from stats.benchmark.table import BenchmarkTable
from stats.report.types import ReportOptions
from tests.correlation.benchmark.builders import BLEU, benchmark_study, bleu_like
from tests.correlation.judges import stored_judge
from tests.correlation.report_helpers import report_document
from tests.factories import QuestionFactory, ResearcherFactory
from tests.stats.test_benchmark import _compiled_log

pytestmark = pytest.mark.django_db
MODEL = "qwen2.5-0.5b"
G_EVAL = f"llm-judge (g-eval, {MODEL})"
SINGLE = f"llm-judge (single-answer, {MODEL})"
OTHER_QUESTION = f"llm-judge (g-eval, {MODEL}, asked engagingness)"


def _judged(study: Study, question: str, template: str, *, seed: int, mass: float) -> None:
    replies = list(Response.objects.filter(context__study=study).order_by("pk"))
    stored_judge(
        study,
        question,
        template=template,
        model=MODEL,
        scores={reply: float((index * seed) % 7) for index, reply in enumerate(replies)},
        masses=dict.fromkeys(replies, mass),
    )


@pytest.fixture
def studies() -> list[Study]:
    owner = ResearcherFactory.create(username="judging")
    pilot = benchmark_study(owner, "own pilot", {BLEU: bleu_like}, seed=1)
    Question.objects.filter(study=pilot).update(name="appropriateness", scale_min=1, scale_max=5)
    QuestionFactory.create(study=pilot, name="engagingness", scale_min=1, scale_max=5, labels=[], position=1)
    grade = benchmark_study(owner, "GRADE convai2", {BLEU: bleu_like}, seed=2)
    _judged(pilot, "appropriateness", "g-eval", seed=3, mass=0.9)
    _judged(pilot, "appropriateness", "single-answer", seed=5, mass=0.8)
    _judged(pilot, "engagingness", "g-eval", seed=2, mass=0.7)
    _judged(grade, "quality", "g-eval", seed=4, mass=0.3)
    _judged(grade, "quality", "single-answer", seed=6, mass=0.95)
    return [pilot, grade]


def _rows(table: BenchmarkTable) -> dict[str, tuple[list[float | None], int]]:
    return {row.label: ([cell.value for cell in row.cells], row.studies) for row in table.rows}


def test_one_row_per_judge_across_studies_and_another_questions_judge_apart(studies) -> None:
    table = metric_benchmark(studies=studies, options=BenchmarkOptions(resamples=0), cached=False)
    rows = _rows(table)
    assert set(rows) == {"bleu-2", G_EVAL, SINGLE, OTHER_QUESTION}
    assert rows[G_EVAL][1] == rows[SINGLE][1] == 2  # one row on both studies, whatever their questions
    assert rows[OTHER_QUESTION][1] == 1
    # each cell is the judge's row in its study's own report (of the compared question)
    for column, (study, question) in enumerate(zip(studies, ("appropriateness", "quality"), strict=True)):
        document = report_document(study, resamples=0)
        own = {
            row["display"]: row["pearson"]
            for row in document["rows"]
            if row["question"] == question and "judge" in row and row["judge"]["own_question"]
        }
        assert own[G_EVAL if study.name == "GRADE convai2" else f"{G_EVAL[:-1]}, appropriateness)"] == (
            pytest.approx(rows[G_EVAL][0][column], abs=1e-12)
        )
    judged = {row.label: row for row in table.rows}
    assert [cell.label_mass for cell in judged[G_EVAL].cells] == pytest.approx([0.9, 0.3])
    assert "the model put only 30% of its next-token probability" in judged[G_EVAL].cells[1].note
    assert "model put only" not in judged[G_EVAL].cells[0].note
    text = json.dumps(table.as_dict())
    assert "llm-judge-mass" not in text
    assert "llm-judge:" not in text  # the rows' identities hold no study's key
    identity = judged[G_EVAL].metric.text
    assert identity.startswith("llm-judge|artifact:")
    assert "question:" not in identity
    assert "scale:" not in identity


def test_a_named_question_and_the_stored_reports_give_the_same_rows(studies) -> None:
    options = BenchmarkOptions(resamples=40)
    computed = metric_benchmark(studies=studies, options=options, cached=False)
    for study in studies:
        report_current(study=study, options=ReportOptions(resamples=40))
    cached = metric_benchmark(studies=studies, options=options)
    assert [(row.label, row.metric) for row in cached.rows] == [
        (row.label, row.metric) for row in computed.rows
    ]
    for ours, theirs in zip(cached.rows, computed.rows, strict=True):
        for mine, other in zip(ours.cells, theirs.cells, strict=True):
            assert (mine.value, mine.note, mine.label_mass) == (other.value, other.note, other.label_mass)
    with pytest.raises(ValueError, match="no question named 'engagingness' in GRADE convai2"):
        metric_benchmark(studies=studies, options=options, question="engagingness")
    only_pilot = metric_benchmark(studies=studies[:1], options=options, question="engagingness")
    rows = _rows(only_pilot)
    assert f"llm-judge (g-eval, {MODEL}, asked appropriateness)" in rows  # the other question's judge now
    assert G_EVAL in rows
    judges_only = metric_benchmark(studies=studies, options=options, metrics=["llm-judge"])
    assert {row.label for row in judges_only.rows} == {G_EVAL, SINGLE, OTHER_QUESTION}


def test_the_page_and_downloads_name_the_judges(studies, client, tmp_path) -> None:
    client.force_login(studies[0].owner)
    url = reverse("correlation:benchmark")
    query = {"studies": [study.pk for study in studies], "resamples": "0"}
    text = client.get(url, query).content.decode()
    names = [name.strip() for name in re.findall(r'<td class="metric-name">([^<]*)', text)]
    assert sorted(names) == sorted(["bleu-2", G_EVAL, SINGLE, OTHER_QUESTION])
    assert f"{G_EVAL} on GRADE convai2: the model put only 30%" in text
    assert "mean probability on the scale's labels 0.30" in text
    lines = list(csv.DictReader(io.StringIO(client.get(url, {**query, "download": "csv"}).content.decode())))
    judged = [line for line in lines if line["metric"] == G_EVAL]
    assert [float(line["label_mass"]) for line in judged] == pytest.approx([0.9, 0.3])
    assert all(line["label_mass"] == "" for line in lines if line["metric"] == "bleu-2")
    latex = client.get(url, {**query, "download": "latex"}).content.decode()
    assert "LLM judge (g-eval," in latex
    assert "llm-judge" not in latex.split(r"\caption")[0]
    assert r"LLM judges whose model does not fit: llm-judge (g-eval, qwen2.5-0.5b) on GRADE convai2" in latex
    assert "Overfull" not in _compiled_log(latex, tmp_path)  # the names wrap within the article's width

"""The report on the real multi-reference ratings (seed 003 section 5.1: 100 contexts x 5 systems).

The study is built straight from mturk_rating_processed_output.csv (the importers are tested elsewhere) and
scored with sacrebleu's sentence BLEU against the original reply and against all references, so the
report runs at the paper's size with real text; its numbers are checked against scipy and plain means.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from statistics import fmean

import pytest
from django.urls import reverse
from scipy import stats as scipy_stats

from annotation.models import DialogContext, ImportedMeanRating, Response, System
from correlation.services import correlation_report
from scoring.models import MetricScore
from tests.correlation.builders import signature
from tests.factories import QuestionFactory, StudyFactory

pytestmark = [pytest.mark.shared_data, pytest.mark.django_db]


def _load(shared_data, owner):
    import sacrebleu

    with (shared_data / "multirefeval" / "mturk_rating_processed_output.csv").open(
        newline="", encoding="utf-8"
    ) as f:
        records = list(csv.DictReader(f))
    study = StudyFactory.create(owner=owner, name="multirefeval mturk")
    question = QuestionFactory.create(study=study, name="appropriateness", scale_min=1, scale_max=5)
    single, multi = signature("sentence-bleu", refs="single"), signature("sentence-bleu", refs="multi")
    systems = {
        name: System.objects.create(study=study, name=name) for name in sorted({r["model"] for r in records})
    }
    contexts = {
        cid: DialogContext.objects.create(
            study=study, external_id=cid, turns=[{"speaker": "A", "text": "..."}]
        )
        for cid in sorted({r["context_id"] for r in records})
    }
    responses = Response.objects.bulk_create(
        Response(context=contexts[r["context_id"]], system=systems[r["model"]], text=r["response"])
        for r in records
    )
    ImportedMeanRating.objects.bulk_create(
        ImportedMeanRating(response=response, question=question, value=float(r["human_average_rating"]))
        for response, r in zip(responses, records, strict=True)
    )
    scores = []
    for response, r in zip(responses, records, strict=True):
        scores.append(
            MetricScore(
                response=response,
                signature=single,
                value=sacrebleu.sentence_bleu(r["response"], [r["prevgt"]]).score,
            )
        )
        references = r["all_references"].split("\t")
        scores.append(
            MetricScore(
                response=response,
                signature=multi,
                value=sacrebleu.sentence_bleu(r["response"], references).score,
            )
        )
    MetricScore.objects.bulk_create(scores)
    return study, records, scores


def test_report_at_the_size_of_the_multi_reference_study(shared_data, researcher, client) -> None:
    study, records, scores = _load(shared_data, researcher)
    human = [float(r["human_average_rating"]) for r in records]

    report = correlation_report(study=study)

    assert report.questions[0].human_scored == 500
    for row, offset in zip(report.rows, (1, 0), strict=True):  # rows come multi, then single
        metric = [s.value for s in scores[offset::2]]
        assert row.n == 500
        assert row.pearson.coefficient == pytest.approx(scipy_stats.pearsonr(human, metric).statistic)
        assert row.spearman.coefficient == pytest.approx(scipy_stats.spearmanr(human, metric).statistic)
        assert row.pearson.ci_low is not None
        assert row.pearson.coefficient is not None
        assert row.pearson.ci_low < row.pearson.coefficient
    by_model: dict[str, list[float]] = defaultdict(list)
    for r in records:
        by_model[r["model"]].append(float(r["human_average_rating"]))
    system_row = report.system_rows[0]
    assert system_row.n == 5
    assert {s.system: s.human_mean for s in system_row.systems} == pytest.approx(
        {name: fmean(values) for name, values in by_model.items()}
    )

    client.force_login(researcher)
    page = client.get(reverse("correlation:study-report", args=[study.pk]))
    assert page.status_code == 200
    assert len(page.content) < 400_000  # one blob of points, not one per metric

"""The report on the real multi-reference ratings (Gupta et al. (2019) section 5.1: 100 contexts x 5 systems).

The study is built straight from mturk_rating_processed_output.csv (the importers are tested elsewhere) and
scored with sacrebleu's sentence BLEU against the original reply and against all references, so the
report runs at the paper's size with real text; its numbers are checked against scipy and plain means.
"""

from __future__ import annotations

import csv
import itertools
from collections import defaultdict
from statistics import fmean

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats as scipy_stats

from annotation.models import DialogContext, ImportedMeanRating, Response, System
from scoring.models import MetricScore
from tests.correlation.builders import signature
from tests.correlation.report_helpers import report_document, report_page
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

    document = report_document(study)

    assert document["questions"][0]["human_scored"] == 500
    for row, offset in zip(document["rows"], (1, 0), strict=True):  # rows come multi, then single
        metric = [s.value for s in scores[offset::2]]
        assert row["n"] == 500
        assert row["pearson"] == pytest.approx(scipy_stats.pearsonr(human, metric).statistic)
        assert row["spearman"] == pytest.approx(scipy_stats.spearmanr(human, metric).statistic)
        assert row["kendall"] == pytest.approx(scipy_stats.kendalltau(human, metric).statistic)
        low, high = row["pearson_ci_bootstrap"]
        assert low is not None
        assert high is not None
        assert row["pearson"] is not None
        assert low < row["pearson"] < high
    by_model: dict[str, list[float]] = defaultdict(list)
    for r in records:
        by_model[r["model"]].append(float(r["human_average_rating"]))
    system_row = document["system_level"][0]
    assert system_row["n"] == 5
    assert {s["system"]: s["human_mean"] for s in system_row["systems"]} == pytest.approx(
        {name: fmean(values) for name, values in by_model.items()}
    )
    # Imported means carry no rater identity: the report says so instead of inventing raters.
    [agreement] = document["agreement"]
    assert agreement["identity"] == "none"
    assert "imported means" in agreement["krippendorff_alpha_ordinal"]["note"]
    assert document["human"][0]["pearson"] is None
    assert "imported means" in document["human"][0]["note"]

    client.force_login(researcher)
    page = report_page(client, reverse("correlation:study-report", args=[study.pk]))
    assert page.status_code == 200
    assert len(page.content) < 400_000  # the points are fetched apart, as figures


def test_grade_agreement_over_per_position_scores_with_the_identity_caveat(shared_data, researcher) -> None:
    """GRADE's file gives each reply's list of coherence scores without saying who gave which: the report
    computes the coefficients that need no identity from each reply's scores, and says so."""
    import json

    import krippendorff
    from statsmodels.stats.inter_rater import fleiss_kappa

    from annotation.importers import ImportFile
    from annotation.services.imports import study_import
    from annotation.services.studies import study_create

    path = shared_data / "grade-dailydialog" / "human_judgement_dailydialog.jsonl"
    study = study_create(owner=researcher, name="grade", scale="1-5")
    study_import(study=study, format="grade", files=[ImportFile(name=path.name, data=path.read_bytes())])
    lists = [
        json.loads(json.loads(line)["HumanScores"]) for line in path.read_text().splitlines() if line.strip()
    ]

    document = report_document(study, resamples=0)
    [agreement] = document["agreement"]

    assert agreement["identity"] == "anonymous"
    assert "identity is unknown" in agreement["note"]
    width = max(len(scores) for scores in lists)
    matrix = np.full((width, len(lists)), np.nan)
    for column, scores in enumerate(lists):
        matrix[: len(scores), column] = scores
    expected_alpha = krippendorff.alpha(
        reliability_data=matrix, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]
    )
    assert agreement["krippendorff_alpha_ordinal"]["value"] == pytest.approx(expected_alpha, abs=1e-9)
    assert agreement["krippendorff_alpha_ordinal"]["ratings"] == sum(len(s) for s in lists)
    modal = max({len(s) for s in lists}, key=lambda k: sum(len(s) == k for s in lists))
    table = np.array([[s.count(v) for v in range(1, 6)] for s in lists if len(s) == modal])
    assert agreement["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(table), abs=1e-9)
    assert agreement["icc"]["type"] == "ICC(1,1)"  # raters unknown: the one-way model
    assert agreement["annotators"] == []  # no invented people
    assert agreement["cohen_kappa_mean"]["value"] is None
    assert all(row["pearson"] is None for row in document["human"])
    assert document["questions"][0]["human_scored"] == len(lists)


def test_the_references_curve_rises_with_the_number_of_references_on_multirefeval(
    shared_data, researcher
) -> None:
    """Gupta et al. (2019) section 5.3, Figure 2: on the real ratings, BLEU-2 and METEOR correlate better with the
    human scores the more of a context's references they may match (the references of the rated-responses
    file: the original reply and the collected ones)."""
    from annotation.importers import ImportFile
    from annotation.services.imports import study_import
    from annotation.services.studies import study_create
    from scoring.services import scoring_run_create, scoring_run_execute

    path = shared_data / "multirefeval" / "mturk_rating_processed_output.csv"
    study = study_create(owner=researcher, name="multirefeval curve", scale="1-5")
    study_import(
        study=study, format="multiref-ratings", files=[ImportFile(name=path.name, data=path.read_bytes())]
    )
    run = scoring_run_create(study=study, metrics=["bleu-2", "meteor"], references="multi", enqueue=False)
    assert scoring_run_execute(run_id=run.pk).status == "succeeded"
    study.refresh_from_db()

    document = report_document(study, resamples=0)
    curves = {curve["metric"]: curve for curve in document["references_curve"]}
    assert set(curves) == {"bleu-2", "meteor"}
    for metric, curve in curves.items():
        means = [point["pearson_mean"] for point in curve["points"] if point["pearson_mean"] is not None]
        assert len(means) == len(curve["points"]), metric
        assert curve["items"] == 500
        assert len(means) >= 4, metric
        assert means[-1] > means[0] + 0.02, (metric, means)  # all references beat one
        assert all(later >= earlier - 0.01 for earlier, later in itertools.pairwise(means)), (metric, means)
        assert means[-1] == pytest.approx(curve["stored_multi_pearson"], abs=1e-9)
    # only multi-reference scores here: nothing to put side by side
    assert [entry["metric"] for entry in document["single_vs_multi"]] == []

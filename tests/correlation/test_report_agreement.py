"""The human half of the report on a study annotated in the app: 6 raters x 60 replies, plus a contrarian the
Gupta et al. (2019) filter removes. Every number is recomputed here from the rating matrix with the reference libraries
(scipy, krippendorff, statsmodels, pingouin, scikit-learn), independently of the report's own code."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin
import pytest
from krippendorff import alpha as krippendorff_alpha
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

from annotation.models import Annotator, Rating, System
from correlation.report.loading import report_inputs
from scoring.models import MetricScore, MetricSignature
from stats.report.builder import build_report
from stats.report.types import ReportOptions
from tests.correlation.report_helpers import assert_same_numbers
from tests.factories import DialogContextFactory, QuestionFactory, ResponseFactory, StudyFactory

pytestmark = pytest.mark.django_db

RATERS = 6
REPLIES = 60
POINTS = [0, 1, 2]


@pytest.fixture
def annotated():
    rng = np.random.default_rng(42)
    study = StudyFactory.create(kappa_threshold=0.2)
    question = QuestionFactory.create(study=study, name="appropriateness", scale_min=0, scale_max=2)
    systems = [System.objects.create(study=study, name=f"system-{k}") for k in range(3)]
    raters = [Annotator.objects.create(study=study, pseudonym=f"rater-{k}") for k in range(RATERS)]
    contrarian = Annotator.objects.create(study=study, pseudonym="contrarian")
    bleu = MetricSignature.objects.create(
        text="bleu-2|refs:single|tok:en-v1|version:t",
        name="bleu-2",
        parameters={"refs": "single"},
        version="t",
    )
    truth = rng.integers(0, 3, size=REPLIES)
    matrix = np.clip(
        truth[:, None] + rng.integers(-1, 2, size=(REPLIES, RATERS)) * (rng.random((REPLIES, RATERS)) < 0.35),
        0,
        2,
    )
    responses = []
    for item in range(REPLIES):
        response = ResponseFactory.create(
            context=DialogContextFactory.create(study=study), system=systems[item % 3]
        )
        responses.append(response)
        for column, rater in enumerate(raters):
            Rating.objects.create(
                annotator=rater, response=response, question=question, value=int(matrix[item, column])
            )
        Rating.objects.create(
            annotator=contrarian, response=response, question=question, value=int(2 - truth[item])
        )
        MetricScore.objects.create(
            response=response, signature=bleu, value=float(truth[item] * 0.1 + rng.normal(0, 0.1))
        )
    inputs = report_inputs(study=study)
    document, plots = build_report(inputs, ReportOptions(resamples=300))
    return matrix, truth, document, plots


def test_the_filter_removes_the_contrarian_and_says_so(annotated) -> None:
    _, _, document, _ = annotated
    [applied] = document["filter"]
    assert applied["threshold"] == 0.2
    assert applied["annotators_removed"] == 1
    assert applied["ratings_removed"] == REPLIES
    assert applied["removed"][0]["annotator"] == "contrarian"
    rows = {row["annotator"]: row for row in document["agreement"][0]["annotators"]}
    assert rows["contrarian"]["included"] is False
    assert all(rows[f"rater-{k}"]["included"] for k in range(RATERS))


def test_human_avg_and_max_are_each_rater_against_the_mean_of_the_others(annotated) -> None:
    matrix, _, document, _ = annotated
    pearsons, spearmans = [], []
    for column in range(RATERS):
        rest = np.delete(matrix, column, axis=1).mean(axis=1)
        pearsons.append(scipy_stats.pearsonr(rest, matrix[:, column]))
        spearmans.append(scipy_stats.spearmanr(rest, matrix[:, column]))
    average, best = document["human"]
    assert average["label"] == "Human (Avg)"
    assert average["pearson"] == pytest.approx(np.mean([r.statistic for r in pearsons]))
    assert average["spearman"] == pytest.approx(np.mean([r.statistic for r in spearmans]))
    assert average["pearson_p"] == pytest.approx(max(r.pvalue for r in pearsons))
    assert best["pearson"] == pytest.approx(max(r.statistic for r in pearsons))
    assert best["pearson_rater"] == f"rater-{int(np.argmax([r.statistic for r in pearsons]))}"
    assert best["spearman"] == pytest.approx(max(r.statistic for r in spearmans))
    assert average["raters"] == RATERS


def test_every_agreement_coefficient_matches_the_reference_libraries(annotated) -> None:
    matrix, truth, document, _ = annotated
    [agreement] = document["agreement"]
    assert agreement["identity"] == "known"
    reliability = matrix.T.astype(float)
    assert agreement["krippendorff_alpha_ordinal"]["value"] == pytest.approx(
        krippendorff_alpha(reliability_data=reliability, level_of_measurement="ordinal", value_domain=POINTS)
    )
    assert agreement["krippendorff_alpha_interval"]["value"] == pytest.approx(
        krippendorff_alpha(reliability_data=reliability, level_of_measurement="interval")
    )
    with_contrarian = np.vstack([reliability, 2 - truth])
    assert agreement["krippendorff_alpha_ordinal_before_filter"]["value"] == pytest.approx(
        krippendorff_alpha(
            reliability_data=with_contrarian, level_of_measurement="ordinal", value_domain=POINTS
        )
    )
    counts = np.stack([(matrix == point).sum(axis=1) for point in POINTS], axis=1)
    assert agreement["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(counts))
    long = pd.DataFrame(
        [(item, rater, matrix[item, rater]) for item in range(REPLIES) for rater in range(RATERS)],
        columns=["item", "rater", "value"],
    )
    icc = pingouin.intraclass_corr(data=long, targets="item", raters="rater", ratings="value").set_index(
        "Type"
    )
    assert agreement["icc"]["type"] == "ICC(A,1)"
    assert agreement["icc"]["value"] == pytest.approx(icc.loc["ICC(A,1)", "ICC"])
    assert agreement["icc"]["average_value"] == pytest.approx(icc.loc["ICC(A,k)", "ICC"])
    pairs = {
        (f"rater-{a}", f"rater-{b}"): cohen_kappa_score(
            matrix[:, a], matrix[:, b], labels=POINTS, weights="quadratic"
        )
        for a in range(RATERS)
        for b in range(a + 1, RATERS)
    }
    assert agreement["cohen_kappa_mean"]["value"] == pytest.approx(np.mean(list(pairs.values())))
    reported = {(p["first"], p["second"]): p["kappa"] for p in agreement["pairs"]}
    for pair, kappa in pairs.items():
        assert reported[pair] == pytest.approx(kappa)
    for row in agreement["annotators"]:
        if row["annotator"] == "contrarian":
            continue
        column = int(row["annotator"].split("-")[1])
        without = np.delete(reliability, column, axis=0)
        expected = krippendorff_alpha(
            reliability_data=without, level_of_measurement="ordinal", value_domain=POINTS
        )
        assert row["alpha_without"] == pytest.approx(expected)


def test_the_heat_map_and_figure_four_data(annotated) -> None:
    matrix, _, _, plots = annotated
    data = plots["questions"]["appropriateness"]
    heatmap = data["heatmap"]
    assert heatmap["raters"] == [*[f"rater-{k}" for k in range(RATERS)], "contrarian"]  # in joining order
    names = heatmap["raters"]
    a, b = names.index("rater-0"), names.index("rater-3")
    expected = cohen_kappa_score(matrix[:, 0], matrix[:, 3], labels=POINTS, weights="quadratic")
    assert heatmap["kappa"][a][b] == pytest.approx(expected)
    assert heatmap["kappa"][b][a] == pytest.approx(expected)
    assert heatmap["shared"][a][b] == REPLIES
    # Figure 4(a): the median-correlated rater (the lower middle of six) against the mean of the rest.
    correlations = sorted(
        (scipy_stats.pearsonr(np.delete(matrix, k, axis=1).mean(axis=1), matrix[:, k]).statistic, k)
        for k in range(RATERS)
    )
    median = correlations[(RATERS - 1) // 2][1]
    figure_a = data["figure_4a"]
    assert figure_a["annotator"] == f"rater-{median}"
    assert figure_a["pearson"] == pytest.approx(correlations[(RATERS - 1) // 2][0])
    assert sorted(figure_a["own"]) == sorted(matrix[:, median].astype(float).tolist())
    # Figure 4(b): two disjoint halves of the counted raters; each point is one half's mean.
    figure_b = data["figure_4b"]
    assert sorted(figure_b["first"] + figure_b["second"]) == [f"rater-{k}" for k in range(RATERS)]
    assert len(figure_b["first"]) == RATERS // 2
    first = [int(name.split("-")[1]) for name in figure_b["first"]]
    second = [int(name.split("-")[1]) for name in figure_b["second"]]
    x, y = matrix[:, first].mean(axis=1), matrix[:, second].mean(axis=1)
    assert figure_b["pearson"] == pytest.approx(scipy_stats.pearsonr(x, y).statistic)
    assert "flatters" in figure_b["caveat"]


def test_normalised_scores_change_the_human_score_not_the_agreement() -> None:
    rng = np.random.default_rng(5)
    study = StudyFactory.create(kappa_threshold=None)
    question = QuestionFactory.create(study=study, name="q", scale_min=1, scale_max=5)
    system = System.objects.create(study=study, name="s")
    lenient, strict = (
        Annotator.objects.create(study=study, pseudonym=name) for name in ("lenient", "strict")
    )
    values = rng.integers(1, 4, size=20)
    for value in values:
        response = ResponseFactory.create(context=DialogContextFactory.create(study=study), system=system)
        Rating.objects.create(annotator=lenient, response=response, question=question, value=int(value) + 2)
        Rating.objects.create(annotator=strict, response=response, question=question, value=int(value))
    inputs = report_inputs(study=study)
    raw, raw_plots = build_report(inputs, ReportOptions(resamples=0))
    z, z_plots = build_report(inputs, ReportOptions(resamples=0, normalise="z"))
    # The same ratings give the same agreement (to rounding: numpy's sums depend on memory alignment).
    assert_same_numbers(raw["agreement"], z["agreement"])
    raw_human = raw_plots["questions"]["q"]["items"]["human"]
    z_human = z_plots["questions"]["q"]["items"]["human"]
    expected = (values - values.mean()) / values.std(ddof=1)  # both raters' z-scores are the same
    assert z_human == pytest.approx(expected.tolist(), abs=1e-5)
    assert raw_human == pytest.approx((values + 1).tolist())
    assert "z-scores" in z["filter"][0]["normalisation_note"]

"""The report document on a real database: human scores, pairing, system level, left-out counts, JSON."""

from __future__ import annotations

import json
from statistics import fmean

import pytest
from scipy import stats as scipy_stats

from correlation.report.loading import report_inputs, study_human_scores
from correlation.selectors import study_metric_values
from stats.correlations import METRIC_CONSTANT, TOO_FEW_ITEMS
from stats.report.metrics import FEWER_THAN_THREE_SYSTEMS
from tests.correlation.builders import Item, add_items, signature
from tests.correlation.report_helpers import report_document
from tests.factories import QuestionFactory, StudyFactory

pytestmark = pytest.mark.django_db

ROW_KEYS = {
    "question",
    "metric",
    "references",
    "signature",
    "n",
    "pearson",
    "pearson_p",
    "pearson_ci",
    "spearman",
    "spearman_p",
    "spearman_ci",
    "note",
}


@pytest.fixture
def study_and_question():
    study = StudyFactory.create()
    return study, QuestionFactory.create(study=study, name="appropriateness")


def test_human_score_is_the_mean_of_ratings_and_an_imported_mean_only_fills_gaps(study_and_question) -> None:
    study, question = study_and_question
    other_question = QuestionFactory.create(study=study, name="fluency", position=1)
    rated, imported_only, unrated, rated_and_imported = add_items(
        study=study,
        question=question,
        items=[
            Item("s1", ratings=[2, 1, 1]),
            Item("s1", imported=3.4),
            Item("s1"),
            Item("s2", ratings=[0, 1], imported=4.9),
        ],
    )
    add_items(study=study, question=other_question, items=[Item("s1", ratings=[2, 2])])

    scores = study_human_scores(study=study, questions=[question, other_question])

    assert scores[question.pk] == {
        rated.pk: pytest.approx(4 / 3),
        imported_only.pk: pytest.approx(3.4),
        rated_and_imported.pk: pytest.approx(0.5),  # its ratings win over the imported 4.9
    }
    assert unrated.pk not in scores[question.pk]
    assert list(scores[other_question.pk].values()) == [2.0]


def test_rows_correlate_only_responses_with_both_scores(study_and_question) -> None:
    study, question = study_and_question
    bleu = signature("bleu-2", refs="multi")
    items = [
        Item("s1", ratings=[2, 2], scores={bleu.text: 0.31}),
        Item("s1", ratings=[1, 0], scores={bleu.text: 0.12}),
        Item("s2", imported=1.5, scores={bleu.text: 0.22}),
        Item("s2", ratings=[0, 0], scores={bleu.text: 0.05}),
        Item("s3", ratings=[1, 2], scores={bleu.text: 0.02}),
        Item("s3", ratings=[2, 1]),  # no metric value: left out
        Item("s3", scores={bleu.text: 0.9}),  # no human score: left out
    ]
    add_items(study=study, question=question, items=items)
    human = [2.0, 0.5, 1.5, 0.0, 1.5]
    metric = [0.31, 0.12, 0.22, 0.05, 0.02]

    document = report_document(study)

    [row] = document["rows"]
    assert (row["question"], row["metric"], row["references"], row["signature"], row["n"]) == (
        "appropriateness",
        "bleu-2",
        "multi",
        bleu.text,
        5,
    )
    assert row["pearson"] == pytest.approx(scipy_stats.pearsonr(human, metric).statistic)
    assert row["pearson_p"] == pytest.approx(scipy_stats.pearsonr(human, metric).pvalue)
    assert row["spearman"] == pytest.approx(scipy_stats.spearmanr(human, metric).statistic)
    assert row["kendall"] == pytest.approx(scipy_stats.kendalltau(human, metric).statistic)
    assert row["kendall_p"] == pytest.approx(scipy_stats.kendalltau(human, metric).pvalue)
    # Never silently: the rated but unscored reply is counted on the row, the unrated one per question.
    assert row["left_out"] == {"no_metric_score": 1}
    [summary] = document["questions"]
    assert summary["human_scored"] == 6
    assert summary["responses"] == 7
    assert summary["left_out"] == {"no_human_score": 1}


def test_system_level_means_use_the_paired_responses(study_and_question) -> None:
    study, question = study_and_question
    meteor = signature("meteor")
    per_system = {
        "hred": [(2, 0.40), (1, 0.30)],
        "human": [(2, 0.50), (2, 0.45)],
        "retrieval": [(0, 0.10), (1, 0.25)],
        "seq2seq": [(1, 0.20), (0, 0.05)],
    }
    items = [
        Item(system, ratings=[rating], scores={meteor.text: value})
        for system, pairs in per_system.items()
        for rating, value in pairs
    ]
    items.append(Item("hred", ratings=[0]))  # rated but unscored: not in hred's means
    add_items(study=study, question=question, items=items)

    [row] = report_document(study)["system_level"]

    assert [s["system"] for s in row["systems"]] == sorted(per_system)
    expected_human = [fmean(r for r, _ in per_system[name]) for name in sorted(per_system)]
    expected_metric = [fmean(v for _, v in per_system[name]) for name in sorted(per_system)]
    assert [s["human_mean"] for s in row["systems"]] == pytest.approx(expected_human)
    assert [s["metric_mean"] for s in row["systems"]] == pytest.approx(expected_metric)
    assert [s["n"] for s in row["systems"]] == [2, 2, 2, 2]
    assert row["n"] == 4
    assert row["pearson"] == pytest.approx(scipy_stats.pearsonr(expected_human, expected_metric).statistic)
    assert row["spearman"] == pytest.approx(scipy_stats.spearmanr(expected_human, expected_metric).statistic)


def test_degenerate_rows_are_present_with_nulls_and_reasons_and_serialise_without_nan(
    study_and_question,
) -> None:
    study, question = study_and_question
    flat = signature("distinct-1")
    sparse = signature("bleu-4")
    add_items(
        study=study,
        question=question,
        items=[
            Item("a", ratings=[0], scores={flat.text: 0.7, sparse.text: 0.1}),
            Item("b", ratings=[1], scores={flat.text: 0.7, sparse.text: 0.3}),
            Item("a", ratings=[2], scores={flat.text: 0.7}),
        ],
    )

    document = report_document(study)
    rows = {row["metric"]: row for row in document["rows"]}
    system_rows = {row["metric"]: row for row in document["system_level"]}

    assert rows["bleu-4"]["n"] == 2
    assert rows["bleu-4"]["note"] == TOO_FEW_ITEMS
    assert rows["distinct-1"]["n"] == 3
    assert rows["distinct-1"]["note"] == METRIC_CONSTANT
    for row in rows.values():
        assert set(row) >= ROW_KEYS  # today's fields stay; new ones are added
        assert row["pearson"] is None
        assert row["spearman_p"] is None
        assert row["kendall"] is None
        assert row["pearson_ci"] == [None, None]
        assert row["pearson_ci_bootstrap"] == [None, None]
    assert system_rows["distinct-1"]["n"] == 2
    assert system_rows["distinct-1"]["note"] == FEWER_THAN_THREE_SYSTEMS
    assert system_rows["distinct-1"]["pearson"] is None
    json.dumps(document, allow_nan=False)


def test_non_finite_metric_values_count_as_missing(study_and_question) -> None:
    # SQLite cannot hold NaN (it becomes NULL) but holds infinities; PostgreSQL holds both.
    study, question = study_and_question
    bleu = signature()
    responses = add_items(
        study=study,
        question=question,
        items=[
            Item("a", ratings=[r], scores={bleu.text: v}) for r, v in [(0, 0.1), (1, float("inf")), (2, 0.3)]
        ],
    )
    assert study_metric_values(study=study)[bleu.pk] == {responses[0].pk: 0.1, responses[2].pk: 0.3}


def test_one_question_only_and_the_default_reference_mode(study_and_question) -> None:
    study, question = study_and_question
    fluency = QuestionFactory.create(study=study, name="fluency", position=1)
    legacy = signature("rouge-l")
    legacy.parameters = {}
    legacy.save()
    add_items(study=study, question=question, items=[Item("a", ratings=[1], scores={legacy.text: 0.5})])

    everything = report_document(study)
    only_fluency = report_document(study, fluency)

    assert [row["question"] for row in everything["rows"]] == ["appropriateness", "fluency"]
    assert [row["question"] for row in only_fluency["rows"]] == ["fluency"]
    assert only_fluency["rows"][0]["references"] == "single"


def test_an_unreferenced_metric_carries_no_reference_mode(study_and_question) -> None:
    study, question = study_and_question
    unreferenced = signature("ruber-unreferenced", refs="single")  # as old signatures were labelled
    unreferenced.parameters = {"model": "abc"}
    unreferenced.save()
    add_items(study=study, question=question, items=[Item("a", ratings=[1], scores={unreferenced.text: 0.5})])
    [row] = report_document(study)["rows"]
    assert row["references"] == "none"
    assert row["group"] == "Unreferenced"


def test_the_report_inputs_cost_a_fixed_number_of_queries_whatever_the_study_size(
    study_and_question,
    django_assert_num_queries,
) -> None:
    study, question = study_and_question
    QuestionFactory.create(study=study, name="fluency", position=1)
    signatures = [signature(f"metric-{k}") for k in range(3)]

    def grow(count: int) -> None:
        add_items(
            study=study,
            question=question,
            items=[
                Item(
                    f"system-{i % 4}",
                    ratings=[i % 3, (i + 1) % 3],
                    scores={s.text: i / 7 + k for k, s in enumerate(signatures)},
                )
                for i in range(count)
            ],
        )

    def queries() -> int:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as captured:
            report_inputs(study=study)
        return len(captured.captured_queries)

    grow(3)
    small = queries()
    grow(40)
    assert queries() == small
    with django_assert_num_queries(small):
        report_inputs(study=study)

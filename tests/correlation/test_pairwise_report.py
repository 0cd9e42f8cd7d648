"""System win rates from pairwise judgments (stats/pairwise.py, pairwise_report.py): golden
values worked out by hand, the Wilson interval against published values, degenerate inputs, the rater
filter, and the section in the report document, its JSON, its CSV table, its figures and the page."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.test import Client
from scipy import stats as scipy_stats

from annotation.models import Annotator, PairwiseJudgment, Response
from correlation.report.exports import report_tables_csv
from stats.figures.pairwise import pairwise_matrix_figure, pairwise_win_rate_chart
from stats.figures.report import report_figures
from stats.pairwise import (
    PairwiseRecord,
    position_bias,
    wilson_interval,
    win_rate_matrix,
    win_rates,
)
from stats.report.document import document_as_json
from stats.report.pairwise import pairwise_section
from stats.report.types import AnnotatorInfo, ReportInputs, ReportOptions, ResponseInfo, SignatureInputs
from tests.correlation.builders import bump_data_version
from tests.correlation.report_documents import empty_document
from tests.correlation.report_helpers import report_document, report_page
from tests.factories import (
    AnnotatorFactory,
    DialogContextFactory,
    QuestionFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)

TOLERANCE = 1e-9


def record(
    system_a: str, system_b: str, choice: str, *, annotator: int = 1, left: bool = True
) -> PairwiseRecord:
    """A judgment between two systems' replies; reply ids follow the system names (A=1, B=2, C=3, ...)."""
    return PairwiseRecord(
        annotator=annotator,
        response_a=ord(system_a[0]) - 64,
        response_b=ord(system_b[0]) - 64,
        system_a=system_a,
        system_b=system_b,
        choice=choice,
        a_shown_left=left,
    )


# Five judgments among three systems, worked out by hand:
#   A: 4 comparisons, won 1 and 4, lost 5, tied 2  -> (2 + 0.5) / 4 = 0.625
#   B: 3 comparisons, lost 1 and 3, tied 2          -> 0.5 / 3 = 0.1667
#   C: 3 comparisons, won 3 and 5, lost 4           -> 2 / 3 = 0.6667
JUDGMENTS = [
    record("A", "B", "a"),
    record("A", "B", "tie"),
    record("B", "C", "b"),
    record("A", "C", "a"),
    record("A", "C", "b"),
]


def test_win_rates_match_the_hand_computed_values() -> None:
    rates = win_rates(JUDGMENTS)
    assert [rate.system for rate in rates] == ["C", "A", "B"]  # best first
    by_system = {rate.system: rate for rate in rates}
    assert (by_system["A"].wins, by_system["A"].losses, by_system["A"].ties, by_system["A"].comparisons) == (
        2,
        1,
        1,
        4,
    )
    assert (by_system["B"].wins, by_system["B"].losses, by_system["B"].ties) == (0, 2, 1)
    assert (by_system["C"].wins, by_system["C"].losses, by_system["C"].ties) == (2, 1, 0)
    assert by_system["A"].win_rate == pytest.approx(0.625, abs=TOLERANCE)
    assert by_system["B"].win_rate == pytest.approx(1 / 6, abs=TOLERANCE)
    assert by_system["C"].win_rate == pytest.approx(2 / 3, abs=TOLERANCE)
    for rate in rates:
        assert (rate.ci_low, rate.ci_high) == pytest.approx(
            wilson_interval(rate.win_rate * rate.comparisons, rate.comparisons)
        )
        assert rate.ci_low <= rate.win_rate <= rate.ci_high


def test_the_matrix_holds_each_ordered_pairs_win_rate_and_its_judgments() -> None:
    rates, counts = win_rate_matrix(JUDGMENTS, ["C", "A", "B"])
    assert rates == [
        [None, pytest.approx(0.5), pytest.approx(1.0)],
        [pytest.approx(0.5), None, pytest.approx(0.75)],  # A against B: a win and a tie of 2
        [pytest.approx(0.0), pytest.approx(0.25), None],
    ]
    assert counts == [[0, 2, 1], [2, 0, 2], [1, 2, 0]]
    for i in range(3):
        for j in range(3):
            if i != j:
                assert rates[i][j] + rates[j][i] == pytest.approx(1.0)  # type: ignore[operator]
    never, none_counted = win_rate_matrix([record("A", "B", "a")], ["A", "B", "C"])
    assert never[0][2] is None
    assert none_counted[0][2] == 0


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),  # the textbook example (e.g. Newcombe 1998, Table I)
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (1, 1, 0.2065, 1.0),
        (0, 0, 0.0, 1.0),
    ],
)
def test_the_wilson_interval_matches_published_values(
    successes: int, n: int, low: float, high: float
) -> None:
    assert wilson_interval(successes, n) == pytest.approx((low, high), abs=5e-4)


def test_degenerate_inputs() -> None:
    assert win_rates([]) == []
    assert win_rate_matrix([], []) == ([], [])
    # Two replies of one system say nothing about it; an unknown choice neither.
    assert win_rates([record("A", "A", "a"), record("A", "B", "maybe")]) == []
    ties = win_rates([record("A", "B", "tie"), record("B", "C", "tie")])
    assert [rate.win_rate for rate in ties] == [0.5, 0.5, 0.5]
    assert [rate.system for rate in ties] == ["A", "B", "C"]  # equal rates: by name
    single = {rate.system: rate for rate in win_rates([record("A", "B", "b")])}
    assert (single["B"].win_rate, single["A"].win_rate) == (1.0, 0.0)
    assert single["B"].ci_low == pytest.approx(0.2065, abs=5e-4)
    assert single["A"].ci_high == pytest.approx(0.7935, abs=5e-4)
    assert position_bias([record("A", "B", "tie")]).left_share is None


def test_position_bias_counts_the_side_picked() -> None:
    judgments = [
        record("A", "B", "a", left=True),  # left picked
        record("A", "B", "b", left=False),  # left picked (B was on the left)
        record("A", "B", "a", left=False),  # right picked
        record("A", "B", "tie"),
        *[record("A", "C", "a", left=True) for _ in range(6)],  # left picked
    ]
    bias = position_bias(judgments)
    assert (bias.decisive, bias.left_wins) == (9, 8)
    assert bias.left_share == pytest.approx(8 / 9)
    assert bias.p_value == pytest.approx(scipy_stats.binomtest(8, 9, 0.5).pvalue)


def _inputs(records: list[PairwiseRecord], **changes: object) -> ReportInputs:
    responses = {index: ResponseInfo(text="r", system=chr(64 + index), context="c1") for index in (1, 2, 3)}
    fields: dict[str, object] = {
        "study_id": 1,
        "study_name": "pairs",
        "data_version": 1,
        "study_threshold": 0.2,
        "responses": responses,
        "annotators": {
            1: AnnotatorInfo(1, "rater-1", True, "auto", None),
            2: AnnotatorInfo(2, "rater-2", True, "exclude", 0.9),
        },
        "questions": (),
        "signatures": (
            SignatureInputs(
                id=7, name="bleu-2", text="bleu-2|refs:single", references="single", group="Referenced"
            ),
        ),
        "metric_values": {7: {1: 0.5, 2: 0.1, 3: 0.9}},
        "pairwise": tuple(records),
    }
    fields.update(changes)
    return ReportInputs(**fields)  # type: ignore[arg-type]


def test_the_section_follows_the_filter_and_correlates_the_metrics_with_the_win_rates() -> None:
    excluded_rater = [record("A", "B", "b", annotator=2), record("A", "C", "a", annotator=2)]
    section = pairwise_section(_inputs(JUDGMENTS + excluded_rater), ReportOptions())
    assert section is not None
    assert (
        section["judgments"],
        section["judgments_total"],
        section["raters"],
        section["raters_left_out"],
    ) == (
        5,
        7,
        1,
        1,
    )
    assert [row["system"] for row in section["systems"]] == ["C", "A", "B"]
    assert section["systems"][1]["win_rate"] == pytest.approx(0.625)
    assert section["matrix"]["systems"] == ["C", "A", "B"]
    # bleu-2 means per system (C 0.9, A 0.5, B 0.1) rank the systems as their win rates do.
    (metric,) = section["metrics"]
    assert (metric["metric"], metric["n"]) == ("bleu-2", 3)
    assert metric["spearman"] == pytest.approx(1.0)
    assert [(s["system"], s["metric_mean"]) for s in metric["systems"]] == [
        ("A", 0.5),
        ("B", 0.1),
        ("C", 0.9),
    ]

    everyone = pairwise_section(_inputs(JUDGMENTS + excluded_rater), ReportOptions(filter="none"))
    assert everyone is not None
    assert (everyone["judgments"], everyone["raters_left_out"]) == (7, 0)

    without_c = pairwise_section(
        _inputs(JUDGMENTS, excluded_responses=frozenset({3})), ReportOptions()
    )  # the researcher excluded C's reply
    assert without_c is not None
    assert [row["system"] for row in without_c["systems"]] == ["A", "B"]
    assert without_c["metrics"][0]["spearman"] is None
    assert without_c["metrics"][0]["note"] == "fewer than 3 systems (n = 2)"

    assert pairwise_section(_inputs([]), ReportOptions()) is None
    ties = pairwise_section(
        _inputs([record("A", "B", "tie"), record("B", "C", "tie"), record("A", "C", "tie")]), ReportOptions()
    )
    assert ties is not None
    assert ties["metrics"][0]["note"] == "the systems' win rates are all equal"


def test_the_figures_escape_system_names_and_need_data() -> None:
    section = pairwise_section(_inputs([record("A", "B", "a")]), ReportOptions())
    assert section is not None
    section["systems"][0]["system"] = "<b>A</b>"
    section["matrix"]["systems"][0] = "<b>A</b>"
    chart = pairwise_win_rate_chart({**empty_document(), "pairwise": section})
    matrix = pairwise_matrix_figure({**empty_document(), "pairwise": section})
    assert chart is not None
    assert matrix is not None
    assert chart["data"][0]["x"][0] == "&lt;b&gt;A&lt;/b&gt;"
    assert matrix["data"][0]["y"][0] == "&lt;b&gt;A&lt;/b&gt;"
    assert chart["data"][0]["error_y"]["arrayminus"][0] == pytest.approx(1.0 - section["systems"][0]["ci"][0])
    assert pairwise_win_rate_chart(empty_document()) is None
    assert pairwise_matrix_figure(empty_document()) is None


# --- through the database -------------------------------------------------------------------------------


@pytest.fixture
def judged_study(researcher):
    """Two contexts, three systems, every pair judged by two raters: "strong" always wins, "weak" always
    loses; the rater on the left-hand pick."""
    study = StudyFactory.create(owner=researcher, pairwise_enabled=True, check_interval=0)
    QuestionFactory.create(study=study)
    systems = {name: SystemFactory.create(study=study, name=name) for name in ("strong", "middle", "weak")}
    rank = {"strong": 0, "middle": 1, "weak": 2}
    raters = [AnnotatorFactory.create(study=study) for _ in range(2)]
    for _ in range(2):
        context = DialogContextFactory.create(study=study)
        replies = sorted(
            (
                ResponseFactory.create(context=context, system=system, text=f"{name} reply")
                for name, system in systems.items()
            ),
            key=lambda reply: reply.pk,
        )
        for i, first in enumerate(replies):
            for second in replies[i + 1 :]:
                better_a = rank[first.system.name] < rank[second.system.name]
                for rater in raters:
                    PairwiseJudgment.objects.create(
                        annotator=rater,
                        response_a=first,
                        response_b=second,
                        choice="a" if better_a else "b",
                        shown_first=first,
                    )
    bump_data_version(study)
    return study


@pytest.mark.django_db
def test_the_report_document_carries_the_win_rates(judged_study) -> None:
    document = report_document(judged_study, resamples=0)
    section = document["pairwise"]
    assert section is not None
    assert [(row["system"], row["win_rate"]) for row in section["systems"]] == [
        ("strong", 1.0),
        ("middle", 0.5),
        ("weak", 0.0),
    ]
    assert section["judgments"] == 2 * 3 * 2
    assert section["systems"][0]["comparisons"] == 8
    json.loads(document_as_json(document))  # valid JSON: no NaN anywhere
    header, first = report_tables_csv(document)["pairwise"].splitlines()[:2]
    # the columns of before first, then who judged (the people, or a pairwise judge's name) and its signature
    assert header == "system,comparisons,wins,losses,ties,win_rate,ci_low,ci_high,judged_by,signature"
    assert first.startswith("strong,8,8,0,0,1.0,")
    assert first.endswith(",people,")
    names = [
        spec.name
        for spec in report_figures(document, {"questions": {}}, "appropriateness", judged_study.name)
    ]
    assert {"pairwise-win-rates", "pairwise-matrix"} <= set(names)
    assert report_document(StudyFactory.create(), resamples=0)["pairwise"] is None


@pytest.mark.django_db
def test_study_report_json_and_the_page_show_the_pairwise_section(judged_study, researcher) -> None:
    out = io.StringIO()
    call_command("study_report", judged_study.name, "--resamples", "0", stdout=out, stderr=io.StringIO())
    printed = json.loads(out.getvalue())
    assert printed["pairwise"]["systems"][0]["system"] == "strong"
    client = Client()
    client.force_login(researcher)
    page = report_page(client, f"/reports/{judged_study.pk}/?resamples=0")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-tab="pairwise"' in html
    assert 'id="pairwise-table"' in html
    assert 'data-system="strong"' in html
    # "p = 0.412" or "p < 0.001" (a no-break space), never "p = < 0.001"
    assert re.search(r"binomial test against ½: p (= \d\.\d{3}|&lt;\s0\.001|—)\)", html)
    # A rater left out by the researcher drops out of the win rates at the next computation.
    Annotator.objects.filter(study=judged_study).update(report_inclusion="exclude")
    bump_data_version(judged_study)
    section = report_document(judged_study, resamples=0)["pairwise"]
    assert section is not None
    assert (section["judgments"], section["raters_left_out"], section["systems"]) == (0, 2, [])
    assert Response.objects.filter(context__study=judged_study).count() == 6

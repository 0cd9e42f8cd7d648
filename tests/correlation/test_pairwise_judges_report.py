"""The pairwise LLM judges in the report's pairwise section (stats/report/pairwise_judges.py): their stored
verdicts (tests/correlation/judges.py) beside the people's judgments that count, in the document, on the
page, in the CSV tables and in the win-rate figure; and a document from before them still shown."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from annotation.models import Adjudication, Annotator, PairwiseJudgment, Response, Study
from annotation.selectors.pairwise_records import study_pairwise_records
from correlation.models import ReportSnapshot
from correlation.report.exports import report_tables_csv
from scoring.judges.pairwise_results import judged_pairs
from scoring.models import MetricSignature
from stats.figures.pairwise import pairwise_win_rate_chart
from stats.judge_pairwise import JudgedPair, JudgePairwiseComparison, judge_pairwise_comparison
from stats.pairwise import PairwiseRecord, SystemWinRate
from stats.report.csv_tables import report_table_names
from stats.report.document import report_document_from_json
from stats.report.pairwise_judges import position_bias_note
from stats.report.pairwise_types import PairwiseJudgeEntry, PairwiseSystem
from tests.correlation.builders import bump_data_version
from tests.correlation.judges import stored_pairwise_judge
from tests.correlation.report_helpers import report_document, report_page
from tests.factories import (
    AnnotatorFactory,
    DialogContextFactory,
    QuestionFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)

pytestmark = pytest.mark.django_db

RANK = {"strong": 0, "middle": 1, "weak": 2}
FIRST_BIAS = 0.31
BIAS_SENTENCE = (
    "the judge picks the reply shown first 0.31 more often than the second; "
    "asking both orders cancels it in its verdicts"
)
SMOLLM = "llm-pairwise (pairwise, smollm2-135m)"
QWEN = "llm-pairwise (pairwise, qwen)"


class Judged:
    """The study, its people (two who count and one the researcher left out), the reply the researcher
    excluded, and its two judges' signatures."""

    def __init__(self, researcher) -> None:
        self.study = StudyFactory.create(owner=researcher, pairwise_enabled=True, check_interval=0)
        QuestionFactory.create(study=self.study)
        systems = {name: SystemFactory.create(study=self.study, name=name) for name in RANK}
        self.people = AnnotatorFactory.create_batch(2, study=self.study)
        self.contrary = AnnotatorFactory.create(study=self.study, report_inclusion="exclude")
        pairs: list[tuple[Response, Response]] = []
        for _ in range(3):
            context = DialogContextFactory.create(study=self.study)
            # created best first: the lower id of every pair is the better system's reply
            replies = [
                ResponseFactory.create(context=context, system=system, text=f"{name} reply")
                for name, system in systems.items()
            ]
            pairs += [(one, other) for i, one in enumerate(replies) for other in replies[i + 1 :]]
        self.excluded = pairs[-3][0]  # the last context's strong reply
        for one, other in pairs:
            tie = one.system.name == "middle"  # the second person ties middle and weak
            self._judge(self.people[0], one, other, "a", shown_first=one)
            self._judge(self.people[1], one, other, "tie" if tie else "a", shown_first=other)
            self._judge(self.contrary, one, other, "b", shown_first=one)
        Adjudication.objects.create(response=self.excluded, excluded=True)
        # The judge agrees with the people but on middle against weak in the first two contexts (it ranks
        # weak above middle), and on the excluded reply's pairs, where it picks the other reply (counted,
        # they would change its win rates).
        verdicts = [
            (
                one,
                other,
                "second" if index in (2, 5) or self.excluded in (one, other) else "first",
                FIRST_BIAS,
            )
            for index, (one, other) in enumerate(pairs)
        ]
        self.biased = stored_pairwise_judge(self.study, verdicts)
        self.fair = stored_pairwise_judge(
            self.study, [(one, other, "first", -0.05) for one, other in pairs], model="qwen"
        )
        bump_data_version(self.study)

    @staticmethod
    def _judge(
        annotator: Annotator, one: Response, other: Response, choice: str, *, shown_first: Response
    ) -> None:
        PairwiseJudgment.objects.create(
            annotator=annotator, response_a=one, response_b=other, choice=choice, shown_first=shown_first
        )

    def records(self, *, contrary: bool = False) -> list[PairwiseRecord]:
        """The people's judgments that count, left out by hand: the excluded reply's, and the contrary
        rater's unless ``contrary``."""
        return [
            record
            for record in study_pairwise_records(study=self.study)
            if (contrary or record.annotator != self.contrary.pk)
            and self.excluded.pk not in (record.response_a, record.response_b)
        ]

    def pairs(self, signature: MetricSignature) -> list[JudgedPair]:
        return [
            pair
            for pair in judged_pairs(study=self.study, signature=signature)
            if self.excluded.pk not in (pair.response_a, pair.response_b)
        ]


@pytest.fixture
def judged(researcher) -> Judged:
    return Judged(researcher)


def _judge_entry(study: Study, signature: MetricSignature, **options: str) -> PairwiseJudgeEntry:
    section = report_document(study, None, resamples=0, **options)["pairwise"]
    assert section is not None
    (entry,) = [judge for judge in section.get("judges", []) if judge["signature"] == signature.text]
    return entry


def _rate(row: PairwiseSystem | None) -> tuple[object, ...] | None:
    if row is None:
        return None
    return (
        row["system"],
        row["comparisons"],
        row["wins"],
        row["losses"],
        row["ties"],
        row["win_rate"],
        *row["ci"],
    )


def _expected_rate(rate: SystemWinRate | None) -> tuple[object, ...] | None:
    if rate is None:
        return None
    return (
        rate.system,
        rate.comparisons,
        rate.wins,
        rate.losses,
        rate.ties,
        rate.win_rate,
        rate.ci_low,
        rate.ci_high,
    )


def _assert_entry_is(entry: PairwiseJudgeEntry, expected: JudgePairwiseComparison) -> None:
    """Every number of ``entry`` is ``expected``'s (stats/judge_pairwise.py)."""
    assert [(row["system"], _rate(row["human"]), _rate(row["judge"])) for row in entry["systems"]] == [
        (beside.system, _expected_rate(beside.human), _expected_rate(beside.judge))
        for beside in expected.systems
    ]
    spearman = expected.spearman
    assert (entry["n"], entry["spearman"], entry["spearman_p"], entry["spearman_ci"]) == (
        spearman.n,
        spearman.coefficient,
        spearman.p_value,
        [spearman.ci_low, spearman.ci_high],
    )
    agreement = expected.agreement
    assert entry["agreement"] == {
        "judgments": agreement.judgments,
        "decisive": agreement.decisive,
        "agreed": agreement.agreed,
        "share": agreement.share,
        "kappa": agreement.kappa,
    }
    summary = expected.summary
    assert (entry["pairs"], entry["position_bias"], entry["consistent"], entry["ties"]) == (
        summary.pairs,
        summary.position_bias,
        summary.consistent,
        summary.ties,
    )


def test_each_judge_is_set_beside_the_judgments_the_section_counts(judged: Judged) -> None:
    document = report_document(judged.study, resamples=0)
    section = document["pairwise"]
    assert section is not None
    judges = section.get("judges", [])
    assert [judge["signature"] for judge in judges] == sorted([judged.biased.text, judged.fair.text])
    (entry,) = [judge for judge in judges if judge["signature"] == judged.biased.text]
    expected = judge_pairwise_comparison(judged.records(), judged.pairs(judged.biased))
    _assert_entry_is(entry, expected)
    assert (entry["metric"], entry["display"], entry["pairs"], entry["pairs_total"]) == (
        judged.biased.name,
        SMOLLM,
        7,  # of the 9 pairs, the excluded reply's 2 are left out
        9,
    )
    # the people's win rates beside the judge's are the section's own
    assert {row["system"]: _rate(row["human"]) for row in entry["systems"]} == {
        row["system"]: _rate(row) for row in section["systems"]
    }
    assert entry["spearman"] == pytest.approx(0.5)  # the judge puts middle below weak, the people above
    assert entry["spearman_ci"] == [None, None]
    assert entry["spearman_note"] == "too few systems for an interval (n = 3)"
    # 7 pairs decided by the first person, 4 by the second (who tied middle and weak), 9 as the judge did
    assert (entry["agreement"]["decisive"], entry["agreement"]["agreed"]) == (11, 9)
    # Every exclusion matters here: counted, the left-out rater and reply would change these numbers.
    everything = judge_pairwise_comparison(
        study_pairwise_records(study=judged.study), judged_pairs(study=judged.study, signature=judged.biased)
    )
    assert everything.agreement != expected.agreement
    assert [beside.judge for beside in everything.systems] != [beside.judge for beside in expected.systems]
    legend = {name["signature"]: name["display"] for name in document.get("metric_names", [])}
    assert legend[judged.fair.text] == QWEN


def test_a_judge_that_favours_the_first_reply_says_so(judged: Judged) -> None:
    assert _judge_entry(judged.study, judged.biased)["note"] == BIAS_SENTENCE
    fair = _judge_entry(judged.study, judged.fair)
    assert fair["position_bias"] == pytest.approx(-0.05)
    assert fair["note"] == ""
    assert position_bias_note(-0.25) == (
        "the judge picks the reply shown second 0.25 more often than the first; "
        "asking both orders cancels it in its verdicts"
    )
    assert position_bias_note(0.2) != ""
    assert position_bias_note(0.199) == position_bias_note(None) == ""


def test_the_rater_filter_and_the_researchers_exclusions_apply_to_the_comparison(judged: Judged) -> None:
    everyone = _judge_entry(judged.study, judged.biased, filter="none")
    _assert_entry_is(
        everyone, judge_pairwise_comparison(judged.records(contrary=True), judged.pairs(judged.biased))
    )
    assert everyone["agreement"]["decisive"] == 11 + 7  # the contrary rater decided every pair they judged
    # The researcher brings the reply back: its judgments and verdicts count at the next computation.
    Adjudication.objects.filter(response=judged.excluded).delete()
    bump_data_version(judged.study)
    entry = _judge_entry(judged.study, judged.biased)
    assert (entry["pairs"], entry["pairs_total"]) == (9, 9)
    _assert_entry_is(
        entry,
        judge_pairwise_comparison(
            [
                record
                for record in study_pairwise_records(study=judged.study)
                if record.annotator != judged.contrary.pk
            ],
            judged_pairs(study=judged.study, signature=judged.biased),
        ),
    )


def _csv_lines(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _researchers_page(researcher, study: Study) -> tuple[Client, str]:
    """The researcher's client, and the report page it was shown (computed on the way)."""
    client = Client()
    client.force_login(researcher)
    page = report_page(client, f"/reports/{study.pk}/?resamples=0")
    assert page.status_code == 200
    return client, page.content.decode()


def test_the_page_the_csv_and_the_figure_show_the_judges(judged: Judged, researcher) -> None:
    _, html = _researchers_page(researcher, judged.study)
    assert 'id="pairwise-judges"' in html
    assert 'id="pairwise-judge-table-1"' in html
    assert 'id="pairwise-judge-table-2"' in html
    assert f">{SMOLLM}</h4>" in html
    assert 'data-judge-system="strong"' in html
    assert "The judge picks the reply shown first 0.31 more often than the second" in html

    document = report_document(judged.study, resamples=0)
    entry = _judge_entry(judged.study, judged.biased)
    tables = report_tables_csv(document)
    lines = _csv_lines(tables["pairwise"])
    assert [line["system"] for line in lines if line["judged_by"] == "people"] == ["strong", "middle", "weak"]
    judge_lines = [line for line in lines if line["judged_by"] == SMOLLM]
    assert {line["signature"] for line in judge_lines} == {judged.biased.text}
    assert [(line["system"], float(line["win_rate"]), float(line["ci_low"])) for line in judge_lines] == [
        (row["system"], row["judge"]["win_rate"], row["judge"]["ci"][0])
        for row in entry["systems"]
        if row["judge"] is not None
    ]
    (merit,) = [line for line in _csv_lines(tables["pairwise_judges"]) if line["display"] == SMOLLM]
    assert float(merit["spearman"]) == pytest.approx(entry["spearman"])
    assert float(merit["agreement"]) == pytest.approx(entry["agreement"]["share"])
    assert int(merit["decisive"]) == entry["agreement"]["decisive"]
    assert float(merit["position_bias"]) == pytest.approx(FIRST_BIAS)
    assert merit["note"] == BIAS_SENTENCE

    chart = pairwise_win_rate_chart(document)
    assert chart is not None
    section = document["pairwise"]
    assert section is not None
    in_order = [judge.get("display", "") for judge in section.get("judges", [])]
    assert sorted(in_order) == [QWEN, SMOLLM]
    assert [trace.get("name") for trace in chart["data"]] == ["people", *in_order]
    assert chart["layout"]["barmode"] == "group"
    (bars,) = [trace for trace in chart["data"] if trace["name"] == SMOLLM]
    assert bars["y"] == [row["judge"]["win_rate"] for row in entry["systems"] if row["judge"] is not None]


def test_a_document_stored_before_the_judges_still_shows(judged: Judged, researcher) -> None:
    client, _ = _researchers_page(researcher, judged.study)
    snapshot = ReportSnapshot.objects.get(study=judged.study)
    older = dict(snapshot.document or {})
    older["document_version"] = 5
    older["pairwise"] = {key: value for key, value in older["pairwise"].items() if key != "judges"}
    older["metric_names"] = [
        name for name in older["metric_names"] if not name["metric"].startswith("llm-pairwise")
    ]
    ReportSnapshot.objects.filter(pk=snapshot.pk).update(document=older)
    page = client.get(f"/reports/{judged.study.pk}/?resamples=0")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="pairwise-table"' in html
    assert 'id="pairwise-judges"' not in html
    document = report_document_from_json(older)
    assert "pairwise_judges" not in report_table_names(document)
    lines = _csv_lines(report_tables_csv(document)["pairwise"])
    assert {line["judged_by"] for line in lines} == {"people"}
    chart = pairwise_win_rate_chart(document)
    assert chart is not None
    assert len(chart["data"]) == 1
    assert "name" not in chart["data"][0]
    assert client.get(f"/reports/{judged.study.pk}/tables/pairwise.csv?resamples=0").status_code == 200


def test_a_judge_run_before_anyone_compared_a_pair_is_shown_alone(judged: Judged, researcher) -> None:
    """A researcher may run a pairwise judge before the annotators compare any pair: the report shows the
    judge's win rates on their own (they were dropped with the people's section before)."""
    PairwiseJudgment.objects.filter(response_a__context__study=judged.study).delete()
    bump_data_version(judged.study)
    document = report_document(judged.study, resamples=0)
    section = document["pairwise"]
    assert section is not None
    assert (section["judgments_total"], section["systems"]) == (0, [])
    entry = _judge_entry(judged.study, judged.biased)
    _assert_entry_is(entry, judge_pairwise_comparison([], judged.pairs(judged.biased)))
    assert {row["system"] for row in entry["systems"] if row["judge"] is not None} == set(RANK)
    assert all(row["human"] is None for row in entry["systems"])
    assert (entry["spearman"], entry["spearman_note"]) == (
        None,
        "no people's judgment counts to compare with",
    )

    _, html = _researchers_page(researcher, judged.study)
    assert 'id="pairwise-none-yet"' in html
    assert 'id="pairwise-none-counted"' not in html
    assert 'id="pairwise-judge-table-2"' in html
    lines = _csv_lines(report_tables_csv(document)["pairwise"])
    assert {line["judged_by"] for line in lines} == {SMOLLM, QWEN}  # no people's lines
    chart = pairwise_win_rate_chart(document)
    assert chart is not None
    assert sorted(trace["name"] for trace in chart["data"]) == sorted([QWEN, SMOLLM])  # no people's bars
    assert "no people's judgment yet" in chart["layout"]["title"]["subtitle"]["text"]

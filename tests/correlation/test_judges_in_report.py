"""LLM judges in the report: metrics in every section, named by their template and model (never by their
keys), each row with the question the judge asked; their masses on labels no metric of any section but kept
beside each judge, with a sentence where the model put less than half its probability on the labels.

A study of two questions, rated by three raters, scored by BLEU-2 and by two judges of the g-eval template
(one per question; the engagingness judge's model put 23% of its probability on the labels), stored without
running a model (tests/correlation/judges.py); the model "qwen2.5-0.5b" is configured nowhere here, as on a
server that reports on scores computed elsewhere.
"""

from __future__ import annotations

import csv
import io
import json
import re
from statistics import fmean

import pytest
from django.urls import reverse
from scipy import stats as scipy_stats

from annotation.models import Annotator, Rating, Response, Study
from correlation.report.exports import report_tables_csv
from correlation.report.loading import report_inputs, study_unvalued_metrics
from correlation.selectors import study_metric_signatures
from scoring.models import MetricScore, RunPurpose, RunStatus, ScoringRun
from stats.figures.names import signature_names
from stats.figures.report import report_figures
from stats.latex import report_latex
from stats.report.builder import build_report
from stats.report.document_types import MetricRow, ReportDocument
from stats.report.types import ReportOptions
from tests.correlation.builders import bump_data_version, signature
from tests.correlation.judges import StoredJudge, edited, stored_judge
from tests.correlation.report_helpers import assert_same_numbers, report_page
from tests.factories import (
    DialogContextFactory,
    QuestionFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)
from tests.latex_compile import compiled_log

pytestmark = pytest.mark.django_db
APPROPRIATE = "llm-judge (g-eval, qwen2.5-0.5b, appropriateness)"
ENGAGING = "llm-judge (g-eval, qwen2.5-0.5b, engagingness)"
MODEL = "qwen2.5-0.5b"


def _rated_study() -> tuple[Study, list[Response]]:
    """24 replies (8 contexts x 3 systems) rated on both questions by three raters, and scored by BLEU-2."""
    study = StudyFactory.create(name="judged pilot", kappa_threshold=None)
    appropriateness = QuestionFactory.create(study=study)
    engagingness = QuestionFactory.create(
        study=study, name="engagingness", scale_min=1, scale_max=5, labels=[], position=1
    )
    raters = [Annotator.objects.create(study=study, pseudonym=f"rater-{k}") for k in range(3)]
    systems = [SystemFactory.create(study=study, name=f"bot-{s}") for s in range(3)]
    bleu = signature("bleu-2")
    contexts = [DialogContextFactory.create(study=study) for _ in range(8)]
    replies = []
    for index in range(24):
        reply = ResponseFactory.create(
            context=contexts[index // 3], system=systems[index % 3], text=f"reply {index}"
        )
        for k, rater in enumerate(raters):  # the third rater differs on every other reply
            Rating.objects.create(
                annotator=rater,
                response=reply,
                question=appropriateness,
                value=(index + k // 2 * index % 2) % 3,
            )
            Rating.objects.create(
                annotator=rater, response=reply, question=engagingness, value=1 + (index * 7 + k // 2) % 5
            )
        MetricScore.objects.create(response=reply, signature=bleu, value=((index * 5) % 11) / 10)
        replies.append(reply)
    bump_data_version(study)
    return study, replies


def _judges(study: Study, replies: list[Response]) -> tuple[StoredJudge, StoredJudge]:
    """The g-eval judge of each question; the engagingness judge's model put 23% on the labels."""
    appropriate = stored_judge(
        study,
        "appropriateness",
        model=MODEL,
        scores={reply: ((index * 3) % 7) / 3 for index, reply in enumerate(replies)},
        masses={reply: 0.8 + (index % 5) / 50 for index, reply in enumerate(replies)},
    )
    engaging = stored_judge(
        study,
        "engagingness",
        model=MODEL,
        scores={reply: 1 + ((index * 2) % 9) / 2 for index, reply in enumerate(replies)},
        masses=dict.fromkeys(replies, 0.23),
    )
    return appropriate, engaging


def _document(study: Study) -> ReportDocument:
    document, _ = build_report(report_inputs(study=study), ReportOptions(resamples=100))
    return document


def _row(document: ReportDocument, question: str, display: str) -> MetricRow:
    return next(row for row in document["rows"] if row["question"] == question and row["display"] == display)


def _human_means(question: str, replies: list[Response]) -> list[float]:
    return [
        fmean(Rating.objects.filter(response=reply, question__name=question).values_list("value", flat=True))
        for reply in replies
    ]


def test_judges_are_metrics_named_by_template_and_model_with_the_question_they_asked() -> None:
    study, replies = _rated_study()
    appropriate, _ = _judges(study, replies)
    document = _document(study)
    legend = {entry["signature"]: entry for entry in document["metric_names"]}
    assert {entry["display"] for entry in legend.values()} == {"bleu-2", APPROPRIATE, ENGAGING}
    assert legend[appropriate.score.text]["metric"] == "llm-judge"
    # every statistic applies: the judge's row is scipy's on the human means and its stored scores
    row = _row(document, "appropriateness", APPROPRIATE)
    expected = scipy_stats.pearsonr(
        _human_means("appropriateness", replies), [((index * 3) % 7) / 3 for index in range(24)]
    )
    assert row["pearson"] == pytest.approx(expected.statistic, abs=1e-12)
    assert row["group"] == "LLM judge"
    assert row["judge"]["own_question"]
    assert row["judge"]["question"] == "appropriateness"
    assert (row["judge"]["template"], row["judge"]["model"]) == ("g-eval", MODEL)
    other = _row(document, "appropriateness", ENGAGING)  # correlates as any metric, marked as another's
    assert not other["judge"]["own_question"]
    assert other["judge"]["question"] == "engagingness"
    assert _row(document, "engagingness", ENGAGING)["judge"]["own_question"]
    assert {len(clusters["order"]) for clusters in document["significance_clusters"]} == {3}
    for entry in document["metric_comparisons"]:
        assert {entry["first_display"], entry["second_display"]} <= {"bleu-2", APPROPRIATE, ENGAGING}


def test_the_mass_on_labels_is_no_metric_but_each_judge_carries_its_mean_and_a_low_one_is_said() -> None:
    study, replies = _rated_study()
    appropriate, engaging = _judges(study, replies)
    document = _document(study)
    text = json.dumps(document)
    assert "llm-judge-mass" not in text  # no row, comparison, cluster, accuracy, plan or legend entry
    assert appropriate.definition.key() not in json.dumps([row.get("display") for row in document["rows"]])
    legend = {entry["signature"]: entry for entry in document["metric_names"]}
    mean = fmean(0.8 + (index % 5) / 50 for index in range(24))
    assert legend[appropriate.score.text]["judge"]["label_mass"] == pytest.approx(mean, abs=1e-15)
    assert legend[appropriate.score.text]["judge"]["label_mass_replies"] == 24
    assert legend[appropriate.score.text]["judge"]["note"] == ""
    low = legend[engaging.score.text]["judge"]
    assert low["label_mass"] == pytest.approx(0.23)
    assert low["note"] == (
        "the model put only 23% of its next-token probability on the scale's labels: the prompt or the model "
        "does not fit its question, engagingness"
    )
    own = _row(document, "engagingness", ENGAGING)
    assert own["note"].endswith("the prompt or the model does not fit this question")
    assert "does not fit its question, engagingness" in _row(document, "appropriateness", ENGAGING)["note"]
    assert "model put only" not in _row(document, "appropriateness", APPROPRIATE)["note"]


def test_existing_metrics_keep_every_number_when_judges_join() -> None:
    study, replies = _rated_study()
    before = _row(_document(study), "appropriateness", "bleu-2")
    _judges(study, replies)
    after = _row(_document(study), "appropriateness", "bleu-2")
    for key in ("rank", "display"):  # the clusters hold the judges now; the name is the same
        before.pop(key, None)  # type: ignore[misc]
        after.pop(key, None)  # type: ignore[misc]
    assert_same_numbers(before, after)


def test_the_page_csv_latex_and_figures_name_judges_and_show_their_mass(client, tmp_path) -> None:
    study, replies = _rated_study()
    appropriate, engaging = _judges(study, replies)
    client.force_login(study.owner)
    url = reverse("correlation:study-report", args=[study.pk]) + "?resamples=50"
    page = report_page(client, url).content.decode()
    assert APPROPRIATE in page
    assert ENGAGING in page
    assert 'LLM judge<span class="judge-question own"' in page
    assert ": <strong>asked this question</strong>, mass on labels 0.84</span>" in page
    assert ": asked engagingness, mass on labels 0.23</span>" in page
    assert "the prompt or the model does not fit its question, engagingness" in page
    assert appropriate.definition.key() not in re.sub(r"<code>[^<]*</code>|title=\"[^\"]*\"", "", page)
    document = _document(study)
    tables = report_tables_csv(document)
    lines = list(csv.DictReader(io.StringIO(tables["correlations"])))
    assert not any("llm-judge-mass" in line["signature"] for line in lines)
    judged = {(line["question"], line["display"]): line for line in lines if line["judge_question"]}
    assert judged[("appropriateness", APPROPRIATE)]["judge_own_question"] == "True"
    assert judged[("appropriateness", ENGAGING)]["judge_own_question"] == "False"
    assert float(judged[("engagingness", ENGAGING)]["label_mass"]) == pytest.approx(0.23)
    names = {line["display"]: line for line in csv.DictReader(io.StringIO(tables["metric_names"]))}
    assert names[ENGAGING]["judge_question"] == "engagingness"
    assert names["bleu-2"]["label_mass"] == ""
    latex = report_latex(document)
    assert r"LLM judge (g-eval, qwen2.5-0.5b, appropriateness)$^{\star}$" in latex
    assert "LLM judge (g-eval, qwen2.5-0.5b, engagingness) &" in latex  # not this table's question
    assert "Below 0.5, the prompt or the model does not fit the question: LLM judge" in latex
    assert engaging.definition.key() not in latex
    assert "llm-judge:" not in latex
    log = compiled_log(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n"
        "\\begin{document}\n" + latex + "\n\\end{document}\n",
        tmp_path,
    )
    assert "Missing character" not in log
    names_of = signature_names(document, "appropriateness")
    assert names_of[appropriate.score.text].label == APPROPRIATE
    assert names_of[appropriate.score.text].slug == "llm-judge-g-eval-qwen2-5-0-5b-appropriateness"
    _, plots = build_report(report_inputs(study=study), ReportOptions(resamples=0))
    shown = set()  # what a figure prints (names, axes, labels); the signature stays on hover (customdata)
    for figure in report_figures(document, plots, "appropriateness", study.name):
        for trace in figure.figure.get("data", []):
            labels = [trace.get("name"), *(trace.get("x") or []), *(trace.get("y") or [])]
            shown |= {label for label in labels if isinstance(label, str)}
    assert {APPROPRIATE, ENGAGING} <= shown
    assert not [label for label in shown if "llm-judge:" in label or "llm-judge-mass" in label]


def test_a_judge_a_run_left_without_values_is_listed_and_its_mass_is_not() -> None:
    study, replies = _rated_study()
    judge = stored_judge(study, "appropriateness", model=MODEL, scores={}, masses=dict.fromkeys(replies, 0.0))
    ScoringRun.objects.create(
        study=study,
        purpose=RunPurpose.SCORES,
        status=RunStatus.SUCCEEDED,
        metrics=[judge.score.name, judge.mass.name],
        signatures={judge.score.name: judge.score.pk, judge.mass.name: judge.mass.pk},
    )
    signatures = study_metric_signatures(study=study)
    assert judge.mass in signatures  # the mass has values; the judge none
    unvalued = study_unvalued_metrics(study=study, signatures=signatures)
    assert [metric.name for metric in unvalued] == [judge.score.name]
    assert unvalued[0].group == "LLM judge"
    document = _document(study)
    row = _row(document, "appropriateness", "llm-judge (g-eval, qwen2.5-0.5b)")
    assert row["no_values"] == f"run {ScoringRun.objects.get().pk} stored no value of it"
    assert row["judge"]["label_mass"] == 0.0
    assert "the model put only less than 1% of its next-token probability" in row["note"]
    assert "llm-judge-mass" not in json.dumps(document)


def test_two_templates_of_one_name_show_their_hashes() -> None:
    study, replies = _rated_study()
    scores = {reply: float(index % 4) for index, reply in enumerate(replies)}
    masses = dict.fromkeys(replies, 0.9)
    shipped = stored_judge(study, "appropriateness", model=MODEL, scores=scores, masses=masses)
    mine = stored_judge(
        study,
        "appropriateness",
        model=MODEL,
        template=edited("g-eval", "Be strict."),
        scores=scores,
        masses=masses,
    )
    legend = {entry["signature"]: entry["display"] for entry in _document(study)["metric_names"]}
    hashes = {judge: judge.definition.template.content_hash()[:8] for judge in (shipped, mine)}
    assert legend[shipped.score.text] == f"llm-judge (g-eval@{hashes[shipped]}, {MODEL})"
    assert legend[mine.score.text] == f"llm-judge (g-eval@{hashes[mine]}, {MODEL})"

"""Metrics computed elsewhere and imported in every part of the report, marked external and
never mistaken for the built-in metric of the same name; and metrics a run asked for that have no value,
listed with the reason instead of being left out."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from annotation.models import Study
from correlation.report.exports import correlation_rows_as_json, report_tables_csv
from kernel.importing.problems import ImportFile
from scoring.metrics import registry
from scoring.metrics.spec import MetricSpec
from scoring.services import scoring_run_create, scoring_run_execute
from scoring.services.external_scores import external_scores_import
from stats.figures.report import report_figures
from stats.latex import report_latex
from tests.correlation.builders import Item, add_items, signature
from tests.correlation.report_helpers import entries, report_document, report_page, report_plots
from tests.factories import QuestionFactory, StudyFactory

pytestmark = pytest.mark.django_db

QUESTION = "appropriateness"
RATINGS = [(2, 2), (1, 0), (2, 1), (2, 2), (0, 0), (0, 1), (1, 1), (0, 1), (2, 1), (1, 2)]
SYSTEMS = ("hred", "human", "retrieval")


@pytest.fixture
def study(researcher) -> Study:
    """Ten rated replies of three systems with a built-in bleu-2 and meteor, plus two imported metrics:
    "usr" and an external "bleu-2" (computed elsewhere: not the built-in one)."""
    study = StudyFactory.create(owner=researcher, name="external report")
    question = QuestionFactory.create(study=study, name=QUESTION)
    bleu, meteor = signature("bleu-2", refs="multi"), signature("meteor")
    replies = add_items(
        study=study,
        question=question,
        items=[
            Item(
                SYSTEMS[i % 3],
                ratings=list(ratings),
                scores={bleu.text: (i * 7 % 10) / 10, meteor.text: (i * 3 % 10) / 10},
                text=f"reply {i}",
            )
            for i, ratings in enumerate(RATINGS)
        ],
    )
    lines = ["response_id,metric,value,signature"]
    for index, (reply, (first, second)) in enumerate(zip(replies, RATINGS, strict=True)):
        lines.append(f"{reply.pk},usr,{(first + second) / 4 + index / 100},usr-roberta|v1")
        lines.append(f"{reply.pk},bleu-2,{index / 10},nrefs:1|tok:13a")
    external_scores_import(study=study, file=ImportFile(name="scores.csv", data="\n".join(lines).encode()))
    Study.objects.filter(pk=study.pk).update(data_version=study.data_version + 1)  # the commit's bump
    return study


USR = "usr|origin:external|sig:usr-roberta,v1"
EXTERNAL_BLEU = "bleu-2|origin:external|sig:nrefs:1,tok:13a"


def by_signature(rows: list[dict]) -> dict[str, dict]:
    return {row["signature"]: row for row in rows}


def test_the_metric_table_shows_external_metrics_beside_the_built_in_ones(study) -> None:
    rows = by_signature(entries(report_document(study), "rows"))
    assert set(rows) == {
        USR,
        EXTERNAL_BLEU,
        "bleu-2|refs:multi|tok:13a|version:test",
        "meteor|refs:single|tok:13a|version:test",
    }
    assert (rows[USR]["metric"], rows[USR]["group"], rows[USR]["origin"]) == (
        "usr (external)",
        "External",
        "external",
    )
    assert rows[EXTERNAL_BLEU]["metric"] == "bleu-2 (external)"  # never the built-in bleu-2
    builtin = rows["bleu-2|refs:multi|tok:13a|version:test"]
    assert (builtin["metric"], builtin["group"], builtin["origin"]) == ("bleu-2", "Referenced", "builtin")
    assert rows[USR]["n"] == 10
    assert rows[USR]["pearson"] > 0.9  # the imported values follow the ratings


def test_per_system_comparisons_system_level_and_quantiles_include_them(study) -> None:
    document = report_document(study)
    per_system = [row for row in entries(document, "per_system") if row["signature"] == USR]
    assert sorted(row["system"] for row in per_system) == list(SYSTEMS)
    assert {row["metric"] for row in per_system} == {"usr (external)"}
    pairs = {
        (entry["first_metric"], entry["second_metric"]) for entry in entries(document, "metric_comparisons")
    }
    assert ("bleu-2", "bleu-2 (external)") in pairs or ("bleu-2 (external)", "bleu-2") in pairs
    usr_pairs = [
        entry for entry in entries(document, "metric_comparisons") if USR in (entry["first"], entry["second"])
    ]
    assert len(usr_pairs) == 3
    assert all(entry["williams_p"] is not None for entry in usr_pairs)
    (system_level,) = [row for row in entries(document, "system_level") if row["signature"] == USR]
    assert system_level["metric"] == "usr (external)"
    assert system_level["n"] == 3
    assert any(entry["signature"] == USR for entry in entries(document, "quantiles"))
    assert document["single_vs_multi"] == []  # an external metric reads no reference of this app


def test_the_figures_name_them_external(study) -> None:
    document = report_document(study, resamples=0)
    plots = report_plots(study)
    figures = {figure.name: figure for figure in report_figures(document, plots, QUESTION, study.name)}
    assert "scatter-usr-external" in figures
    assert "system-usr-external" in figures
    assert "scatter-bleu-2-multi" in figures
    assert "scatter-bleu-2-external" in figures
    assert figures["scatter-usr-external"].title.startswith("usr (external)")
    assert "usr (external)" in json.dumps(figures["metric-comparisons"].figure)


def test_the_exports_mark_them(study) -> None:
    document = report_document(study, resamples=0)
    tables = report_tables_csv(document)
    lines = {line["signature"]: line for line in csv.DictReader(io.StringIO(tables["correlations"]))}
    assert (lines[USR]["metric"], lines[USR]["group"]) == ("usr (external)", "External")
    assert lines[EXTERNAL_BLEU]["metric"] == "bleu-2 (external)"
    assert "usr (external)" in tables["metric_comparisons"]
    assert "usr (external)" in tables["system_level"]
    assert "usr (external)" in tables["per_system"]
    rows = json.loads(correlation_rows_as_json(document["rows"]))
    assert {row["signature"]: row["origin"] for row in rows}[USR] == "external"


def test_latex_marks_them_with_a_dagger_and_says_why(study) -> None:
    latex = report_latex(report_document(study, resamples=0))
    assert r"usr$^\dagger$ &" in latex
    assert r"BLEU-2$^\dagger$ &" in latex  # the external bleu-2, apart from the built-in BLEU-2
    assert "\n & BLEU-2 & " in latex or "Referenced & BLEU-2 & " in latex
    assert r"\midrule" + "\nExternal & " in latex
    assert r"$^\dagger$Computed elsewhere and imported into the app" in latex


def test_the_report_page_shows_them(client, study) -> None:
    client.force_login(study.owner)
    html = report_page(client, reverse("correlation:study-report", args=[study.pk])).content.decode()
    table = html[html.index('id="utterance-table"') :]
    assert f'title="{USR}">usr (external)</td>' in table
    assert 'data-group="External"' in table


# --- metrics without values -----------------------------------------------------------------------------


@pytest.fixture
def unreferenced_study(researcher) -> Study:
    """Rated replies, a built-in meteor score, and no reference at all."""
    study = StudyFactory.create(owner=researcher, name="no references")
    question = QuestionFactory.create(study=study, name=QUESTION)
    meteor = signature("meteor")
    add_items(
        study=study,
        question=question,
        items=[
            Item(SYSTEMS[i % 3], ratings=list(r), scores={meteor.text: i / 10}, text=f"reply {i}")
            for i, r in enumerate(RATINGS)
        ],
    )
    return study


def test_a_referenced_metric_on_a_study_without_references_is_listed_with_the_reason(
    unreferenced_study, client, committed
) -> None:
    study = unreferenced_study
    client.force_login(study.owner)
    report_page(
        client, reverse("correlation:study-report", args=[study.pk])
    )  # a report cached before the run
    with committed():
        run = scoring_run_execute(
            run_id=scoring_run_create(study=study, metrics=["bleu-2"], enqueue=False).pk
        )
    document = report_document(study)
    (row,) = [row for row in entries(document, "rows") if row["metric"] == "bleu-2"]
    assert row["n"] == 0
    assert row["pearson"] is None
    assert row["spearman"] is None
    assert row["no_values"] == "it needs references and the study has none"
    assert row["note"] == "no values: it needs references and the study has none"
    assert row["signature"].startswith("bleu-2|")
    assert [
        entry
        for entry in entries(document, "metric_comparisons")
        if "bleu-2" in entry["first_metric"] + entry["second_metric"]
    ] == []
    assert all(entry["metric"] != "bleu-2" for entry in entries(document, "system_level"))
    # the exports carry it too
    lines = list(csv.DictReader(io.StringIO(report_tables_csv(document)["correlations"])))
    assert [line["note"] for line in lines if line["metric"] == "bleu-2"] == [row["note"]]
    assert any(r.get("no_values") for r in json.loads(correlation_rows_as_json(document["rows"])))
    latex = report_latex(document)
    assert "BLEU-2, no values: it needs references and the study has none" in latex
    # and the page, whose cached report was recomputed after the run
    html = report_page(client, reverse("correlation:study-report", args=[study.pk])).content.decode()
    assert "no values: it needs references and the study has none" in html
    assert run.signatures["bleu-2"]


def test_a_metric_undefined_on_every_reply_is_listed_with_the_count(
    unreferenced_study, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = MetricSpec(
        name="always-undefined",
        description="never has a value",
        needs_references=False,
        version="1",
        compute=lambda inputs, params: [None] * len(inputs),
        uses_tokenizer=False,
        undefined_when="it never has one",
    )
    monkeypatch.setitem(registry._SPECS, spec.name, spec)
    run = scoring_run_execute(
        run_id=scoring_run_create(study=unreferenced_study, metrics=[spec.name], enqueue=False).pk
    )
    (row,) = [
        row for row in entries(report_document(unreferenced_study), "rows") if row["metric"] == spec.name
    ]
    assert row["no_values"] == (
        f"it has no value for any of the 10 replies it was computed on (run {run.pk}): it never has one"
    )
    assert row["group"] == "Unreferenced"
    assert row["references"] == "none"


def test_a_metric_with_values_under_another_signature_is_not_listed(unreferenced_study) -> None:
    study = unreferenced_study
    scoring_run_execute(run_id=scoring_run_create(study=study, metrics=["bleu-2"], enqueue=False).pk)
    signature("bleu-2", refs="single")
    add_items(
        study=study,
        question=study.questions.get(),
        items=[Item("hred", ratings=[1, 1], scores={"bleu-2|refs:single|tok:13a|version:test": 0.5})],
    )
    rows = entries(report_document(study), "rows")
    assert [row["n"] for row in rows if row["metric"] == "bleu-2"] == [1]
    assert not any(row.get("no_values") for row in rows)

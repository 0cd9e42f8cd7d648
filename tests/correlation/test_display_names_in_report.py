"""One name for a metric everywhere: the demo study scored so that names collide (BLEU-1 by nltk and
by nlg-eval, METEOR with one reference and with several, ROUGE-L), its report page, figures, CSV tables and
LaTeX, and the benchmark page across two studies: no two rows of a table or entries of a figure share a name
while their signatures differ, and every name is the legend's.

Before every metric had one name: two "bleu-1 / bleu-1" comparison rows, three "bleu-4" accuracy rows, rank
bars "bleu-4 (2)", the benchmark's rows as full signatures beside short names.
"""

from __future__ import annotations

import csv
import html
import io
import re
from collections import defaultdict

import pytest
from django.urls import reverse

from correlation.report.exports import report_tables_csv
from stats.figures.report import report_figures
from stats.latex import report_latex
from tests.correlation.benchmark.builders import benchmark_study, bleu_like, meteor_like
from tests.correlation.builders import scored_demo_study
from tests.correlation.report_helpers import report_document, report_page, report_plots
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db
CELL = re.compile(r'<td[^>]*class="metric-name"[^>]*title="([^"]*)"[^>]*>(.*?)</td>', re.S)
TABLE = re.compile(r'<table[^>]*id="([^"]+)"[^>]*>(.*?)</table>', re.S)


@pytest.fixture
def study(django_capture_on_commit_callbacks):
    runs = [(["bleu-1", "rouge-l"], "single", ""), (["bleu-1"], "single", "nlg-eval"), (["meteor"], "single", ""),
            (["meteor"], "multi", "")]  # fmt: skip
    return scored_demo_study(
        ResearcherFactory.create(username="alice"), runs, django_capture_on_commit_callbacks
    )


def _assert_one_name_per_signature(pairs: list[tuple[str, str]], where: str) -> None:
    """(signature, name) pairs of one table or figure: a name never stands for two signatures."""
    signatures_of: dict[str, set[str]] = defaultdict(set)
    for signature, name in pairs:
        signatures_of[name].add(signature)
    shared = {name: sorted(found) for name, found in signatures_of.items() if len(found) > 1}
    assert not shared, f"{where}: one name for several signatures: {shared}"


def test_the_demo_reports_tables_figures_and_exports_name_each_metric_once(study, client) -> None:
    document = report_document(study, resamples=50)
    legend = {entry["signature"]: entry["display"] for entry in document["metric_names"]}
    assert len(set(legend.values())) == len(legend) == 5
    assert {"bleu-1 (nltk)", "bleu-1 (nlg-eval)", "meteor (single)", "meteor (multi)", "rouge-l"} == set(
        legend.values()
    )
    # the page: every table's metric cells (name, title = signature)
    client.force_login(study.owner)
    page = report_page(client, reverse("correlation:study-report", args=[study.pk]) + "?resamples=50")
    text = page.content.decode()
    tables = dict(TABLE.findall(text))
    assert {
        "utterance-table",
        "comparison-table",
        "accuracy-table",
        "system-table",
        "metric-legend-table",
    } <= set(tables)
    seen = 0
    for table_id, body in tables.items():
        cells = [(html.unescape(title), html.unescape(name).strip()) for title, name in CELL.findall(body)]
        _assert_one_name_per_signature(cells, table_id)
        for signature, name in cells:
            if signature in legend:
                assert name == legend[signature], (table_id, signature)
                seen += 1
    assert seen >= 20
    # the figures (page and PNG/SVG exports render these specs): names on legends, bars and titles
    figures = report_figures(document, report_plots(study), "appropriateness", study.name)
    names = set(legend.values())
    for figure in figures:
        for trace in figure.figure.get("data", []):
            labels = [trace.get("name")] if trace.get("name") in names else []
            labels += [label for label in trace.get("x") or [] if isinstance(label, str) and label in names]
            assert len(labels) == len(set(labels)), figure.name
    ranks = next(figure for figure in figures if figure.name == "metric-ranks")
    assert set(ranks.figure["data"][0]["x"]) <= names  # no "bleu-1 (2)"
    # the CSV tables carry the name beside the signature
    for table in ("correlations", "metric_comparisons", "pairwise_accuracy", "system_level"):
        rows = list(csv.DictReader(io.StringIO(report_tables_csv(document)[table])))
        if table == "metric_comparisons":
            pairs = [(row["first"], row["first_display"]) for row in rows]
            pairs += [(row["second"], row["second_display"]) for row in rows]
        else:
            pairs = [(row["signature"], row["display"]) for row in rows]
        _assert_one_name_per_signature(pairs, table)
        assert all(legend[signature] == name for signature, name in pairs)
    # the more-ratings sentences name metrics the same way, never by their signatures
    sentences = " ".join(document["more_ratings"][0]["metrics"])
    assert "bleu-1 (nlg-eval)" in sentences
    assert not any(signature in sentences for signature in legend)
    # LaTeX: the paper's names with the same distinguishing parts
    latex = report_latex(document)
    assert "BLEU-1 (nltk)" in latex
    assert "BLEU-1 (nlg-eval)" in latex
    assert "METEOR (multi)" in latex


def test_the_benchmark_names_each_metric_once(client) -> None:
    owner = ResearcherFactory.create(username="bob")
    nltk, coco = "bleu-1|impl:nltk|refs:single|version:test", "bleu-1|impl:nlg-eval|refs:single|version:test"
    first = benchmark_study(owner, "pilot one", {nltk: bleu_like, coco: meteor_like}, seed=1)
    second = benchmark_study(owner, "pilot two", {nltk: bleu_like}, seed=2)
    client.force_login(owner)
    page = client.get(reverse("correlation:benchmark"), {"studies": [first.pk, second.pk]})
    text = page.content.decode()
    rows = re.findall(r'<tr title="([^"]*)"[^>]*>\s*<td class="metric-name">([^<]*)', text)
    assert sorted(name.strip() for _, name in rows) == ["bleu-1 (nlg-eval)", "bleu-1 (nltk)"]
    _assert_one_name_per_signature([(html.unescape(s), n.strip()) for s, n in rows], "benchmark-table")
    # the metric on one of two studies is flagged and not bold
    assert "ranked-apart" in text


def test_the_references_curve_note_names_the_metric_it_is_about(django_capture_on_commit_callbacks) -> None:
    """ "bleu-1 combines references by joint" was about nlg-eval's BLEU-1 (joint references: no
    per-reference score) while nltk's BLEU-1 was plotted; the note now names it by its display name."""
    import json

    from annotation.importers import ImportFile
    from annotation.services.imports import study_import
    from annotation.services.studies import study_create
    from correlation.report.loading import report_inputs
    from scoring.services import scoring_run_create, scoring_run_execute

    owner = ResearcherFactory.create(username="carol")
    study = study_create(owner=owner, name="two references", scale="0-2")
    records = [
        {
            "context": [f"how was day {index} ?"],
            "response": f"it was fine {index}" if index % 2 else "not good",
            "system": system,
            "references": [f"it was a fine day {index}", f"pretty good {index} thanks"],
            "ratings": {"appropriateness": [index % 3, (index + 1) % 3]},
        }
        for index in range(6)
        for system in ("a", "b")
    ]
    data = "\n".join(json.dumps(record) for record in records).encode()
    with django_capture_on_commit_callbacks(execute=True):
        study_import(study=study, format="jsonl", files=[ImportFile(name="two.jsonl", data=data)])
        for implementation in ("", "nlg-eval"):
            run = scoring_run_create(
                study=study,
                metrics=["bleu-1"],
                references="multi",
                implementation=implementation,
                enqueue=False,
            )
            assert scoring_run_execute(run_id=run.pk).status == "succeeded"
    notes = report_inputs(study=study).reference_notes
    assert any(
        note.startswith("references curve: bleu-1 (nlg-eval) combines references by") for note in notes
    ), notes

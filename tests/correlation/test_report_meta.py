"""The meta-evaluation statistics in the report (stats/report/meta.py): the grouping option and the grouped columns,
pairwise accuracy, PERM-BOTH/PERM-INPUTS beside Williams, significance clusters as a rank, how many more
ratings; each equal to stats/meta's own functions on the study's data (those are tested against
mt-metrics-eval's vectors in tests/stats/), and shown by the page, the API, the CSV files and LaTeX."""

from __future__ import annotations

import csv
import io
from itertools import combinations

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from correlation.report.exports import report_tables_csv
from correlation.report.loading import report_inputs
from stats.figures.ranking import metric_ranking_chart
from stats.latex import report_latex
from stats.meta import (
    Groups,
    Layout,
    Statistic,
    grouped_correlations,
    permutation_tests,
    reply_pairwise_accuracy,
    significance_clusters,
    system_pairwise_accuracy,
)
from stats.report.human import human_scores
from stats.report.metrics import metric_matrix
from stats.report.rating_plan import more_ratings_entry
from stats.report.types import OptionError, ReportOptions
from tests.correlation.builders import Item, add_items, signature
from tests.correlation.report_helpers import report_document, report_get, report_page
from tests.factories import QuestionFactory, StudyFactory
from tests.stats.meta.cluster_inputs import permutation_p_values

pytestmark = pytest.mark.django_db
RESAMPLES = 200
SEED = 11
SYSTEMS = ("<i>sys0</i>", "sys1", "sys2")  # a name that must be escaped on the page


@pytest.fixture
def study(researcher):
    """8 contexts x 3 systems, 3 raters on a 1-5 scale, three metrics (one with many ties)."""
    study = StudyFactory.create(owner=researcher)
    question = QuestionFactory.create(study=study, name="appropriateness", scale_min=1, scale_max=5)
    bleu, rouge, meteor = signature("bleu-2"), signature("rouge-l"), signature("meteor")
    generator = np.random.default_rng(3)
    items = []
    for context in range(8):
        for index, system in enumerate(SYSTEMS):
            quality = index + generator.normal(0, 1)
            ratings = [int(np.clip(round(3 + quality + generator.normal(0, 0.8)), 1, 5)) for _ in range(3)]
            items.append(
                Item(
                    system,
                    ratings=ratings,
                    context=f"c{context}",
                    scores={
                        bleu.text: float(quality + generator.normal(0, 1)),
                        rouge.text: float(round(quality + generator.normal(0, 2))),  # ties
                        meteor.text: float(generator.normal(0, 1)),
                    },
                )
            )
    add_items(study=study, question=question, items=items)
    return study


def _data(study, options: ReportOptions):
    """The study's human scores, metric matrix and layout, as the report's inputs give them."""
    inputs = report_inputs(study=study)
    question = inputs.questions[0]
    scores = human_scores(question, inputs.annotators, options, inputs.study_threshold)
    items = np.array(sorted(scores), dtype=np.int64)
    x = np.array([scores[int(item)] for item in items])
    values = metric_matrix(items, list(inputs.signatures), inputs.metric_values)
    replies = [inputs.responses[int(item)] for item in items]
    layout = Layout.of([reply.context_key for reply in replies], [reply.system for reply in replies])
    return inputs, question, x, values, layout


def _document(study, grouping: str = "none"):
    return report_document(study, resamples=RESAMPLES, seed=str(SEED), grouping=grouping)


@pytest.mark.parametrize("grouping", ["context", "system"])
def test_grouped_columns_are_stats_metas_grouped_correlations(study, grouping) -> None:
    document = _document(study, grouping)
    options = ReportOptions(resamples=RESAMPLES, seed=SEED, grouping=grouping)
    _, _, x, values, layout = _data(study, options)
    groups = layout.contexts if grouping == "context" else layout.systems
    for coefficient in ("pearson", "spearman", "kendall"):
        direct = grouped_correlations(
            x, values, groups, coefficient=coefficient, resamples=RESAMPLES, seed=SEED
        )
        for row, expected in zip(document["rows"], direct, strict=True):
            grouped = row["grouped"]
            assert grouped["grouping"] == grouping
            assert grouped[coefficient] == pytest.approx(expected.value, abs=1e-12)
            assert grouped[f"{coefficient}_ci"] == pytest.approx(list(expected.ci or (None, None)), abs=1e-12)
            assert grouped["groups"] == expected.groups
            assert grouped["groups_total"] == groups.count
    assert document["options"]["grouping"] == grouping
    # The item-grouped number differs from the flat one where several systems answer each context.
    if grouping == "context":
        assert any(row["grouped"]["pearson"] != pytest.approx(row["pearson"]) for row in document["rows"])
    # Per system, grouped over the system's own replies.
    first = document["per_system"][0]
    mask = layout.systems.codes == layout.systems.names.index(first["system"])
    within = Groups.of(groups.codes[mask].tolist())
    expected = grouped_correlations(x[mask], values[mask], within, resamples=RESAMPLES, seed=SEED)[0]
    assert first["grouped"]["pearson"] == pytest.approx(expected.value, abs=1e-12)


def test_without_grouping_no_grouped_column_and_a_note_when_it_cannot_be_computed(study) -> None:
    document = _document(study)
    assert all("grouped" not in row for row in document["rows"])
    assert document["options"]["grouping"] == "none"
    # Grouped by system within one system's replies there is one group: no interval, and a note says so.
    by_system = _document(study, "system")
    assert by_system["per_system"][0]["grouped"]["pearson_ci"] == [None, None]
    assert by_system["per_system"][0]["grouped"]["note"] == "no interval: one group"


def test_pairwise_accuracy_is_stats_metas(study) -> None:
    document = _document(study)
    _, _, x, values, layout = _data(study, ReportOptions(resamples=RESAMPLES, seed=SEED))
    systems = system_pairwise_accuracy(
        x, values, layout.systems, contexts=layout.contexts, resamples=RESAMPLES, seed=SEED
    )
    contexts = reply_pairwise_accuracy(x, values, layout.contexts, resamples=RESAMPLES, seed=SEED)
    entries = document["pairwise_accuracy"]
    assert [entry["signature"] for entry in entries] == [row["signature"] for row in document["rows"]]
    for entry, at_system, at_context in zip(entries, systems, contexts, strict=True):
        assert entry["system"]["value"] == pytest.approx(at_system.value, abs=1e-12)
        assert entry["system"]["ci"] == pytest.approx(list(at_system.ci or (None, None)), abs=1e-12)
        assert entry["system"]["systems"] == 3
        assert entry["system"]["pairs"] == 3
        assert entry["system"]["calibrated"] is False
        assert entry["system"]["epsilon"] == 0.0
        assert entry["context"]["value"] == pytest.approx(at_context.value, abs=1e-12)
        assert entry["context"]["epsilon"] == pytest.approx(at_context.epsilon, abs=1e-12)
        assert entry["context"]["calibrated"] is True
        assert entry["context"]["ci"] == pytest.approx(list(at_context.ci or (None, None)), abs=1e-12)
        assert entry["context"]["pairs"] == 8 * 3
        assert entry["context"]["groups"] == 8


def test_no_context_with_two_replies_is_said(researcher) -> None:
    study = StudyFactory.create(owner=researcher)
    question = QuestionFactory.create(study=study, name="q")
    bleu = signature("bleu-2")
    add_items(
        study=study,
        question=question,
        items=[Item(f"s{i % 2}", ratings=[i % 3, (i + 1) % 3], scores={bleu.text: i / 7}) for i in range(6)],
    )
    entry = report_document(study, resamples=50)["pairwise_accuracy"][0]
    assert entry["context"]["value"] is None
    assert "no context has two replies" in entry["context"]["note"]


@pytest.mark.parametrize("grouping", ["none", "context"])
def test_permutation_p_values_and_ranks_are_stats_metas(study, grouping) -> None:
    document = _document(study, grouping)
    _, _, x, values, layout = _data(study, ReportOptions(resamples=RESAMPLES, seed=SEED))
    statistic = Statistic("pearson", grouping)
    pairs = list(combinations(range(values.shape[1]), 2))
    both = permutation_tests(
        x, values, layout, statistic, pairs, scheme="both", permutations=RESAMPLES, seed=SEED
    )
    inputs = permutation_tests(
        x, values, layout, statistic, pairs, scheme="inputs", permutations=RESAMPLES, seed=SEED
    )
    comparisons = document["metric_comparisons"]
    assert len(comparisons) == len(pairs)
    for comparison, on_both, on_inputs in zip(comparisons, both, inputs, strict=True):
        assert comparison["perm_both_p"] == on_both.p_two_sided
        assert comparison["perm_inputs_p"] == on_inputs.p_two_sided
        assert comparison["perm_both_permutations"] == on_both.permutations > 0
        assert "williams_p" in comparison
        assert "bootstrap_p" in comparison
    statistic_values = [
        row["grouped"]["pearson"] if grouping != "none" else row["pearson"] for row in document["rows"]
    ]
    tests = permutation_p_values(x, values, layout, statistic, permutations=RESAMPLES, seed=SEED)
    clusters = significance_clusters(statistic_values, lambda better, worse: tests(better, worse).p_value)
    assert [row["rank"] for row in document["rows"]] == list(clusters.ranks)
    entry = document["significance_clusters"][0]
    assert entry["order"] == [document["rows"][index]["signature"] for index in clusters.order]
    assert entry["test"] == "PERM-BOTH, one-sided"
    assert entry["permutations"] == RESAMPLES
    assert entry.get("rule") == "any"  # the WMT metrics task's rule
    assert "AssignRanks" in entry.get("rule_description", "")


@pytest.mark.parametrize("grouping", ["none", "context", "system"])
def test_each_comparison_says_which_two_statistics_its_permutation_tests_compared(study, grouping) -> None:
    """first_statistic and second_statistic: the rows' statistic of each metric (every metric scores every
    reply here), in the document, the API, the comparisons CSV and the page."""
    document = _document(study, grouping)
    by_signature = {
        row["signature"]: (row["grouped"]["pearson"] if grouping != "none" else row["pearson"])
        for row in document["rows"]
    }
    for comparison in document["metric_comparisons"]:
        assert comparison.get("first_statistic") == pytest.approx(
            by_signature[comparison["first"]], abs=1e-12
        )
        assert comparison.get("second_statistic") == pytest.approx(
            by_signature[comparison["second"]], abs=1e-12
        )
    row = next(csv.DictReader(io.StringIO(report_tables_csv(document)["metric_comparisons"])))
    assert float(row["first_statistic"]) == document["metric_comparisons"][0]["first_statistic"]
    client = APIClient()
    client.force_login(study.owner)
    url = reverse("api-study-correlations", args=[study.pk])
    body = report_get(
        client, url, {"grouping": grouping, "resamples": str(RESAMPLES), "seed": str(SEED)}
    ).json()
    assert [entry["second_statistic"] for entry in body["metric_comparisons"]] == [
        entry["second_statistic"] for entry in document["metric_comparisons"]
    ]


def test_without_resamples_no_permutations_and_a_note(study) -> None:
    document = report_document(study, resamples=0)
    assert all(row["rank"] is None for row in document["rows"])
    assert document["significance_clusters"][0]["note"].startswith("no permutations")
    assert all(entry["perm_both_p"] is None for entry in document["metric_comparisons"])
    assert all(
        entry["permutation_note"].startswith("no permutations") for entry in document["metric_comparisons"]
    )


def test_more_ratings_section_is_the_rating_plan(study) -> None:
    document = _document(study)
    inputs, question, *_ = _data(study, ReportOptions())
    entry = document["more_ratings"][0]
    assert entry == more_ratings_entry(inputs, question, ReportOptions(resamples=RESAMPLES, seed=SEED))
    assert entry["differences"]
    assert entry["noise"].startswith("From 72 ratings of 24 replies")


def test_grouping_option_parsing_and_keys() -> None:
    with pytest.raises(OptionError, match=r'^grouping: "items" is not "none", "context" or "system"'):
        ReportOptions.parse({"grouping": "items"})
    # A report cached before the option (its key names no grouping) is the report without grouping.
    old_key = "filter=study;normalise=none;resamples=1000;seed=0"
    assert ReportOptions.parse({"seed": "0"}).key == old_key
    assert ReportOptions.from_key(f"{old_key};code=abc;document=2").grouping == "none"
    grouped = ReportOptions.parse({"grouping": " context ", "seed": "0"})
    assert grouped.key == f"{old_key};grouping=context"
    assert ReportOptions.from_key(f"{grouped.key};code=abc;document=2") == grouped


def test_study_report_grouping_flag(study) -> None:
    out = io.StringIO()
    call_command(
        "study_report",
        str(study.pk),
        "--grouping",
        "context",
        "--resamples",
        "20",
        stdout=out,
        stderr=io.StringIO(),
    )
    assert '"grouping": "context"' in out.getvalue()
    assert '"pairwise_accuracy"' in out.getvalue()
    with pytest.raises(CommandError, match="grouping"):
        call_command("study_report", str(study.pk), "--grouping", "dialog", stdout=io.StringIO())


def test_the_api_gives_grouped_values_for_grouping_context(study) -> None:
    client = APIClient()
    client.force_login(study.owner)
    url = reverse("api-study-correlations", args=[study.pk])
    body = report_get(
        client, url, {"grouping": "context", "resamples": str(RESAMPLES), "seed": str(SEED)}
    ).json()
    expected = _document(study, "context")
    assert body["options"]["grouping"] == "context"
    assert [row["grouped"] for row in body["rows"]] == [row["grouped"] for row in expected["rows"]]
    assert body["pairwise_accuracy"] == expected["pairwise_accuracy"]
    assert body["more_ratings"] == expected["more_ratings"]
    refused = client.get(url, {"grouping": "turn"})
    assert refused.status_code == 400
    assert "is not" in refused.json()["grouping"][0]


def test_the_page_shows_the_select_and_the_new_columns_escaped(study, client) -> None:
    client.force_login(study.owner)
    url = reverse("correlation:study-report", args=[study.pk])
    page = report_page(client, f"{url}?grouping=context&resamples=50").content.decode()
    assert 'id="grouping-select"' in page
    assert '<option value="context" selected>' in page
    for header in (
        "Grouped r [95% CI]",
        "Contexts used",
        "Rank",
        "AssignRanks",  # the rule that made the ranks
        "Tested A",  # the two statistics the permutation tests compared
        "Tested B",
        "PERM-BOTH p",
        "PERM-INPUTS p",
        'id="accuracy-table"',
    ):
        assert header in page
    assert 'id="more-ratings"' in page
    # its own tab, not the bottom of the System level tab
    assert 'data-tab="more-ratings"' in page
    system_tab = page.split('id="tab-system"', 1)[1].split("</section>\n", 1)[0]
    assert 'id="more-ratings"' not in system_tab
    assert "&lt;i&gt;sys0&lt;/i&gt;" in page
    assert "<i>sys0</i>" not in page
    plain = report_page(client, f"{url}?resamples=50").content.decode()
    assert "Grouped r [95% CI]" not in plain
    assert "PERM-BOTH p" in plain


def test_csv_latex_and_figure_carry_the_new_values(study) -> None:
    document = _document(study, "context")
    tables = report_tables_csv(document)
    header, *lines = tables["correlations"].splitlines()
    columns = header.split(",")
    assert {"rank", "grouping", "grouped_pearson", "grouped_groups"} <= set(columns)
    first = dict(zip(columns, lines[0].split(","), strict=False))
    assert float(first["grouped_pearson"]) == document["rows"][0]["grouped"]["pearson"]
    assert first["rank"] == str(document["rows"][0]["rank"])
    assert "perm_both_p" in tables["metric_comparisons"].splitlines()[0]
    assert (
        tables["pairwise_accuracy"]
        .splitlines()[0]
        .startswith("question,metric,references,signature,system_value")
    )
    assert len(tables["pairwise_accuracy"].splitlines()) == 1 + len(document["rows"])
    assert "difference" in tables["more_ratings"]

    latex = report_latex(document)
    header_line = next(line for line in latex.splitlines() if line.startswith(r"\multicolumn{2}{l}{Metrics}"))
    assert header_line.endswith(r"& Rank \\")
    assert r"\begin{tabular}{llccc}" in latex
    assert "Rank: significance cluster by Pearson, grouped by context" in latex

    figure = metric_ranking_chart(document, "appropriateness")
    assert figure is not None
    ranks = {row["metric"]: row["rank"] for row in document["rows"]}
    assert figure["data"][0]["text"] == [f"rank {ranks[name]}" for name in figure["data"][0]["x"]]

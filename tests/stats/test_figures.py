"""The report's plotly figures (stats/figures/report.py), built from real report documents of synthetic
studies (no database). Their PNG/SVG export is tests/correlation/test_figure_export.py's."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import plotly.graph_objects as go
import pytest

from stats.figures import report as figures
from stats.figures import scatters
from stats.figures.layout import HEIGHT, LEGEND_GAP, LEGEND_ROW, plotly_text
from stats.figures.names import slug
from stats.figures.report import FigureSpec, min_max_normalised, reply_texts, report_figures
from stats.report.builder import build_report
from stats.report.document_types import ReportDocument
from stats.report.plot_types import QuestionPlots, ReportPlots
from stats.report.types import (
    AnnotatorInfo,
    QuestionInputs,
    ReferenceScores,
    ReportInputs,
    ReportOptions,
    ResponseInfo,
    SignatureInputs,
)

QUESTION = "appropriateness"
EVIL_SYSTEM = "<img src=x onerror=alert(1)>"
TEMPLATE_SYSTEM = "%{y} retrieval"  # would be read as a placeholder inside a hovertemplate
SYSTEMS = ("hred", EVIL_SYSTEM, TEMPLATE_SYSTEM)
EVIL_REPLY = "<b>x</b>"
REPLIES = 60
SIGNATURES = (
    SignatureInputs(1, "bleu-2", "bleu-2|refs:single|tok:en-v1", "single", "Referenced", {"refs": "single"}),
    SignatureInputs(2, "bleu-2", "bleu-2|refs:multi|tok:en-v1", "multi", "Referenced", {"refs": "multi"}),
    SignatureInputs(3, "bleu-2", "bleu-2|refs:multi|tok:none", "multi", "Referenced", {"refs": "multi"}),
    SignatureInputs(4, "ruber-unreferenced", "ruber-unreferenced|model:dd", "none", "Unreferenced"),
)
NOISE = {1: 0.9, 2: 0.15, 3: 0.17, 4: 0.3}  # bleu-2 single is much worse than the others
EXPECTED_NAMES = [
    "scatter-bleu-2-single",
    "scatter-bleu-2-multi-tok-en-v1",
    "scatter-bleu-2-multi-tok-none",
    "scatter-ruber-unreferenced",
    "system-bleu-2-single",
    "system-bleu-2-multi-tok-en-v1",
    "system-bleu-2-multi-tok-none",
    "system-ruber-unreferenced",
    "quantiles",
    "references-curve",
    "figure-4a",
    "figure-4b",
    "agreement-heatmap",
    "metric-ranks",
    "metric-comparisons",
]
URL_SAFE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def synthetic_inputs(replies: int = REPLIES, *, seed: int = 7) -> ReportInputs:
    """Six raters who rate every reply on 0-2 around a hidden quality (rater-5 excluded by the
    researcher), two late raters with no reply in common, four metrics and per-reference scores."""
    rng = random.Random(seed)
    responses = {
        item: ResponseInfo(
            text=EVIL_REPLY if item == 1 else f"reply number {item}",
            system=SYSTEMS[item % len(SYSTEMS)],
            context=f"context {item}",
        )
        for item in range(1, replies + 1)
    }
    quality = {item: rng.random() for item in responses}
    annotators = {
        key: AnnotatorInfo(key, f"rater-{key}", True, "exclude" if key == 5 else "auto", 0.5)
        for key in range(8)
    }
    ratings = [
        (key, item, min(2, max(0, round(2 * quality[item] + rng.gauss(0, 0.45)))))
        for key in range(6)
        for item in responses
    ]
    ratings += [(6, item, 1) for item in (1, 2, 3)] + [(7, item, 2) for item in (replies - 2, replies - 1)]
    question = QuestionInputs(QUESTION, 0, 2, tuple(ratings), {})
    metric_values = {
        signature.id: {item: quality[item] + rng.gauss(0, NOISE[signature.id]) for item in responses}
        for signature in SIGNATURES
    }
    per_reference = ReferenceScores(
        2, {item: tuple(quality[item] + rng.gauss(0, 0.6) for _ in range(4)) for item in responses}, 4
    )
    return ReportInputs(
        study_id=1,
        study_name="My study",
        data_version=1,
        study_threshold=None,
        responses=responses,
        annotators=annotators,
        questions=(question,),
        signatures=SIGNATURES,
        metric_values=metric_values,
        reference_scores=(per_reference,),
    )


@pytest.fixture(scope="module")
def report() -> tuple[ReportDocument, ReportPlots]:
    return build_report(synthetic_inputs(), ReportOptions(resamples=200))


@pytest.fixture(scope="module")
def specs(report) -> dict[str, FigureSpec]:
    document, plots = report
    return {spec.name: spec for spec in report_figures(document, plots, QUESTION, "My study")}


def _question_plots(report: tuple[ReportDocument, ReportPlots]) -> Mapping[str, Any]:
    return report[1]["questions"][QUESTION]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _row(document: dict[str, Any], signature: str) -> dict[str, Any]:
    return next(r for r in document["rows"] if r["signature"] == signature and r["question"] == QUESTION)


# --- the list of figures ------------------------------------------------------------------------------


def test_every_figure_the_data_allows_is_listed_in_page_order(specs) -> None:
    assert list(specs) == EXPECTED_NAMES


def test_every_figure_is_a_valid_plotly_figure_and_plain_json(specs) -> None:
    for spec in specs.values():
        go.Figure(spec.figure)  # plotly's validators reject an unknown or misspelt property
        json.dumps(spec.as_dict(), allow_nan=False)
        layout = spec.figure["layout"]
        assert layout["hovermode"] == "closest"
        assert 400 <= layout["height"] <= 700
        # Horizontal, or one entry a row where the figure grows by the legend's rows.
        assert layout["legend"]["orientation"] == "h" or layout["legend"].get("yref") == "container"
        legend = layout[
            "legend"
        ]  # below the plot: under its area, or at the figure's bottom in room of its own
        assert legend["y"] < 0 or (legend.get("yref") == "container" and legend["yanchor"] == "bottom")


def test_names_are_unique_url_safe_and_filenames_name_study_question_and_figure(specs) -> None:
    for name, spec in specs.items():
        assert URL_SAFE.match(name), name
        assert spec.filename == f"my-study-appropriateness-{name}"
        assert URL_SAFE.match(spec.filename)
        assert spec.title
    assert len({spec.filename for spec in specs.values()}) == len(specs)


def test_slugs_survive_names_without_ascii_and_keep_them_apart() -> None:
    assert slug("My <i>Study</i> 2024!", "study") == "my-i-study-i-2024"
    assert slug("Ünïcode Straße", "study") == "unicode-strae"
    first, second = slug("流畅度", "question"), slug("相关性", "question")
    assert URL_SAFE.match(first)
    assert URL_SAFE.match(second)
    assert first.startswith("question-")
    assert first != second
    assert len(slug("x" * 500, "study")) <= 80


def test_a_figure_without_its_data_is_left_out(report: tuple[ReportDocument, ReportPlots]) -> None:
    document, plots = report
    trimmed: ReportDocument = {
        **document,
        "metric_comparisons": [],
        "references_curve": [],
        "quantiles": [],
        "system_level": [],
        "significance_clusters": [],
    }
    question_plots: QuestionPlots = {
        **report[1]["questions"][QUESTION],
        "heatmap": None,
        "figure_4a": None,
        "figure_4b": None,
    }
    names = [
        spec.name
        for spec in report_figures(trimmed, {"questions": {QUESTION: question_plots}}, QUESTION, "My study")
    ]
    assert names == [name for name in EXPECTED_NAMES if name.startswith("scatter-")]
    assert report_figures(document, plots, "no such question", "My study") == []


# --- reply level and system level ---------------------------------------------------------------------


def test_utterance_scatter_has_a_trace_per_system_and_points_that_match_the_plots(report, specs) -> None:
    document, _ = report
    data = _question_plots(report)
    items = data["items"]
    metric = next(m for m in data["metrics"] if m["signature"] == SIGNATURES[1].text)
    figure = specs["scatter-bleu-2-multi-tok-en-v1"].figure
    assert specs["scatter-bleu-2-multi-tok-en-v1"].uses_reply_text
    assert [trace["name"] for trace in figure["data"]] == [plotly_text(s) for s in data["systems"]]
    assert sum(len(trace["x"]) for trace in figure["data"]) == REPLIES
    colours = {trace["marker"]["color"] for trace in figure["data"]}
    assert len(colours) == len(SYSTEMS)
    for trace in figure["data"]:
        system = data["systems"].index(trace["name"].replace("&lt;", "<").replace("&gt;", ">"))
        for x, y, (index, human) in zip(trace["x"], trace["y"], trace["customdata"], strict=True):
            assert items["system"][index] == system
            assert (x, y, human) == (items["x"][index], metric["values"][index], items["human"][index])
        assert trace["hovertemplate"].startswith("%{text}")
        assert "%{customdata[1]" in trace["hovertemplate"]
        assert "%{y" in trace["hovertemplate"]
    row = _row(document, SIGNATURES[1].text)
    assert figure["layout"]["title"]["text"] == (
        f"bleu-2 (multi, tok:en-v1)<br>r = {row['pearson']:.3f}, ρ = {row['spearman']:.3f}, n = {REPLIES}"
    )
    assert "jitter" in figure["layout"]["xaxis"]["title"]["text"]
    assert figure["layout"]["yaxis"]["title"]["text"] == "bleu-2 (multi, tok:en-v1)"
    assert "subtitle" not in figure["layout"]["title"]


def test_reply_texts_are_not_repeated_in_the_figures(specs) -> None:
    for spec in specs.values():
        text = json.dumps(spec.figure)
        assert "reply number" not in text
        assert "&lt;b&gt;x" not in text


def test_reply_texts_come_escaped_in_item_order(report) -> None:
    texts = reply_texts(report[1], QUESTION)
    assert len(texts) == REPLIES
    assert texts[_question_plots(report)["items"]["id"].index(1)] == "&lt;b&gt;x&lt;/b&gt;"
    assert reply_texts(report[1], "no such question") == []


@pytest.fixture(scope="module")
def large_report() -> tuple[ReportDocument, ReportPlots]:
    return build_report(synthetic_inputs(6_000, seed=11), ReportOptions(resamples=0))


def test_above_five_thousand_replies_a_seeded_sample_is_drawn_and_the_figure_says_so(large_report) -> None:
    document, plots = large_report
    built = {spec.name: spec.figure for spec in report_figures(document, plots, QUESTION, "big")}
    again = {spec.name: spec.figure for spec in report_figures(document, plots, QUESTION, "big")}
    for name in ("scatter-bleu-2-single", "figure-4a", "figure-4b"):
        figure = built[name]
        assert sum(len(trace["x"]) for trace in figure["data"]) == scatters.SCATTER_LIMIT
        assert figure["layout"]["title"]["subtitle"]["text"] == (
            "5,000 of 6,000 replies shown; statistics use all"
        )
        assert figure == again[name]  # the same sample every time
    indices = [c[0] for trace in built["scatter-bleu-2-single"]["data"] for c in trace["customdata"]]
    assert len(set(indices)) == scatters.SCATTER_LIMIT
    assert max(indices) > 5_500  # a sample across all replies, not the first 5,000


def test_system_scatter_has_one_labelled_point_per_system(report, specs) -> None:
    document, _ = report
    entry = next(e for e in document["system_level"] if e["signature"] == SIGNATURES[0].text)
    figure = specs["system-bleu-2-single"].figure
    (trace,) = figure["data"]
    assert trace["x"] == [s["human_mean"] for s in entry["systems"]]
    assert trace["y"] == [s["metric_mean"] for s in entry["systems"]]
    assert trace["text"] == [plotly_text(s["system"]) for s in entry["systems"]]
    assert "text" in trace["mode"]
    assert f"r = {entry['pearson']:.3f}" in figure["layout"]["title"]["text"]
    assert figure["layout"]["xaxis"]["title"]["text"] == "mean human score"
    assert figure["layout"]["yaxis"]["title"]["text"] == "mean bleu-2 (single)"


def test_system_labels_point_away_from_the_plot_edges_inside_padded_ranges(report, specs) -> None:
    """a label centred on a point at the edge ran past the axis ("alencoder_train") or over the
    tick labels ("0.15alencoder_train")."""
    (trace,) = specs["system-bleu-2-single"].figure["data"]
    layout = specs["system-bleu-2-single"].figure["layout"]
    left, right = trace["x"].index(min(trace["x"])), trace["x"].index(max(trace["x"]))
    assert trace["textposition"][left] == "top right"
    assert trace["textposition"][right] == "top left"
    low, high = layout["xaxis"]["range"]
    assert low < min(trace["x"])
    assert max(trace["x"]) < high
    bottom, top = layout["yaxis"]["range"]
    span = max(trace["y"]) - min(trace["y"])
    assert bottom < min(trace["y"])
    assert top >= max(trace["y"]) + 0.2 * span - 1e-12
    assert scatters._padded_range([0.5, 0.5], low=0.1, high=0.1) == pytest.approx([0.495, 0.505])


# --- quantiles and the number of references -----------------------------------------------------------


def test_quantile_lines_are_min_max_normalised_per_metric_with_raw_means_on_hover(report, specs) -> None:
    document, _ = report
    figure = specs["quantiles"].figure
    entries = [e for e in document["quantiles"] if e["question"] == QUESTION]
    assert len(figure["data"]) == len(entries) == len(SIGNATURES)
    for trace, entry in zip(figure["data"], entries, strict=True):
        means = [group["metric_mean"] for group in entry["groups"]]
        low, high = min(means), max(means)
        assert trace["x"] == [1, 2, 3, 4, 5]
        assert trace["y"] == pytest.approx([(m - low) / (high - low) for m in means])
        assert min(trace["y"]) == 0.0
        assert max(trace["y"]) == 1.0
        assert [row[0] for row in trace["customdata"]] == means
    assert min_max_normalised([2.0, 2.0, 2.0]) == [0.5, 0.5, 0.5]
    assert min_max_normalised([1.0, 3.0, 2.0]) == [0.0, 1.0, 0.5]


def test_references_curve_has_pearson_shown_spearman_one_click_away_and_sd_bands(report, specs) -> None:
    document, _ = report
    (entry,) = [e for e in document["references_curve"] if e["question"] == QUESTION]
    figure = specs["references-curve"].figure
    lines = [t for t in figure["data"] if t.get("fill") is None]
    bands = [t for t in figure["data"] if t.get("fill") == "toself"]
    assert [(t["legendgroup"], t["visible"]) for t in lines] == [
        ("pearson", True),
        ("spearman", "legendonly"),
    ]
    assert [(t["legendgroup"], t["visible"]) for t in bands] == [
        ("pearson", True),
        ("spearman", "legendonly"),
    ]
    assert lines[1]["legendgrouptitle"]["text"].startswith("Spearman")
    ks = [p["references"] for p in entry["points"]]
    means = [p["pearson_mean"] for p in entry["points"]]
    sds = [p["pearson_sd"] for p in entry["points"]]
    assert lines[0]["x"] == ks == [1, 2, 3, 4]
    assert lines[0]["y"] == means
    assert bands[0]["x"] == ks + ks[::-1]
    assert bands[0]["y"] == pytest.approx(
        [m + s for m, s in zip(means, sds, strict=True)]
        + [m - s for m, s in zip(means, sds, strict=True)][::-1]
    )
    assert figure["layout"]["xaxis"]["title"]["text"] == "number of references"


def test_references_curve_legend_has_room_of_its_own_and_exports_leave_out_the_click_hint(specs) -> None:
    """the legend squashed the plot into a thin band, overlapped the x axis title in the PNG and
    was cut off, and the PNG still said "(click to show)"."""
    figure = specs["references-curve"].figure
    layout = figure["layout"]
    assert layout["legend"]["yref"] == "container"
    assert layout["legend"]["yanchor"] == "bottom"
    assert layout["legend"]["y"] * layout["height"] == pytest.approx(LEGEND_GAP, abs=0.1)
    legend_height = layout["height"] - HEIGHT
    assert legend_height >= 2 * LEGEND_ROW  # a title and one metric
    assert layout["margin"]["b"] == 60 + legend_height  # the plot keeps the height of the others
    exported = figures.figure_for_export(figure)
    assert exported["layout"] == layout
    assert {trace["legendgroup"] for trace in exported["data"]} == {"pearson"}
    assert figures.CLICK_TO_SHOW not in json.dumps(exported)
    assert figures.CLICK_TO_SHOW in json.dumps(figure)  # the page keeps its hint


# --- human agreement ----------------------------------------------------------------------------------


def test_figure_4a_plots_the_median_rater_against_the_rest_with_reply_indices(report, specs) -> None:
    data = _question_plots(report)
    entry = data["figure_4a"]
    figure = specs["figure-4a"].figure
    (trace,) = figure["data"]
    assert trace["x"] == entry["x"]
    assert trace["y"] == entry["y"]
    assert [data["items"]["id"][c[0]] for c in trace["customdata"]] == entry["items"]
    assert [c[1:] for c in trace["customdata"]] == [
        [r, o] for r, o in zip(entry["rest"], entry["own"], strict=True)
    ]
    assert entry["annotator"] in figure["layout"]["title"]["text"]
    assert f"r = {entry['pearson']:.3f}" in figure["layout"]["title"]["text"]
    assert figure["layout"]["yaxis"]["title"]["text"] == f"{entry['annotator']} (jittered)"


def test_figure_4b_shows_the_halves_and_the_papers_caveat_under_the_plot(report, specs) -> None:
    entry = _question_plots(report)["figure_4b"]
    figure = specs["figure-4b"].figure
    (trace,) = figure["data"]
    assert trace["x"] == entry["x"]
    assert trace["y"] == entry["y"]
    (note,) = figure["layout"]["annotations"]
    assert note["text"].replace("<br>", " ") == entry["caveat"]
    assert note["yanchor"] == "top"
    assert note["y"] == 0
    assert note["yshift"] < 0
    assert f"({len(entry['first'])} raters)" in figure["layout"]["xaxis"]["title"]["text"]


def test_agreement_heatmap_shows_kappa_with_gaps_shared_replies_and_left_out_raters(report, specs) -> None:
    heatmap = _question_plots(report)["heatmap"]
    (trace,) = specs["agreement-heatmap"].figure["data"]
    assert trace["type"] == "heatmap"
    assert trace["z"] == heatmap["kappa"]
    assert trace["customdata"] == heatmap["shared"]
    late, other = heatmap["raters"].index("rater-6"), heatmap["raters"].index("rater-7")
    assert trace["z"][late][other] is None  # no reply in common: not computable, a gap
    assert trace["hoverongaps"] is False
    assert (trace["zmin"], trace["zmax"]) == (-1, 1)
    assert trace["colorbar"]["title"]["text"] == "weighted κ"
    assert "rater-5 (left out)" in trace["x"]
    assert trace["x"] == trace["y"]
    assert "rater-0" in trace["x"]
    assert "%{customdata}" in trace["hovertemplate"]
    assert trace["texttemplate"] == "%{z:.2f}"  # the number in each cell


def test_metric_comparison_matrix_colours_differences_and_stars_significant_pairs(report, specs) -> None:
    document, _ = report
    entries = [e for e in document["metric_comparisons"] if e["question"] == QUESTION]
    assert any(e["winner"] for e in entries)
    assert not all(e["winner"] for e in entries)
    (trace,) = specs["metric-comparisons"].figure["data"]
    order = [s.text for s in SIGNATURES]
    assert (
        trace["x"]
        == trace["y"]
        == [
            "bleu-2 (single)",
            "bleu-2 (multi, tok:en-v1)",
            "bleu-2 (multi, tok:none)",
            "ruber-unreferenced",
        ]
    )
    for entry in entries:
        i, j = order.index(entry["first"]), order.index(entry["second"])
        assert trace["z"][i][j] == pytest.approx(entry["pearson_difference"])
        assert trace["z"][j][i] == pytest.approx(-entry["pearson_difference"])
        mark = "*" if entry["winner"] else ""
        assert trace["text"][i][j] == trace["text"][j][i] == mark
        assert trace["customdata"][i][j][:2] == [f"{entry['williams_p']:.3g}", f"{entry['bootstrap_p']:.3g}"]
    assert all(trace["z"][k][k] is None for k in range(len(order)))
    assert trace["zmin"] == -trace["zmax"]
    assert "Williams" in trace["hovertemplate"]
    assert "bootstrap" in trace["hovertemplate"]


# --- escaping -----------------------------------------------------------------------------------------


def test_plotly_text_escapes_the_three_characters_plotly_reads() -> None:
    assert plotly_text("a & <b>c</b>") == "a &amp; &lt;b&gt;c&lt;/b&gt;"
    assert plotly_text('"quoted"') == '"quoted"'  # plotly does not decode &quot;


def test_no_outside_string_reaches_plotly_unescaped(specs) -> None:
    for spec in specs.values():
        for text in _strings(spec.figure):
            assert "<" not in text.replace("<br>", "").replace("<extra></extra>", ""), (spec.name, text)
    legend = [trace["name"] for trace in specs["scatter-bleu-2-single"].figure["data"]]
    assert plotly_text(EVIL_SYSTEM) in legend
    assert "&lt;img src=x onerror=alert(1)&gt;" in specs["system-bleu-2-single"].figure["data"][0]["text"]


def test_outside_strings_never_enter_a_hovertemplate(specs) -> None:
    for spec in specs.values():
        for trace in spec.figure["data"]:
            template = trace.get("hovertemplate", "")
            assert "retrieval" not in template
            assert "img" not in template
            assert "rater-" not in template


def test_metric_and_rater_names_are_escaped_too() -> None:
    inputs = synthetic_inputs()
    evil_signature = SignatureInputs(9, "<b>m</b>", "<b>m</b>|refs:single", "single", "Referenced")
    annotators = {key: replace(info, pseudonym=f"<i>{key}</i>") for key, info in inputs.annotators.items()}
    evil = replace(
        inputs,
        signatures=(*inputs.signatures, evil_signature),
        metric_values={**inputs.metric_values, 9: inputs.metric_values[1]},
        annotators=annotators,
    )
    document, plots = build_report(evil, ReportOptions(resamples=50))
    built = report_figures(document, plots, QUESTION, "<script>study</script>")
    assert "scatter-b-m-b-single" in [spec.name for spec in built]
    for spec in built:
        assert URL_SAFE.match(spec.filename)
        assert spec.filename.startswith("script-study-script-")
        for text in _strings(spec.figure):
            assert "<" not in text.replace("<br>", "").replace("<extra></extra>", ""), (spec.name, text)

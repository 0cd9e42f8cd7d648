"""The report's figures as plotly figure dicts built in Python.

The page renders these dicts as they are, and the exports write the same dicts as images, so a figure in
a paper is the figure on the screen. Each builder reads the report document and its plots object
(stats/report/builder.py) for one question:

* reply-level scatter per metric signature: RUBER (seed 000) Figures 4(c)-(h), human score plus the
  plots' N(0, 0.25^2) jitter on x, the metric on y, one colour per system;
* system-level scatter per signature: seed 003 Figure 1, one labelled point per system;
* the quantile plot: seed 000 Figure 1, each metric's mean per human-score quintile, min-max normalised
  per metric because the metrics live on different scales (raw means on hover);
* correlation against the number of references: seed 003 Figure 2, mean Pearson +- sd over random
  subsets, Spearman as a second legend group hidden until clicked;
* seed 000 Figure 4(a) (the median-correlated rater against the mean of the others) and 4(b) (one random
  half of the raters against the other, with the paper's caveat under the plot);
* the raters x raters weighted-kappa heat map and the metric x metric matrix of differences in Pearson's
  r, starred where Williams' test and the paired bootstrap agree that the difference is significant;
* with pairwise judgments, the systems' win rates and their win-rate matrix (stats/figures/pairwise.py).

Strings from outside (reply texts, system, metric and rater names, study names) are escaped with
:func:`plotly_text`: plotly reads a few HTML-like tags (``<b>``, ``<a href>``, ``<br>``...) in titles,
labels, hover text and annotations, and turns ``&amp; &lt; &gt;`` back into text. They only ever travel
as data (trace names, ``text``, axis categories), never inside a ``hovertemplate``, where ``%{...}``
would be read as a placeholder.

Reply texts are stored once per question (``plots["questions"][q]["items"]["text"]``). A figure whose
:attr:`FigureSpec.uses_reply_text` is true has, in each trace, ``customdata[i][0]`` = the reply's index
into that array and a hovertemplate that starts with ``%{text}``: the page sets each such trace's ``text``
from :func:`reply_texts` (already escaped) before rendering, so the texts are not repeated per metric.

Pure Python: no Django and no browser here (import-linter contract). The PNG and SVG files are drawn by
correlation/report/figure_export.py, through kaleido and a headless Chromium, from :func:`figure_for_export`.
"""

from __future__ import annotations

import hashlib
import math
import re
import textwrap
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from stats.figures.pairwise import (
    MATRIX_LABEL_ROOM,
    pairwise_matrix_figure,
    pairwise_win_rate_chart,
    slanted_label_room,
)
from stats.figures.ranking import metric_ranking_chart
from stats.report.document_types import ReferencePointEntry, ReportDocument
from stats.report.plot_types import (
    HalvesPoints,
    QuestionPlots,
    RaterVsRestPoints,
    ReportPlots,
    question_plots,
)

PALETTE = (
    "#2d5bd7",
    "#d9822b",
    "#1f8a4c",
    "#c0392b",
    "#8e44ad",
    "#16a2b8",
    "#7f6a00",
    "#e84393",
    "#5d6778",
    "#00a676",
)  # the same colours as static/correlation/report.js
HEIGHT = 420
SCATTER_LIMIT = 5_000  # points per scatter plot; above it a seeded sample is drawn
SAMPLE_SEED = 20170211
EXPORT_WIDTH = 720  # pixels, of a figure without a width of its own in a PNG or SVG file
CAVEAT_LINE = 100  # characters per line of an annotation under a plot (plotly does not wrap)
SIGNIFICANCE_MARK = "*"
CLICK_TO_SHOW = "(click to show)"  # a legend hint of the page; exports leave it out (figure_for_export)
LEGEND_ROW = 20  # pixels per legend row (11 px text)
LEGEND_GAP = 8  # pixels between a legend below the plot and the figure's bottom edge
MATRIX_TICK_ANGLE = 40  # degrees a matrix's column labels are slanted
LABEL_CLOSE = 0.1  # of the y span: a point this close above another sits where the other's label would
REFERENCE_MODES = ("single", "multi")
Entry = TypeVar("Entry", bound=Mapping[str, object])
CurveCoefficient = Literal["pearson", "spearman"]


@dataclass(frozen=True)
class FigureSpec:
    """One figure of a question: ``name`` is unique per question and safe in a URL path and a file name;
    ``title`` is plain text (escape it where HTML is written); ``figure`` is the plotly dict;
    ``filename`` names study, question and figure, without an extension."""

    name: str
    title: str
    figure: dict[str, Any]
    filename: str
    uses_reply_text: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "filename": self.filename,
            "uses_reply_text": self.uses_reply_text,
            "figure": self.figure,
        }


def plotly_text(value: object) -> str:
    """``value`` as text that plotly shows literally (as static/correlation/report.js's escapeText)."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def reply_texts(plots: ReportPlots, question: str) -> list[str]:
    """The question's reply texts, escaped for plotly, indexed as ``customdata[i][0]`` of the scatters."""
    items = question_plots(plots, question).get("items") or {}
    return [plotly_text(text) for text in items.get("text", [])]


def report_figures(
    document: ReportDocument, plots: ReportPlots, question: str, study_name: str
) -> list[FigureSpec]:
    """Every figure the data of ``question`` allows, in the order the page shows them; a figure whose
    data is missing is left out."""
    names = signature_names(document, question)
    prefix = f"{slug(study_name, 'study')}-{slug(question, 'question')}"
    found: list[tuple[str, str, dict[str, Any] | None, bool]] = []
    for signature in _signatures(document, question):
        label = names[signature].label
        found.append(
            (
                f"scatter-{names[signature].slug}",
                f"{label}: reply level",
                utterance_scatter(document, plots, question, signature),
                True,
            )
        )
    for signature in _signatures(document, question):
        found.append(
            (
                f"system-{names[signature].slug}",
                f"{names[signature].label}: system level",
                system_scatter(document, plots, question, signature),
                False,
            )
        )
    found += [
        (
            "quantiles",
            "Metric means per human-score quintile",
            quantile_plot(document, plots, question),
            False,
        ),
        (
            "references-curve",
            "Correlation against the number of references",
            references_curve(document, plots, question),
            False,
        ),
        ("figure-4a", "Median-correlated rater against the rest", figure_4a(document, plots, question), True),
        (
            "figure-4b",
            "One random half of the raters against the other",
            figure_4b(document, plots, question),
            True,
        ),
        (
            "agreement-heatmap",
            "Agreement between raters",
            agreement_heatmap(document, plots, question),
            False,
        ),
        (
            "metric-ranks",
            "Metrics ranked, with significance clusters",
            metric_ranking_chart(document, question),
            False,
        ),
        (
            "metric-comparisons",
            "Metric against metric: difference in Pearson's r",
            metric_comparison_matrix(document, plots, question),
            False,
        ),
        # Study-wide, not per question (stats/figures/pairwise.py).
        ("pairwise-win-rates", "Win rate per system", pairwise_win_rate_chart(document), False),
        ("pairwise-matrix", "Pairwise win rates", pairwise_matrix_figure(document), False),
    ]
    return [
        FigureSpec(name, title, figure, f"{prefix}-{name}", uses_reply_text)
        for name, title, figure, uses_reply_text in found
        if figure is not None
    ]


# --- names -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignatureName:
    label: str  # plain text, e.g. "bleu-2 (multi)"; unique within the question
    slug: str  # e.g. "bleu-2-multi"; unique within the question


def slug(value: str, fallback: str) -> str:
    """Lower-case ASCII letters, digits and hyphens; a name with none of them (e.g. all Chinese) becomes
    ``fallback`` plus a short hash of it, so that two such names stay apart."""
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:80].strip("-")
    return text or f"{fallback}-{_short_hash(value)}"


def signature_names(document: ReportDocument, question: str) -> dict[str, SignatureName]:
    """A label and a slug per signature of ``question``: the label is the document's display name
    (``metric_names``; in a document from before them, metric and reference mode, "bleu-2 (multi)", plus the
    differing parameters); the slug the metric and reference mode ("bleu-2-multi"), plus the parameters that
    tell apart signatures sharing both (e.g. "bleu-2-multi-tok-none"), plus a short hash if even that does
    not."""
    described: dict[str, tuple[str, str]] = {}
    for row in _of_question(document.get("rows"), question):
        described.setdefault(row["signature"], (row["metric"], row.get("references") or ""))
    for signature, metric in [
        *((e["signature"], e["metric"]) for e in _of_question(document.get("system_level"), question)),
        *((e["signature"], e["metric"]) for e in _of_question(document.get("quantiles"), question)),
        *((e["signature"], e["metric"]) for e in _of_question(document.get("references_curve"), question)),
    ]:
        described.setdefault(signature, (metric, ""))
    for comparison in _of_question(document.get("metric_comparisons"), question):
        described.setdefault(comparison["first"], (comparison["first_metric"], ""))
        described.setdefault(comparison["second"], (comparison["second_metric"], ""))
    groups: dict[str, list[str]] = {}
    for signature, (metric, references) in described.items():
        references = references or _parameters(signature).get("refs", "")
        base = f"{metric}-{references}" if references in REFERENCE_MODES else metric
        groups.setdefault(slug(base, "metric"), []).append(signature)
    names: dict[str, SignatureName] = {}
    for base_slug, signatures in groups.items():
        parameters = {signature: _parameters(signature) for signature in signatures}
        keys = sorted({key for values in parameters.values() for key in values} - {"refs"})
        differing = [key for key in keys if len({values.get(key) for values in parameters.values()}) > 1]
        for signature in signatures:
            metric, references = described[signature]
            references = references or parameters[signature].get("refs", "")
            label = f"{metric} ({references})" if references in REFERENCE_MODES else metric
            name_slug = base_slug
            if len(signatures) > 1:
                extra = [(key, parameters[signature].get(key, "-")) for key in differing]
                tools = [values.get("impl", "") for values in parameters.values()]
                if "impl" in differing and len(set(tools)) == len(tools):
                    # two tools' numbers of one metric: the tool tells them apart, not its every parameter
                    extra = [("impl", parameters[signature].get("impl", "-"))]
                label += " [" + ", ".join(f"{key}:{value}" for key, value in extra) + "]" if extra else ""
                name_slug += "-" + slug("-".join(f"{key}-{value}" for key, value in extra), "variant")
            names[signature] = SignatureName(label, name_slug)
    # The labels are the report's display names (issue 34: stats/display_names.py), the page's and every
    # export's; the slugs (figure and file names) stay what they were.
    legend = {entry["signature"]: entry["display"] for entry in document.get("metric_names") or []}
    names = {
        signature: SignatureName(legend.get(signature, name.label), name.slug)
        for signature, name in names.items()
    }
    return _made_unique(names)


def _made_unique(names: dict[str, SignatureName]) -> dict[str, SignatureName]:
    labels = [name.label for name in names.values()]
    slugs = [name.slug for name in names.values()]
    return {
        signature: SignatureName(
            f"{name.label} [{_short_hash(signature)}]" if labels.count(name.label) > 1 else name.label,
            f"{name.slug}-{_short_hash(signature)}" if slugs.count(name.slug) > 1 else name.slug,
        )
        for signature, name in names.items()
    }


def _parameters(signature: str) -> dict[str, str]:
    """``bleu-2|refs:multi|tok:none`` -> {"refs": "multi", "tok": "none"}."""
    return dict(part.split(":", 1) for part in signature.split("|")[1:] if ":" in part)


def _short_hash(value: str) -> str:
    return hashlib.sha1(value.encode("utf-8")).hexdigest()[:8]


# --- reply level and system level (RUBER Figures 4(c)-(h); seed 003 Figure 1) --------------------------


def utterance_scatter(
    document: ReportDocument, plots: ReportPlots, question: str, signature: str
) -> dict[str, Any] | None:
    """One point per reply: the human score with the plots' jitter on x, the metric on y, a trace per
    system. Hover: the reply text (filled by the page, see the module docstring), the system, the raw
    human score and the metric value."""
    data = question_plots(plots, question)
    items = data.get("items")
    metric = next((m for m in data.get("metrics") or [] if m.get("signature") == signature), None)
    if not items or metric is None:
        return None
    values = metric["values"]
    present = [index for index, value in enumerate(values) if value is not None]
    if not present:
        return None
    shown, note = _sampled(present)
    systems = data.get("systems") or []
    traces = []
    for system_index, system in enumerate(systems):
        rows = [index for index in shown if items["system"][index] == system_index]
        if not rows:
            continue
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": plotly_text(system),
                "x": [items["x"][index] for index in rows],
                "y": [values[index] for index in rows],
                "customdata": [[index, items["human"][index]] for index in rows],
                "marker": {"color": _colour(system_index), "size": 6, "opacity": 0.6},
                "hovertemplate": "%{text}<br>system: %{fullData.name}<br>human: %{customdata[1]:.3g}"
                "<br>metric: %{y:.4g}<extra></extra>",
            }
        )
    label = signature_names(document, question)[signature].label
    row = next((r for r in _of_question(document.get("rows"), question) if r["signature"] == signature), None)
    if row is not None:
        coefficients, n = _coefficients(row.get("pearson"), row.get("spearman")), row.get("n", len(present))
    else:  # the plots' own coefficients
        coefficients, n = _coefficients(metric.get("pearson"), metric.get("spearman")), len(present)
    layout = _layout(
        title=f"{plotly_text(label)}<br>{coefficients}, n = {n}",
        subtitle=note,
        x_title="human score (jittered, N(0, 0.25²))",
        y_title=plotly_text(label),
    )
    if len(traces) > 1:  # plotly shows a legend from two traces on: one row per system, under the axis title
        _legend_below(layout, rows=len(traces), orientation="v")
    return {"data": traces, "layout": layout}


def system_scatter(
    document: ReportDocument, plots: ReportPlots, question: str, signature: str
) -> dict[str, Any] | None:
    """One labelled point per system: its mean human score on x, its mean metric value on y, both over
    the replies that have the metric."""
    entry = next(
        (e for e in _of_question(document.get("system_level"), question) if e["signature"] == signature),
        None,
    )
    if entry is None or not entry.get("systems"):
        return None
    order = list(question_plots(plots, question).get("systems") or [])
    systems = entry["systems"]
    colours = [
        _colour(order.index(s["system"]) if s["system"] in order else position)
        for position, s in enumerate(systems)
    ]
    positions = _label_positions([s["human_mean"] for s in systems], [s["metric_mean"] for s in systems])
    trace = {
        "type": "scatter",
        "mode": "markers+text",
        "name": "systems",
        "x": [s["human_mean"] for s in systems],
        "y": [s["metric_mean"] for s in systems],
        "text": [plotly_text(s["system"]) for s in systems],
        "textposition": positions,
        "cliponaxis": False,
        "customdata": [[s["n"]] for s in systems],
        "marker": {"color": colours, "size": 11},
        "showlegend": False,
        "hovertemplate": "%{text}<br>mean human: %{x:.3f}<br>mean metric: %{y:.4g}"
        "<br>%{customdata[0]} replies<extra></extra>",
    }
    label = plotly_text(signature_names(document, question)[signature].label)
    layout = _layout(
        title=f"{label}, system level<br>{_coefficients(entry['pearson'], entry['spearman'])}, "
        f"{len(systems)} systems",
        x_title="mean human score",
        y_title=f"mean {label}",
    )
    layout["xaxis"]["range"] = _padded_range([s["human_mean"] for s in systems], low=0.08, high=0.08)
    below = any(position.startswith("bottom") for position in positions)  # room under the lowest point
    layout["yaxis"]["range"] = _padded_range(
        [s["metric_mean"] for s in systems], low=0.2 if below else 0.08, high=0.2
    )
    return {"data": [trace], "layout": layout}


def _label_positions(x: Sequence[float | None], y: Sequence[float | None]) -> list[str]:
    """Where each point's label goes: away from the nearer side of the plot (a label centred on a point
    at the edge ran past the axis, clipped or over the tick labels: "0.15alencoder_train"), and under its
    point when another point sits just above it (the label ran under that point's marker, issue 34)."""
    return [f"{vertical} {side}" for vertical, side in zip(_label_heights(y), _label_sides(x), strict=True)]


def _label_sides(x: Sequence[float | None]) -> list[str]:
    """Left third of the points: labels to their right; right third: to their left; else centred."""
    finite = [value for value in x if value is not None]
    if not finite or max(finite) - min(finite) <= 0:
        return ["center" for _ in x]
    low, high = min(finite), max(finite)
    sides = []
    for value in x:
        share = 0.5 if value is None else (value - low) / (high - low)
        sides.append("right" if share < 1 / 3 else "left" if share > 2 / 3 else "center")
    return sides


def _label_heights(y: Sequence[float | None]) -> list[str]:
    """Under its point ("bottom") when another point is above it within LABEL_CLOSE of the span of ``y``,
    closer than any below it; else above ("top")."""
    finite = [value for value in y if value is not None and math.isfinite(value)]
    span = max(finite) - min(finite) if finite else 0.0
    heights = []
    for index, value in enumerate(y):
        if value is None or not math.isfinite(value) or span <= 0:
            heights.append("top")
            continue
        others = [
            other
            for position, other in enumerate(y)
            if position != index and other is not None and math.isfinite(other)
        ]
        above = min((other - value for other in others if other >= value), default=math.inf)
        below = min((value - other for other in others if other <= value), default=math.inf)
        heights.append("bottom" if above < LABEL_CLOSE * span and below > above else "top")
    return heights


def _padded_range(values: Sequence[float | None], *, low: float, high: float) -> list[float] | None:
    """An axis range around ``values`` with room below and above (shares of their span, or of the value
    when they are all equal), so the points' labels stay inside the plot."""
    finite = [value for value in values if value is not None and math.isfinite(value)]
    if not finite:
        return None
    smallest, largest = min(finite), max(finite)
    span = largest - smallest or max(abs(largest) * 0.1, 0.05)
    return [smallest - low * span, largest + high * span]


# --- quantiles (seed 000 Figure 1) and the number of references (seed 003 Figure 2) ---------------------


def quantile_plot(document: ReportDocument, plots: ReportPlots, question: str) -> dict[str, Any] | None:
    """A line per metric over the human-score groups: each metric's group means min-max normalised to
    [0, 1] across its groups (a flat metric sits at 0.5); the raw means are on hover."""
    names = signature_names(document, question)
    traces = []
    for position, entry in enumerate(_of_question(document.get("quantiles"), question)):
        groups = entry.get("groups") or []
        if not groups:
            continue
        means = [group["metric_mean"] for group in groups]
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": plotly_text(names[entry["signature"]].label),
                "x": list(range(1, len(groups) + 1)),
                "y": min_max_normalised(means),
                "customdata": [
                    [group["metric_mean"], group["human_low"], group["human_high"], group["items"]]
                    for group in groups
                ],
                "line": {"color": _colour(position)},
                "hovertemplate": "group %{x}: human %{customdata[1]:.2f} to %{customdata[2]:.2f}, "
                "%{customdata[3]} replies<br>mean %{customdata[0]:.4g} (normalised %{y:.2f})",
            }
        )
    if not traces:
        return None
    layout = _layout(
        title="Mean metric score per fifth of the replies<br>ordered by human score",
        x_title="equal-sized groups of replies, from the lowest human scores to the highest",
        y_title="group mean, min-max normalised per metric",
    )
    layout["xaxis"]["dtick"] = 1
    # One legend row per metric, under the axis title: a study's 20 metrics made a horizontal legend of many
    # rows that plotly placed over the axis title and squashed the plot to fit (issue 34).
    _legend_below(layout, rows=len(traces), orientation="v")
    return {"data": traces, "layout": layout}


def min_max_normalised(values: Sequence[float]) -> list[float]:
    low, high = min(values), max(values)
    if high - low <= 1e-12 * max(1.0, abs(high)):
        return [0.5 for _ in values]
    return [(value - low) / (high - low) for value in values]


def references_curve(document: ReportDocument, plots: ReportPlots, question: str) -> dict[str, Any] | None:
    """Mean correlation over random subsets of k references against k, with a +-sd band, per
    multi-reference signature; Pearson shown, Spearman one legend click away (its own legend group)."""
    names = signature_names(document, question)
    traces: list[dict[str, Any]] = []
    groups: tuple[tuple[CurveCoefficient, str, bool, str], ...] = (
        ("pearson", "Pearson r", True, "solid"),
        ("spearman", f"Spearman ρ {CLICK_TO_SHOW}", False, "dash"),
    )
    for coefficient, group_title, visible, dash in groups:
        first_in_group = True
        for position, curve in enumerate(_of_question(document.get("references_curve"), question)):
            measured = [(p, *_mean_and_sd(p, coefficient)) for p in curve.get("points") or []]
            points = [(p, mean, sd) for p, mean, sd in measured if mean is not None]
            if not points:
                continue
            colour = _colour(position)
            ks = [p["references"] for p, _, _ in points]
            means = [mean for _, mean, _ in points]
            sds = [sd or 0.0 for _, _, sd in points]
            common = {"legendgroup": coefficient, "visible": True if visible else "legendonly"}
            traces.append(
                {
                    **common,
                    "type": "scatter",
                    "x": ks + ks[::-1],
                    "y": [m + s for m, s in zip(means, sds, strict=True)]
                    + [m - s for m, s in zip(means[::-1], sds[::-1], strict=True)],
                    "mode": "lines",
                    "fill": "toself",
                    "fillcolor": _rgba(colour, 0.15),
                    "line": {"width": 0},
                    "hoverinfo": "skip",
                    "showlegend": False,
                    "name": "± sd",
                }
            )
            line = {
                **common,
                "type": "scatter",
                "mode": "lines+markers",
                "name": plotly_text(names[curve["signature"]].label),
                "x": ks,
                "y": means,
                "customdata": [[sd, p["items"]] for sd, (p, _, _) in zip(sds, points, strict=True)],
                "line": {"color": colour, "dash": dash},
                "hovertemplate": f"k = %{{x}}: {coefficient} %{{y:.3f}} ± %{{customdata[0]:.3f}}"
                "<br>%{customdata[1]} replies with k references",
            }
            if first_in_group:
                line["legendgrouptitle"] = {"text": group_title}
                first_in_group = False
            traces.append(line)
    if not traces:
        return None
    layout = _layout(
        title="Correlation with the human score<br>against the number of references",
        subtitle="mean ± sd over random subsets of k references of each context",
        x_title="number of references",
        y_title="correlation with the human score",
    )
    layout["xaxis"]["dtick"] = 1
    curves = sum(1 for trace in traces if trace.get("mode") == "lines+markers") // len(groups) or 1
    _legend_below(layout, rows=curves + 1)  # each group a column: its title, then one row per metric
    return {"data": traces, "layout": layout}


def _mean_and_sd(
    point: ReferencePointEntry, coefficient: CurveCoefficient
) -> tuple[float | None, float | None]:
    if coefficient == "pearson":
        return point.get("pearson_mean"), point.get("pearson_sd")
    return point.get("spearman_mean"), point.get("spearman_sd")


# --- human agreement (seed 000 Figure 4(a)/(b); the heat map) -----------------------------------------


def figure_4a(document: ReportDocument, plots: ReportPlots, question: str) -> dict[str, Any] | None:
    """The rater whose correlation with the mean of the others is the median one, against that mean,
    both jittered as in RUBER's Figure 4(a)."""
    data = question_plots(plots, question)
    entry = data.get("figure_4a")
    if not entry or not entry.get("x"):
        return None
    rater = plotly_text(entry["annotator"])
    trace, note = _reply_points(
        data,
        entry,
        extra=(entry["rest"], entry["own"]),
        hover="mean of the others: %{customdata[1]:.3g}<br>this rater: %{customdata[2]:.3g}",
    )
    return {
        "data": [trace],
        "layout": _layout(
            title=f"Median-correlated rater ({rater}) against the rest<br>"
            f"{_coefficients(entry.get('pearson'), entry.get('spearman'))}",
            subtitle=note,
            x_title="mean of the other raters (jittered)",
            y_title=f"{rater} (jittered)",
        ),
    }


def figure_4b(document: ReportDocument, plots: ReportPlots, question: str) -> dict[str, Any] | None:
    """The raters split into two random halves, one half's mean against the other's, with the paper's
    caveat under the plot: averaging shrinks the variance, so this view flatters human agreement."""
    data = question_plots(plots, question)
    entry = data.get("figure_4b")
    if not entry or not entry.get("x"):
        return None
    trace, note = _reply_points(data, entry, extra=(), hover="first half: %{x:.3g}<br>second half: %{y:.3g}")
    caveat = "<br>".join(plotly_text(line) for line in textwrap.wrap(entry.get("caveat") or "", CAVEAT_LINE))
    lines = caveat.count("<br>") + 1 if caveat else 0
    layout = _layout(
        title="One random half of the raters against the other<br>"
        f"{_coefficients(entry.get('pearson'), entry.get('spearman'))}",
        subtitle=note,
        x_title=f"mean of the first half ({len(entry.get('first') or [])} raters)",
        y_title=f"mean of the second half ({len(entry.get('second') or [])} raters)",
    )
    if caveat:
        layout["annotations"] = [_note_below(caveat)]
        layout["margin"]["b"] = 80 + 14 * lines
        layout["height"] = HEIGHT + 14 * lines
    return {"data": [trace], "layout": layout}


def _reply_points(
    data: QuestionPlots,
    entry: RaterVsRestPoints | HalvesPoints,
    *,
    extra: Sequence[list[float]],
    hover: str,
) -> tuple[dict[str, Any], str | None]:
    """The trace of a Figure 4 panel: a point per reply, ``customdata`` = [reply index, *extra]."""
    ids = (data.get("items") or {}).get("id") or []
    position = {item: index for index, item in enumerate(ids)}
    shown, note = _sampled(list(range(len(entry["x"]))))
    trace = {
        "type": "scatter",
        "mode": "markers",
        "name": "replies",
        "x": [entry["x"][i] for i in shown],
        "y": [entry["y"][i] for i in shown],
        "customdata": [
            [position.get(entry["items"][i], -1), *(values[i] for values in extra)] for i in shown
        ],
        "marker": {"color": PALETTE[0], "size": 6, "opacity": 0.6},
        "showlegend": False,
        "hovertemplate": "%{text}<br>" + hover + "<extra></extra>",
    }
    return trace, note


def agreement_heatmap(document: ReportDocument, plots: ReportPlots, question: str) -> dict[str, Any] | None:
    """Raters x raters weighted Cohen's kappa on a -1..1 diverging scale (blank: not computable for the
    pair); hover names the pair and the number of replies both rated. Raters the filter left out are
    marked in their label."""
    data = question_plots(plots, question)
    heatmap = data.get("heatmap")
    if not heatmap or len(heatmap.get("raters") or []) < 2:
        return None
    included = {rater["annotator"]: rater.get("included", True) for rater in data.get("raters") or []}
    labels = _unique_labels(
        [
            plotly_text(name) + ("" if included.get(name, True) else " (left out)")
            for name in heatmap["raters"]
        ]
    )
    trace = {
        "type": "heatmap",
        "x": labels,
        "y": labels,
        "z": heatmap["kappa"],
        "customdata": heatmap["shared"],
        "zmin": -1,
        "zmax": 1,
        "colorscale": "RdBu",
        "reversescale": True,  # plotly.js's RdBu runs blue to red; agreement reads blue
        "colorbar": {"title": {"text": "weighted κ"}},
        "texttemplate": "%{z:.2f}",  # the number in each cell (a blank cell: not computable)
        "textfont": {"size": 12},
        "hoverongaps": False,
        "hovertemplate": "%{y} and %{x}<br>weighted κ = %{z:.3f}<br>%{customdata} replies rated by both"
        "<extra></extra>",
    }
    layout = _matrix_layout(
        title="Agreement between raters (weighted Cohen's κ)",
        subtitle="blank: κ not computable for the pair",
        labels=labels,
    )
    return {"data": [trace], "layout": layout}


# --- metric against metric (Williams' test and the paired bootstrap) ----------------------------------


def metric_comparison_matrix(
    document: ReportDocument, plots: ReportPlots, question: str
) -> dict[str, Any] | None:
    """Metric x metric: colour = Pearson r of the row metric minus that of the column metric; a star
    where both Williams' test and the paired bootstrap find the difference significant (``winner``)."""
    entries = _of_question(document.get("metric_comparisons"), question)
    if not entries:
        return None
    names = signature_names(document, question)
    order = [s for s in _signatures(document, question) if s in names]
    for entry in entries:
        for signature in (entry["first"], entry["second"]):
            if signature not in order:
                order.append(signature)
    index = {signature: position for position, signature in enumerate(order)}
    size = len(order)
    z: list[list[float | None]] = [[None] * size for _ in range(size)]
    text = [[""] * size for _ in range(size)]
    hover = [[["", "", "", ""] for _ in range(size)] for _ in range(size)]
    for entry in entries:
        i, j = index[entry["first"]], index[entry["second"]]
        difference = entry.get("pearson_difference")
        details = [
            _p_value(entry.get("williams_p")),
            _p_value(entry.get("bootstrap_p")),
            str(entry.get("n", "")),
            plotly_text(entry.get("note") or ""),
        ]
        hover[i][j] = hover[j][i] = details
        if difference is not None:
            z[i][j], z[j][i] = difference, -difference
        if entry.get("winner"):
            text[i][j] = text[j][i] = SIGNIFICANCE_MARK
    spread = max((abs(value) for row in z for value in row if value is not None), default=0.0) or 0.1
    labels = [plotly_text(names[signature].label) for signature in order]
    trace = {
        "type": "heatmap",
        "x": labels,
        "y": labels,
        "z": z,
        "text": text,
        "texttemplate": "%{text}",
        "textfont": {"size": 16},
        "customdata": hover,
        "zmin": -spread,
        "zmax": spread,
        "colorscale": "RdBu",
        "reversescale": True,  # the row metric better: blue
        "colorbar": {"title": {"text": "Δ Pearson r"}},
        "hoverongaps": False,
        "hovertemplate": "%{y} minus %{x}: Δr = %{z:.3f}<br>Williams p = %{customdata[0]}"
        "<br>bootstrap p = %{customdata[1]}<br>n = %{customdata[2]}<br>%{customdata[3]}<extra></extra>",
    }
    layout = _matrix_layout(
        title="Metric against metric: Pearson's r of the row metric minus the column metric's",
        subtitle=f"{SIGNIFICANCE_MARK} significant by both Williams' test and the paired bootstrap (p &lt; 0.05)",
        labels=labels,
    )
    return {"data": [trace], "layout": layout}


# --- shared pieces ------------------------------------------------------------------------------------


def _layout(*, title: str, x_title: str, y_title: str, subtitle: str | None = None) -> dict[str, Any]:
    """The papers' plain look: axis titles, a title with the coefficients, a modest height, the legend
    below. ``title`` and the axis titles must already be escaped."""
    title_dict: dict[str, Any] = {"text": title, "font": {"size": 14}}
    if subtitle:
        title_dict["subtitle"] = {"text": subtitle, "font": {"size": 11}}
    return {
        "title": title_dict,
        "xaxis": {"title": {"text": x_title}, "zeroline": False},
        "yaxis": {"title": {"text": y_title}, "zeroline": False},
        "height": HEIGHT,
        "margin": {"l": 70, "r": 20, "t": 80 if subtitle else 60, "b": 60},
        "hovermode": "closest",
        "legend": {"orientation": "h", "y": -0.2, "yanchor": "top", "font": {"size": 11}},
        "plot_bgcolor": "white",
    }


def _legend_below(layout: dict[str, Any], *, rows: int, orientation: Literal["h", "v"] = "h") -> None:
    """The legend under the x axis title, in room of its own: the figure grows by the legend's height
    instead of squashing the plot into what is left of HEIGHT, and nothing overlaps or is cut off in an
    export of the same size (a legend placed relative to the plot area moves with it). ``rows``: the
    legend's rows; a vertical legend has one per entry at any width, a horizontal one's depend on it."""
    legend_height = LEGEND_ROW * rows + 10
    height = layout.get("height", HEIGHT) + legend_height
    layout["legend"] = {
        "orientation": orientation,
        "yref": "container",
        "y": round(LEGEND_GAP / height, 4),
        "yanchor": "bottom",
        "x": 0,
        "xanchor": "left",
        "font": {"size": 11},
    }
    layout["margin"]["b"] = 60 + legend_height
    layout["height"] = height


def _matrix_layout(*, title: str, subtitle: str, labels: Sequence[str]) -> dict[str, Any]:
    """A square-ish matrix: first row on top, labels given the room they need, taller with more rows. The
    column labels, slanted, take room below the rows by their length: the figure grows by it (issue 34: 20
    long metric names left the rows 13 px each, their labels crowded)."""
    layout = _layout(title=title, subtitle=subtitle, x_title="", y_title="")
    layout["xaxis"].update(automargin=True, showgrid=False, tickangle=-MATRIX_TICK_ANGLE)
    layout["yaxis"].update(automargin=True, showgrid=False, autorange="reversed")
    label_room = slanted_label_room(labels, MATRIX_TICK_ANGLE)
    layout["margin"]["b"] = max(layout["margin"]["b"], label_room)
    layout["height"] = max(HEIGHT, 220 + 18 * len(labels)) + max(0, label_room - MATRIX_LABEL_ROOM)
    return layout


def _note_below(text: str) -> dict[str, Any]:
    """A note under the x axis title (``text`` already escaped; plotly does not wrap lines)."""
    return {
        "text": text,
        "xref": "paper",
        "yref": "paper",
        "x": 0,
        "y": 0,
        "yshift": -58,
        "xanchor": "left",
        "yanchor": "top",
        "align": "left",
        "showarrow": False,
        "font": {"size": 10, "color": "#555"},
    }


def _sampled(candidates: list[int]) -> tuple[list[int], str | None]:
    """All of ``candidates``, or a seeded sample of SCATTER_LIMIT of them and the note that says so."""
    if len(candidates) <= SCATTER_LIMIT:
        return candidates, None
    generator = np.random.default_rng(SAMPLE_SEED)
    chosen = sorted(generator.choice(np.array(candidates), SCATTER_LIMIT, replace=False).tolist())
    return chosen, f"{SCATTER_LIMIT:,} of {len(candidates):,} replies shown; statistics use all"


def _coefficients(pearson: float | None, spearman: float | None) -> str:
    return f"r = {_number(pearson)}, ρ = {_number(spearman)}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _p_value(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _rgba(colour: str, alpha: float) -> str:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def _unique_labels(labels: list[str]) -> list[str]:
    """Plotly merges equal category labels; number the repeats."""
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return unique


def _of_question(entries: Sequence[Entry] | None, question: str) -> list[Entry]:
    return [entry for entry in entries or [] if entry.get("question") == question]


def _signatures(document: ReportDocument, question: str) -> list[str]:
    """The question's signatures in the order of its table rows."""
    return list(dict.fromkeys(row["signature"] for row in _of_question(document.get("rows"), question)))


# --- the figure as a file shows it -------------------------------------------------------------------


def figure_for_export(figure: Mapping[str, Any]) -> dict[str, Any]:
    """``figure`` as a file shows it: without what only a click on the page reveals (traces hidden until
    their legend entry is clicked) and without the hints that say so."""
    data = []
    for trace in figure.get("data") or []:
        if trace.get("visible") == "legendonly":
            continue
        title = (trace.get("legendgrouptitle") or {}).get("text")
        if title and CLICK_TO_SHOW in title:
            trace = {**trace, "legendgrouptitle": {"text": title.replace(CLICK_TO_SHOW, "").strip()}}
        data.append(trace)
    return {**figure, "data": data}

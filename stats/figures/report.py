"""The report's figures as plotly figure dicts built in Python.

The page renders these dicts as they are, and the exports write the same dicts as images, so a figure in
a paper is the figure on the screen. Each builder reads the report document and its plots object
(stats/report/builder.py) for one question:

* reply-level scatter per metric signature: RUBER (Tao et al., 2018) Figures 4(c)-(h), human score plus the
  plots' N(0, 0.25^2) jitter on x, the metric on y, one colour per system;
* system-level scatter per signature: Gupta et al. (2019) Figure 1, one labelled point per system (both scatters
  in stats/figures/scatters.py);
* the quantile plot: Tao et al. (2018) Figure 1, each metric's mean per human-score quintile, min-max normalised
  per metric because the metrics live on different scales (raw means on hover);
* correlation against the number of references: Gupta et al. (2019) Figure 2, mean Pearson +- sd over random
  subsets, Spearman as a second legend group hidden until clicked;
* Tao et al. (2018) Figure 4(a) (the median-correlated rater against the mean of the others) and 4(b) (one random
  half of the raters against the other, with the paper's caveat under the plot);
* the raters x raters weighted-kappa heat map and the metric x metric matrix of differences in Pearson's
  r, starred where Williams' test and the paired bootstrap agree that the difference is significant;
* with pairwise judgments, the systems' win rates and their win-rate matrix (stats/figures/pairwise.py).

Strings from outside (reply texts, system, metric and rater names, study names) are escaped with
:func:`stats.figures.layout.plotly_text`: plotly reads a few HTML-like tags (``<b>``, ``<a href>``,
``<br>``...) in titles, labels, hover text and annotations, and turns ``&amp; &lt; &gt;`` back into text.
They only ever travel as data (trace names, ``text``, axis categories), never inside a ``hovertemplate``,
where ``%{...}`` would be read as a placeholder.

Reply texts are stored once per question (``plots["questions"][q]["items"]["text"]``). A figure whose
:attr:`FigureSpec.uses_reply_text` is true has, in each trace, ``customdata[i][0]`` = the reply's index
into that array and a hovertemplate that starts with ``%{text}``: the page sets each such trace's ``text``
from :func:`reply_texts` (already escaped) before rendering, so the texts are not repeated per metric.

Pure Python: no Django and no browser here (import-linter contract). The PNG and SVG files are drawn by
correlation/report/figure_export.py, through kaleido and a headless Chromium, from :func:`figure_for_export`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from stats.figures.layout import (
    HEIGHT,
    PALETTE,
    coefficients_text,
    legend_below,
    matrix_layout,
    note_below,
    p_value_text,
    palette_colour,
    plot_layout,
    plotly_text,
    rgba,
    unique_labels,
)
from stats.figures.names import of_question, question_signatures, signature_names, slug
from stats.figures.pairwise import pairwise_matrix_figure, pairwise_win_rate_chart
from stats.figures.ranking import metric_ranking_chart
from stats.figures.scatters import sampled, system_scatter, utterance_scatter
from stats.report.document_types import ReferencePointEntry, ReportDocument
from stats.report.plot_types import (
    HalvesPoints,
    QuestionPlots,
    RaterVsRestPoints,
    ReportPlots,
    question_plots,
)

EXPORT_WIDTH = 720  # pixels, of a figure without a width of its own in a PNG or SVG file
CAVEAT_LINE = 100  # characters per line of an annotation under a plot (plotly does not wrap)
SIGNIFICANCE_MARK = "*"
CLICK_TO_SHOW = "(click to show)"  # a legend hint of the page; exports leave it out (figure_for_export)
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
    for signature in question_signatures(document, question):
        label = names[signature].label
        found.append(
            (
                f"scatter-{names[signature].slug}",
                f"{label}: reply level",
                utterance_scatter(document, plots, question, signature),
                True,
            )
        )
    for signature in question_signatures(document, question):
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


# --- quantiles (Tao et al. (2018) Figure 1) and the number of references (Gupta et al. (2019) Figure 2) ---------------------


def quantile_plot(document: ReportDocument, plots: ReportPlots, question: str) -> dict[str, Any] | None:
    """A line per metric over the human-score groups: each metric's group means min-max normalised to
    [0, 1] across its groups (a flat metric sits at 0.5); the raw means are on hover."""
    names = signature_names(document, question)
    traces = []
    for position, entry in enumerate(of_question(document.get("quantiles"), question)):
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
                "line": {"color": palette_colour(position)},
                "hovertemplate": "group %{x}: human %{customdata[1]:.2f} to %{customdata[2]:.2f}, "
                "%{customdata[3]} replies<br>mean %{customdata[0]:.4g} (normalised %{y:.2f})",
            }
        )
    if not traces:
        return None
    layout = plot_layout(
        title="Mean metric score per fifth of the replies<br>ordered by human score",
        x_title="equal-sized groups of replies, from the lowest human scores to the highest",
        y_title="group mean, min-max normalised per metric",
    )
    layout["xaxis"]["dtick"] = 1
    # One legend row per metric, under the axis title: a study's 20 metrics made a horizontal legend of many
    # rows that plotly placed over the axis title and squashed the plot to fit.
    legend_below(layout, rows=len(traces), orientation="v")
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
        for position, curve in enumerate(of_question(document.get("references_curve"), question)):
            measured = [(p, *_mean_and_sd(p, coefficient)) for p in curve.get("points") or []]
            points = [(p, mean, sd) for p, mean, sd in measured if mean is not None]
            if not points:
                continue
            colour = palette_colour(position)
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
                    "fillcolor": rgba(colour, 0.15),
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
    layout = plot_layout(
        title="Correlation with the human score<br>against the number of references",
        subtitle="mean ± sd over random subsets of k references of each context",
        x_title="number of references",
        y_title="correlation with the human score",
    )
    layout["xaxis"]["dtick"] = 1
    curves = sum(1 for trace in traces if trace.get("mode") == "lines+markers") // len(groups) or 1
    legend_below(layout, rows=curves + 1)  # each group a column: its title, then one row per metric
    return {"data": traces, "layout": layout}


def _mean_and_sd(
    point: ReferencePointEntry, coefficient: CurveCoefficient
) -> tuple[float | None, float | None]:
    if coefficient == "pearson":
        return point.get("pearson_mean"), point.get("pearson_sd")
    return point.get("spearman_mean"), point.get("spearman_sd")


# --- human agreement (Tao et al. (2018) Figure 4(a)/(b); the heat map) -----------------------------------------


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
        "layout": plot_layout(
            title=f"Median-correlated rater ({rater}) against the rest<br>"
            f"{coefficients_text(entry.get('pearson'), entry.get('spearman'))}",
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
    layout = plot_layout(
        title="One random half of the raters against the other<br>"
        f"{coefficients_text(entry.get('pearson'), entry.get('spearman'))}",
        subtitle=note,
        x_title=f"mean of the first half ({len(entry.get('first') or [])} raters)",
        y_title=f"mean of the second half ({len(entry.get('second') or [])} raters)",
    )
    if caveat:
        layout["annotations"] = [note_below(caveat)]
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
    shown, note = sampled(list(range(len(entry["x"]))))
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
    labels = unique_labels(
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
    layout = matrix_layout(
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
    entries = of_question(document.get("metric_comparisons"), question)
    if not entries:
        return None
    names = signature_names(document, question)
    order = [s for s in question_signatures(document, question) if s in names]
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
            p_value_text(entry.get("williams_p")),
            p_value_text(entry.get("bootstrap_p")),
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
    layout = matrix_layout(
        title="Metric against metric: Pearson's r of the row metric minus the column metric's",
        subtitle=f"{SIGNIFICANCE_MARK} significant by both Williams' test and the paired bootstrap (p &lt; 0.05)",
        labels=labels,
    )
    return {"data": [trace], "layout": layout}


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

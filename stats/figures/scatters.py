"""The scatter plots of one metric signature: reply level (RUBER, Tao et al., 2018, Figures 4(c)-(h): the
human score with the plots' jitter on x, the metric on y, a colour per system) and system level (Gupta et
al., 2019, Figure 1: one labelled point per system). Above SCATTER_LIMIT replies a seeded sample is drawn
and the figure says so; the statistics use every reply. Pure Python."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from stats.figures.layout import coefficients_text, legend_below, palette_colour, plot_layout, plotly_text
from stats.figures.names import of_question, signature_names
from stats.report.document_types import ReportDocument
from stats.report.plot_types import ReportPlots, question_plots

SCATTER_LIMIT = 5_000  # points per scatter plot; above it a seeded sample is drawn
SAMPLE_SEED = 20170211
LABEL_CLOSE = 0.1  # of the y span: a point this close above another sits where the other's label would


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
    shown, note = sampled(present)
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
                "marker": {"color": palette_colour(system_index), "size": 6, "opacity": 0.6},
                "hovertemplate": "%{text}<br>system: %{fullData.name}<br>human: %{customdata[1]:.3g}"
                "<br>metric: %{y:.4g}<extra></extra>",
            }
        )
    label = signature_names(document, question)[signature].label
    row = next((r for r in of_question(document.get("rows"), question) if r["signature"] == signature), None)
    if row is not None:
        coefficients, n = (
            coefficients_text(row.get("pearson"), row.get("spearman")),
            row.get("n", len(present)),
        )
    else:  # the plots' own coefficients
        coefficients, n = coefficients_text(metric.get("pearson"), metric.get("spearman")), len(present)
    layout = plot_layout(
        title=f"{plotly_text(label)}<br>{coefficients}, n = {n}",
        subtitle=note,
        x_title="human score (jittered, N(0, 0.25²))",
        y_title=plotly_text(label),
    )
    if len(traces) > 1:  # plotly shows a legend from two traces on: one row per system, under the axis title
        legend_below(layout, rows=len(traces), orientation="v")
    return {"data": traces, "layout": layout}


def system_scatter(
    document: ReportDocument, plots: ReportPlots, question: str, signature: str
) -> dict[str, Any] | None:
    """One labelled point per system: its mean human score on x, its mean metric value on y, both over
    the replies that have the metric."""
    entry = next(
        (e for e in of_question(document.get("system_level"), question) if e["signature"] == signature),
        None,
    )
    if entry is None or not entry.get("systems"):
        return None
    order = list(question_plots(plots, question).get("systems") or [])
    systems = entry["systems"]
    colours = [
        palette_colour(order.index(s["system"]) if s["system"] in order else position)
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
    layout = plot_layout(
        title=f"{label}, system level<br>{coefficients_text(entry['pearson'], entry['spearman'])}, "
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
    point when another point sits just above it (the label ran under that point's marker)."""
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


def sampled(candidates: list[int]) -> tuple[list[int], str | None]:
    """All of ``candidates``, or a seeded sample of SCATTER_LIMIT of them and the note that says so."""
    if len(candidates) <= SCATTER_LIMIT:
        return candidates, None
    generator = np.random.default_rng(SAMPLE_SEED)
    chosen = sorted(generator.choice(np.array(candidates), SCATTER_LIMIT, replace=False).tolist())
    return chosen, f"{SCATTER_LIMIT:,} of {len(candidates):,} replies shown; statistics use all"

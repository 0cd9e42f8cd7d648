"""The metric ranking figure: each metric's ranked statistic as a bar, best first, coloured by
its significance cluster, the rank on the bar and on hover (stats/report/meta.py: Pearson's r at the
report's grouping; the rank is the WMT-style significance cluster).

Metric names travel as data only, escaped (stats/figures/report.py's rule).

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from typing import Any

from stats.figures.layout import HEIGHT, PARENTHESISED, plotly_text, slanted_label_room, unique_labels
from stats.report.document_types import MetricRow, ReportDocument
from stats.report.metric_names import display_of

TICK_ANGLE = -40
BOTTOM = 110  # px under the plot for the names (and the room HEIGHT was made with)
CLUSTER_COLOURS = ("#2d5bd7", "#e07b39", "#3a9d5d", "#b5443c", "#7a5cb8", "#8c6d46", "#c65fa5", "#6f6f6f")


def metric_ranking_chart(document: ReportDocument, question: str) -> dict[str, Any] | None:
    """``None`` when the question's rows have no rank (documents from before the meta-evaluation statistics, no permutations)."""
    clusters = next(
        (entry for entry in document.get("significance_clusters") or [] if entry["question"] == question),
        None,
    )
    rows = {row["signature"]: row for row in document.get("rows") or [] if row["question"] == question}
    if clusters is None or not clusters["order"]:
        return None
    ordered = [rows[signature] for signature in clusters["order"] if signature in rows]
    values = [_statistic(row) for row in ordered]
    ranks = [row.get("rank") for row in ordered]
    labels = unique_labels([plotly_text(display_of(row)) for row in ordered], repeat=PARENTHESISED)
    trace = {
        "type": "bar",
        "x": labels,
        "y": values,
        "text": [f"rank {rank}" if rank is not None else "" for rank in ranks],
        "textposition": "outside",
        "customdata": [
            [rank, plotly_text(row["signature"])] for rank, row in zip(ranks, ordered, strict=True)
        ],
        "marker": {"color": [CLUSTER_COLOURS[((rank or 1) - 1) % len(CLUSTER_COLOURS)] for rank in ranks]},
        "hovertemplate": "%{x}<br>%{y:.3f}<br>rank %{customdata[0]}<br>%{customdata[1]}<extra></extra>",
    }
    rule = "WMT's rule, " if clusters.get("rule", "best") == "any" else "best-of-cluster rule, "
    comparison = "≤" if clusters.get("rule", "best") == "any" else "<"
    subtitle = plotly_text(
        f"bars best first, coloured by significance cluster ({rule}{clusters['test']} permutation test, "
        f"p {comparison} {clusters['alpha']:g})"
    )
    # The names under the bars, slanted at TICK_ANGLE, take the room their length needs below the plot: the
    # figure grows by it instead of squashing the bars (20 long names left them 170 px).
    bottom = max(BOTTOM, slanted_label_room(labels, TICK_ANGLE))
    return {
        "data": [trace],
        "layout": {
            "title": {
                "text": f"Metrics ranked by {plotly_text(clusters['statistic'])}",
                "font": {"size": 14},
                "subtitle": {"text": subtitle, "font": {"size": 11}},
            },
            "height": HEIGHT + bottom - BOTTOM,
            "margin": {"l": 70, "r": 20, "t": 80, "b": bottom},
            "plot_bgcolor": "white",
            "hovermode": "closest",
            "showlegend": False,
            "legend": {"orientation": "h", "y": -0.3, "yanchor": "top"},
            "xaxis": {"tickangle": TICK_ANGLE, "automargin": True},
            "yaxis": {"title": {"text": plotly_text(clusters["statistic"])}, "zeroline": True},
        },
    }


def _statistic(row: MetricRow) -> float | None:
    grouped = row.get("grouped")
    return grouped["pearson"] if grouped is not None else row["pearson"]

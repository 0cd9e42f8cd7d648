"""The benchmark's heat map: metrics (rows) x studies (columns), coloured by the statistic, each cell printing
its value as the table does (``*`` significant, "—" no value, the reason in the hover label)."""

from __future__ import annotations

from typing import Any

from stats.benchmark.formats import MISSING, cell_text
from stats.benchmark.options import ACCURACIES
from stats.benchmark.table import BenchmarkTable
from stats.figures.report import plotly_text


def benchmark_heatmap(table: BenchmarkTable) -> dict[str, Any] | None:
    """A plotly figure (data and layout), or ``None`` for an empty table."""
    if not table.rows or not table.studies:
        return None
    studies = [plotly_text(study) for study in table.studies]
    metrics = [plotly_text(row.label) for row in table.rows]
    accuracy = table.options.statistic in ACCURACIES
    trace = {
        "type": "heatmap",
        "x": studies,
        "y": metrics,
        "z": [[cell.value for cell in row.cells] for row in table.rows],
        "text": [[cell_text(cell) for cell in row.cells] for row in table.rows],
        "customdata": [
            [plotly_text(cell.note) if cell.note else "" for cell in row.cells] for row in table.rows
        ],
        "texttemplate": "%{text}",
        "zmin": 0 if accuracy else -1,
        "zmax": 1,
        "colorscale": "Viridis" if accuracy else "RdBu",
        "reversescale": not accuracy,  # plotly.js's RdBu runs blue to red; a high correlation reads blue
        "colorbar": {"title": {"text": plotly_text(table.options.statistic)}},
        "hoverongaps": False,
        "hovertemplate": "%{y} on %{x}<br>%{text}<br>%{customdata}<extra></extra>",
    }
    layout = {
        "title": {"text": plotly_text(table.options.label[0].upper() + table.options.label[1:])},
        "xaxis": {"automargin": True, "showgrid": False, "tickangle": -30, "side": "top"},
        "yaxis": {"automargin": True, "showgrid": False, "autorange": "reversed"},
        "height": max(320, 160 + 26 * len(metrics)),
        "margin": {"t": 110},
        "annotations": [
            {
                "text": f"* significant at p < 0.05; {MISSING} no value (hover for the reason)",
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": -0.08,
                "showarrow": False,
                "xanchor": "left",
                "font": {"size": 11},
            }
        ],
    }
    return {"data": [trace], "layout": layout}

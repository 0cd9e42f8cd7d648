"""The benchmark's heat map: metrics (rows) x studies (columns), coloured by the statistic, each cell printing
its value as the table does (``*`` significant, "—" no value, the reason in the hover label).

The figure is sized by its content, not by the page (two studies were stretched into two thin
columns across the card while 20 metric labels were cut on the left): a fixed width per study and height per
metric, a left margin as wide as the longest metric label, study names wrapped over their columns, and a
title and footnote wrapped to the figure's width. Long names are shortened on the axes only; the hover
label names the metric and study in full.
"""

from __future__ import annotations

import math
from typing import Any

from stats.benchmark.formats import MISSING, cell_text, shortened, significance_rule, wrapped
from stats.benchmark.options import ACCURACIES
from stats.benchmark.table import BenchmarkTable
from stats.figures.layout import plotly_text

COLUMN_PX = 110  # a study's column: its value ("0.912*") and its name in lines of STUDY_CHARS
ROW_PX = 26  # a metric's row: one line of 12 px text and room around it
MIN_PLOT_PX = 120  # the plot area of a table of few rows, so that the colour bar stays readable
COLORBAR_PX = 110  # the right margin: the colour bar, its ticks and its title
# Widths of plotly's default fonts (12 px ticks, 11 px footnote, 15 px title) per character, generous: the
# fonts plotly falls back on (DejaVu Sans in Debian's Chromium) are wider than its own Open Sans.
TICK_CHAR_PX, NOTE_CHAR_PX, TITLE_CHAR_PX = 7.5, 6.5, 9.0
TICK_LINE_PX, NOTE_LINE_PX, TITLE_LINE_PX = 16, 15, 21
STUDY_CHARS = 13  # a line of a study's name over its column (COLUMN_PX wide)
STUDY_LIMIT = 40  # a longer study name is shortened on the axis (about three lines)
METRIC_LIMIT = 48  # and so is a longer metric label
TITLE_FONT_PX = 15


def benchmark_heatmap(table: BenchmarkTable) -> dict[str, Any] | None:
    """A plotly figure (data and layout), or ``None`` for an empty table."""
    if not table.rows or not table.studies:
        return None
    studies = [plotly_text(study) for study in table.studies]
    metrics = [plotly_text(row.label) for row in table.rows]
    study_ticks = [
        wrapped(shortened(study, STUDY_LIMIT), STUDY_CHARS, split_words=True) for study in table.studies
    ]
    metric_ticks = [shortened(row.label, METRIC_LIMIT) for row in table.rows]
    trace = _heatmap_trace(table, studies, metrics)
    left = 12 + math.ceil(TICK_CHAR_PX * max(len(label) for label in metric_ticks))
    width = left + COLUMN_PX * len(studies) + COLORBAR_PX
    title = wrapped(
        table.options.label[0].upper() + table.options.label[1:], int((width - 20) / TITLE_CHAR_PX)
    )
    note = wrapped(
        f"{significance_rule(table)}; {MISSING} no value (hover for the reason)",
        int((width - 20) / NOTE_CHAR_PX),
        split_words=True,
    )
    study_lines = max(len(lines) for lines in study_ticks)
    top = 12 + TITLE_LINE_PX * len(title) + 10 + TICK_LINE_PX * study_lines + 8
    bottom = 10 + NOTE_LINE_PX * len(note) + 6
    layout = {
        "title": {
            "text": "<br>".join(plotly_text(line) for line in title),
            "font": {"size": TITLE_FONT_PX},
            # at the top of the figure, clear of the study names over the plot
            "xref": "container",
            "x": 0,
            "xanchor": "left",
            "yref": "container",
            "y": 1,
            "yanchor": "top",
            "pad": {"t": 12, "l": 10},
        },
        # the names are tick texts, the data keep the full ones for the hover label; "category", so that a
        # study called "2020" is a name, not a year on a date axis
        "xaxis": {
            "type": "category",
            "automargin": True,
            "showgrid": False,
            "side": "top",
            "tickangle": 0,
            "tickvals": studies,
            "ticktext": ["<br>".join(plotly_text(line) for line in lines) for lines in study_ticks],
        },
        "yaxis": {
            "type": "category",
            "automargin": True,
            "showgrid": False,
            "autorange": "reversed",
            "tickvals": metrics,
            "ticktext": [plotly_text(label) for label in metric_ticks],
        },
        "width": width,
        "height": top + max(MIN_PLOT_PX, ROW_PX * len(metrics)) + bottom,
        "margin": {"l": left, "r": COLORBAR_PX, "t": top, "b": bottom, "autoexpand": True},
        "annotations": [_note_annotation(note, left)],
    }
    return {"data": [trace], "layout": layout}


def _heatmap_trace(table: BenchmarkTable, studies: list[str], metrics: list[str]) -> dict[str, Any]:
    """The heatmap itself: a cell per metric and study, its text and the reason it has no value (hover)."""
    accuracy = table.options.statistic in ACCURACIES
    return {
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


def _note_annotation(note: list[str], left: int) -> dict[str, Any]:
    """The note under the plot, from the figure's left edge (the plot starts after the metric labels)."""
    return {
        "text": "<br>".join(plotly_text(line) for line in note),
        "xref": "paper",
        "yref": "paper",
        "x": 0,
        "y": 0,
        "xanchor": "left",
        "yanchor": "top",
        "xshift": 10 - left,
        "yshift": -8,
        "align": "left",
        "showarrow": False,
        "font": {"size": 11},
    }

"""The pairwise section's figures as plotly dicts (stats/figures/report.py shows and exports them with the
report's other figures):

* ``pairwise-win-rates``: each system's win rate with its 95% Wilson interval as error bars, best first,
  a dashed line at 0.5; beside the people's bars, each pairwise LLM judge's (stats/report/pairwise_judges.py),
  with a legend;
* ``pairwise-matrix``: system x system win rates (row against column) on a diverging scale centred on
  0.5, the number of judgments behind each cell on hover; blank where two systems were never compared.

System names come from outside and travel as data only, escaped (stats/figures/report.py's rule); the
height, the escaping and the room for slanted labels are the other figures' (stats/figures/layout.py).

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stats.figures.layout import (
    HEIGHT,
    MATRIX_LABEL_ROOM,
    PALETTE,
    PARENTHESISED,
    legend_below,
    plotly_text,
    slanted_label_room,
    unique_labels,
)
from stats.report.document_types import ReportDocument
from stats.report.pairwise_types import PairwiseSystem

BOTTOM = 60  # px under the plot that HEIGHT leaves for the axis's labels and title


def _layout(title: str, subtitle: str) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {"size": 14}, "subtitle": {"text": subtitle, "font": {"size": 11}}},
        "height": HEIGHT,
        "margin": {"l": 70, "r": 20, "t": 80, "b": 60},
        "plot_bgcolor": "white",
        "hovermode": "closest",
    }


def pairwise_win_rate_chart(document: ReportDocument) -> dict[str, Any] | None:
    section = document.get("pairwise")
    systems = (section.get("systems") if section else None) or []
    judges = (section.get("judges") if section else None) or []  # none in documents before them
    judged = any(beside["judge"] is not None for judge in judges for beside in judge["systems"])
    if section is None or not (systems or judged):
        return None
    order = [row["system"] for row in systems]
    order += list(
        dict.fromkeys(
            beside["system"]
            for judge in judges
            for beside in judge["systems"]
            if beside["judge"] is not None and beside["system"] not in order
        )
    )
    labels = dict(
        zip(order, unique_labels([plotly_text(name) for name in order], repeat=PARENTHESISED), strict=True)
    )
    trace = _win_rate_bars(systems, labels, PALETTE[0])
    trace["hovertemplate"] = (
        "%{x}<br>win rate %{y:.3f}<br>%{customdata[0]} wins, %{customdata[1]} losses, "
        "%{customdata[2]} ties of %{customdata[3]}<extra></extra>"
    )
    people = (
        f"{section.get('judgments', 0)} judgments"
        if systems
        else "no people's judgment yet: the LLM judges' alone"
    )
    layout = _layout(
        "Win rate per system (pairwise judgments)",
        f"(wins + ties/2) / comparisons; bars: 95% Wilson interval; {people}",
    )
    layout["xaxis"] = {"title": {"text": "system"}, "automargin": True, "tickangle": -30}
    bottom = slanted_label_room(list(labels.values()), 30) + 25  # and the axis title under the names
    layout["margin"]["b"] = max(BOTTOM, bottom)
    layout["height"] = HEIGHT + max(0, bottom - BOTTOM)
    layout["yaxis"] = {"title": {"text": "win rate"}, "range": [0, 1], "zeroline": False}
    layout["shapes"] = [
        {
            "type": "line",
            "xref": "paper",
            "x0": 0,
            "x1": 1,
            "y0": 0.5,
            "y1": 0.5,
            "line": {"dash": "dash", "color": "#888", "width": 1},
        }
    ]
    data = [trace] if systems else []
    if judges:  # each pairwise judge's win rates beside the people's, named in a legend
        trace["name"] = "people"
        for index, judge in enumerate(judges, start=1):
            rates = [beside["judge"] for beside in judge["systems"] if beside["judge"] is not None]
            bars = _win_rate_bars(rates, labels, PALETTE[index % len(PALETTE)])
            bars["name"] = plotly_text(judge.get("display") or judge["metric"])
            bars["hovertemplate"] = (
                "%{x}<br>win rate %{y:.3f} by the judge<br>%{customdata[0]} wins, %{customdata[1]} losses, "
                "%{customdata[2]} ties of %{customdata[3]} verdicts<extra>%{fullData.name}</extra>"
            )
            data.append(bars)
        layout["barmode"] = "group"
        legend_below(layout, rows=len(data), orientation="v")
        layout["margin"]["b"] += max(0, bottom - BOTTOM)  # legend_below's margin holds BOTTOM's labels
    return {"data": data, "layout": layout}


def _win_rate_bars(rows: Sequence[PairwiseSystem], labels: Mapping[str, str], colour: str) -> dict[str, Any]:
    """The bars of the systems' win rates in ``rows`` (their labels in ``labels``), with their Wilson
    intervals as error bars."""
    return {
        "type": "bar",
        "x": [labels[row["system"]] for row in rows],
        "y": [row["win_rate"] for row in rows],
        "marker": {"color": colour},
        "error_y": {
            "type": "data",
            "symmetric": False,
            "array": [row["ci"][1] - row["win_rate"] for row in rows],
            "arrayminus": [row["win_rate"] - row["ci"][0] for row in rows],
            "color": "#333",
        },
        "customdata": [[row["wins"], row["losses"], row["ties"], row["comparisons"]] for row in rows],
    }


def pairwise_matrix_figure(document: ReportDocument) -> dict[str, Any] | None:
    section = document.get("pairwise")
    matrix = section.get("matrix") if section else None
    systems = (matrix.get("systems") if matrix else None) or []
    if matrix is None or len(systems) < 2:
        return None
    labels = unique_labels([plotly_text(name) for name in systems], repeat=PARENTHESISED)
    trace = {
        "type": "heatmap",
        "x": labels,
        "y": labels,
        "z": matrix["win_rate"],
        "customdata": matrix["comparisons"],
        "zmin": 0,
        "zmax": 1,
        "colorscale": "RdBu",
        "reversescale": True,  # the row system wins: blue
        "colorbar": {"title": {"text": "win rate"}},
        "hoverongaps": False,
        "hovertemplate": "%{y} against %{x}<br>win rate %{z:.3f}<br>%{customdata} judgments<extra></extra>",
    }
    layout = _layout("Pairwise win rates: row system against column system", "blank: never compared")
    layout["xaxis"] = {"automargin": True, "showgrid": False, "tickangle": -40}
    layout["yaxis"] = {"automargin": True, "showgrid": False, "autorange": "reversed"}
    bottom = slanted_label_room(labels, 40)
    layout["margin"]["b"] = max(BOTTOM, bottom)
    layout["height"] = max(HEIGHT, 220 + 18 * len(labels)) + max(0, bottom - MATRIX_LABEL_ROOM)
    return {"data": [trace], "layout": layout}

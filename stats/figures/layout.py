"""What the report's figures share: the palette and height, the papers' plain layout, the legend and notes
under the plot, a matrix's room for its labels, and the escaping of text from outside (:func:`plotly_text`).

A legend or note under the plot gets room of its own (the figure grows by it) so that the plot keeps the
height of the others and nothing overlaps or is cut off in an export of the same size. Pure Python."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

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
LEGEND_ROW = 20  # pixels per legend row (11 px text)
LEGEND_GAP = 8  # pixels between a legend below the plot and the figure's bottom edge
MATRIX_TICK_ANGLE = 40  # degrees a matrix's column labels are slanted
MATRIX_LABEL_ROOM = 100  # px of a matrix's column labels that its 220 px besides the rows hold
TICK_CHAR = 7  # px per character of a 12 px tick label, a little over the average
# How a repeated category label is numbered: "name #2" (the report's signatures), "name (2)" (the bar
# charts' systems and metrics).
NUMBERED, PARENTHESISED = "{label} #{count}", "{label} ({count})"


def plotly_text(value: object) -> str:
    """``value`` as text that plotly shows literally (as static/correlation/report.js's escapeText)."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plot_layout(*, title: str, x_title: str, y_title: str, subtitle: str | None = None) -> dict[str, Any]:
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


def legend_below(layout: dict[str, Any], *, rows: int, orientation: Literal["h", "v"] = "h") -> None:
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


def slanted_label_room(labels: Sequence[str], angle: float) -> int:
    """Pixels under a plot that its x tick labels take, slanted by ``angle`` degrees, with their gap to the
    axis: a figure grows by them instead of squashing its plot into what is left (long system and
    metric names left the bars of a 420 px figure 170 px high)."""
    longest = max((len(label) for label in labels), default=0)
    return round(longest * TICK_CHAR * math.sin(math.radians(abs(angle)))) + 30


def matrix_layout(*, title: str, subtitle: str, labels: Sequence[str]) -> dict[str, Any]:
    """A square-ish matrix: first row on top, labels given the room they need, taller with more rows. The
    column labels, slanted, take room below the rows by their length: the figure grows by it (in a fixed
    height, 20 long metric names left the rows 13 px each, their labels crowded)."""
    layout = plot_layout(title=title, subtitle=subtitle, x_title="", y_title="")
    layout["xaxis"].update(automargin=True, showgrid=False, tickangle=-MATRIX_TICK_ANGLE)
    layout["yaxis"].update(automargin=True, showgrid=False, autorange="reversed")
    label_room = slanted_label_room(labels, MATRIX_TICK_ANGLE)
    layout["margin"]["b"] = max(layout["margin"]["b"], label_room)
    layout["height"] = max(HEIGHT, 220 + 18 * len(labels)) + max(0, label_room - MATRIX_LABEL_ROOM)
    return layout


def note_below(text: str) -> dict[str, Any]:
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


def coefficients_text(pearson: float | None, spearman: float | None) -> str:
    return f"r = {_number(pearson)}, ρ = {_number(spearman)}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def p_value_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def palette_colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def rgba(colour: str, alpha: float) -> str:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def unique_labels(labels: list[str], *, repeat: str = NUMBERED) -> list[str]:
    """Plotly merges equal category labels; number the repeats (the ``count``-th of ``label`` written as
    ``repeat`` says: names that escape alike stay apart)."""
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else repeat.format(label=label, count=seen[label]))
    return unique

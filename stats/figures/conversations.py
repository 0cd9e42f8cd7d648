"""The per-turn score curve of a conversation (Sinha et al., 2020, section 4.2) as a plotly figure dict.

One line per system and metric: the turn index on x, the score of the reply at that turn on y (a gap
where a reply has no score), the reply text on hover. Strings from outside (reply texts, system and
metric names) are escaped with :func:`stats.figures.layout.plotly_text` and travel as data only, never
inside the hovertemplate. Pure Python, like stats/figures/report.py: no Django.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

from stats.figures.layout import HEIGHT, PALETTE, plotly_text
from stats.figures.names import slug

HOVER_CHARACTERS = 160  # of a reply's text in its hover label
MAX_TICKS = 12  # turn ticks on the x axis, at most


class _Row(Protocol):
    @property
    def index(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def is_reply(self) -> bool: ...
    @property
    def scores(self) -> Sequence[float | None]: ...


class _Conversation(Protocol):
    """What the figure reads of ``correlation.conversations.selectors.ConversationDetail`` (not imported:
    Django)."""

    @property
    def system(self) -> str: ...
    @property
    def metrics(self) -> Sequence[str]: ...
    @property
    def rows(self) -> Sequence[_Row]: ...


def turn_score_figure(conversations: Sequence[_Conversation]) -> dict[str, Any]:
    """The figure for the systems of one conversation
    (``correlation.conversations.selectors.ConversationDetail``)."""
    traces: list[dict[str, Any]] = []
    several_systems = len(conversations) > 1
    for conversation in conversations:
        replies = [row for row in conversation.rows if row.is_reply]
        for position, metric in enumerate(conversation.metrics):
            name = f"{conversation.system} · {metric}" if several_systems else metric
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": plotly_text(name),
                    "x": [row.index for row in replies],
                    "y": [row.scores[position] for row in replies],
                    "text": [plotly_text(_shortened(row.text)) for row in replies],
                    "hovertemplate": "%{text}<br>turn %{x}: %{y:.4f}<extra>%{fullData.name}</extra>",
                    "line": {"color": PALETTE[len(traces) % len(PALETTE)]},
                    "connectgaps": False,
                }
            )
    metrics = {metric for conversation in conversations for metric in conversation.metrics}
    # Turns are whole numbers: a tick every turn, or every few turns in a long conversation. Left to plotly,
    # the ticks of a short one fell on halves and read "1 2 2 3 3 4" with the "d" format.
    turns = [index for trace in traces for index in trace["x"]]
    step = max(1, math.ceil((max(turns) - min(turns)) / MAX_TICKS)) if turns else 1
    return {
        "data": traces,
        "layout": {
            "height": HEIGHT,
            "margin": {"l": 60, "r": 20, "t": 20, "b": 50},
            "xaxis": {"title": {"text": "turn"}, "tickformat": "d", "dtick": step, "zeroline": False},
            "yaxis": {"title": {"text": plotly_text(next(iter(metrics))) if len(metrics) == 1 else "score"}},
            "showlegend": len(traces) > 1,
            "legend": {"orientation": "h", "y": -0.2},
        },
    }


def turn_score_filename(study_name: str, conversation: str) -> str:
    """The figure's download name (no extension): study and conversation, safe in any file system."""
    return f"{slug(study_name, 'study')}-{slug(conversation, 'conversation')}-turn-scores"


def _shortened(text: str) -> str:
    return text if len(text) <= HOVER_CHARACTERS else text[: HOVER_CHARACTERS - 1] + "…"

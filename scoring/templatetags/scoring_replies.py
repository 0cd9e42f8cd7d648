"""The metric scores of the replies on a page of the researcher's item browser
(templates/annotation/items/), as a template tag: the annotation app's page asks for them by name, so the
annotation app never imports the scoring app (the import-linter layers contract in pyproject.toml)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template

from scoring.selectors import ReplyMetricScore, reply_metric_scores

register = template.Library()


@register.simple_tag
def metric_scores_of(rows: Iterable[Any]) -> dict[int, list[ReplyMetricScore]]:
    """``{% metric_scores_of rows as scores %}``: response id -> its scores, one query for all ``rows``
    (objects with a ``response_id``)."""
    return reply_metric_scores(response_ids=[int(row.response_id) for row in rows])


@register.filter
def scores_for(scores: dict[int, list[ReplyMetricScore]], response_id: int) -> list[ReplyMetricScore]:
    """``scores|scores_for:row.response_id``: one reply's scores (none: an empty list)."""
    return scores.get(int(response_id), [])

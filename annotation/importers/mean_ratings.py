"""``mean_rating`` and ``n_raters`` of the generic formats (docs/import-formats.md).

Some published sets give only the mean of several raters' scores, e.g. 1.75 for four raters on a 1-5
scale. Such a value is not an integer rating and must not be split into invented raters: it becomes one
imported mean rating (annotation.models.ImportedMeanRating, ``raters`` = ``n_raters``), which the
correlation report uses as the reply's human score where no individual rating counts.

``n_raters`` is either one count for every mean of the reply or one per question. The syntax parsers
(replies_jsonl.py, replies_csv.py) read the values; :func:`mean_rating_records` joins them and says what
does not fit. That the mean lies on the question's scale, and that a question is not given both
individual ratings and a mean, is checked against the study (planning.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from annotation.importers.records import MeanRatingRecord

RATERS_MAX = 32767  # ImportedMeanRating.raters is a PositiveSmallIntegerField
MEAN_KEY = "mean_rating"
RATERS_KEY = "n_raters"

Problem = Callable[[str, str], None]


@dataclass(frozen=True)
class GivenMean:
    """A mean as the file states it: ``question`` None means the question chosen for the import."""

    question: str | None
    field: str
    value: float


@dataclass(frozen=True)
class GivenRaters:
    field: str
    count: int


def json_mean(value: Any) -> float | None:
    """A JSON mean: any finite number (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def text_mean(text: str) -> float | None:
    """A CSV mean: a finite decimal number ("1.75", "3")."""
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def raters_problem(count: int | None) -> str | None:
    """Why ``count`` (None: not a whole number) is no number of raters, or None when it is one."""
    if count is None:
        return "must be a whole number of raters"
    if not 1 <= count <= RATERS_MAX:
        return f"must be between 1 and {RATERS_MAX:,} raters"
    return None


def mean_rating_records(
    means: list[GivenMean],
    row_raters: GivenRaters | None,
    raters_by_question: dict[str, GivenRaters],
    problem: Problem,
) -> list[MeanRatingRecord]:
    """The reply's imported means, each with its number of raters; problems go to ``problem``."""
    if not means:
        for given in [row_raters, *raters_by_question.values()]:
            if given is not None:
                problem(given.field, f"{RATERS_KEY} needs a {MEAN_KEY} on the same line (the mean it counts)")
        return []
    named = {mean.question for mean in means}
    for question, given in raters_by_question.items():
        if question not in named:
            problem(given.field, f'no {MEAN_KEY} for question "{question}" on this line')
    records = []
    for mean in means:
        given = raters_by_question.get(mean.question or "") or row_raters
        records.append(
            MeanRatingRecord(
                question=mean.question,
                value=mean.value,
                raters=given.count if given is not None else None,
                field=mean.field,
            )
        )
    return records

"""What a benchmark request asks for, read from its query string: the studies (ids), the metrics (names or
signatures), the statistic, grouping and question, and the bootstrap's resamples and seed. A list
(``studies``, ``metrics``) may be comma-separated, repeated (``studies=1&studies=2``, as the page's check
boxes send it), or both.

The page's GET form and the API's input serializer (correlation/benchmark/api.py) both read a query here,
so that the two refuse a bad one alike, naming the field; the selector then takes typed arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.http import QueryDict

from correlation.benchmark.selectors import BenchmarkInputError, study_ids_parse
from stats.benchmark.options import BenchmarkOptions
from stats.report.types import OptionError

OPTION_FIELDS = ("statistic", "grouping", "question", "resamples", "seed")


@dataclass(frozen=True)
class BenchmarkQuery:
    study_ids: tuple[int, ...]
    options: BenchmarkOptions
    metrics: tuple[str, ...]  # every metric of the studies when empty
    question: str | None  # each study's first question when None


def benchmark_query_parse(
    *, studies: Sequence[str], metrics: Sequence[str], options: Mapping[str, str | None]
) -> BenchmarkQuery:
    """The query of the raw parameters (each list as the values it was sent with, the other parameters by
    name). Raises :class:`BenchmarkInputError` naming the field at fault."""
    ids = study_ids_parse(studies)
    try:
        parsed = BenchmarkOptions.parse(options)
    except OptionError as error:
        field, _, message = str(error).partition(": ")
        raise BenchmarkInputError(field, message) from None
    return BenchmarkQuery(
        study_ids=tuple(ids),
        options=parsed,
        metrics=tuple(part.strip() for raw in metrics for part in raw.split(",") if part.strip()),
        question=(options.get("question") or "").strip() or None,
    )


def benchmark_query_from(params: QueryDict) -> BenchmarkQuery:
    """The query of a request's GET parameters (the page's)."""
    return benchmark_query_parse(
        studies=params.getlist("studies"),
        metrics=params.getlist("metrics"),
        options={name: params.get(name) for name in OPTION_FIELDS},
    )

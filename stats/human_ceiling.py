"""How close one person comes to the others: the human rows of the report (Tao et al., 2018, sections 4.2-4.3).

RUBER's Table 2 puts two "Inter-annotator" rows above the metrics so that a metric is read against a
human ceiling:

* Human (Avg): for each rater, Pearson and Spearman of their scores against the mean of the other raters
  over the replies both rated, averaged over raters. The p-value shown is the largest of the raters' own
  p-values (every rater correlates with the rest at least that significantly): an average of p-values
  is not a p-value.
* Human (Max): the best rater (per column, the highest coefficient), with that rater's p-value.

Figure 4 shows the same idea as scatter plots:

* (a) the median-correlated rater against the mean of the rest (:func:`median_rater`);
* (b) the raters split into two random halves, one half's mean against the other's
  (:func:`random_halves`). The paper's caveat (section 4.3): each point averages several raters, so its
  variance shrinks and the plot approaches the diagonal as raters are added; it flatters human agreement
  and is not the statistic to compare a metric with.

The raters here are people: raters with unknown identity never enter these functions. Scores may be
z-normalised per rater first (:func:`z_normalised`).

Pure Python + numpy/scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stats.correlations import CorrelationResult, pearson_with_ci, spearman_with_ci
from stats.ratings_by_item import factorized, flattened, group_by_key

MIN_SHARED = 3  # a correlation needs three replies


@dataclass(frozen=True)
class RaterVsRest:
    """One rater's scores against the mean of the others on the replies both rated."""

    rater: Any
    items: tuple[Any, ...]
    own: tuple[float, ...]
    rest: tuple[float, ...]
    pearson: CorrelationResult
    spearman: CorrelationResult


@dataclass(frozen=True)
class HumanRow:
    """A "Human (Avg)" or "Human (Max)" row: coefficients with p-values, and who they rest on."""

    label: str
    pearson: float | None
    pearson_p: float | None
    spearman: float | None
    spearman_p: float | None
    raters: int
    note: str = ""
    pearson_rater: Any | None = None  # Human (Max): whose coefficient it is
    spearman_rater: Any | None = None


def z_normalised(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]],
) -> dict[Any, dict[Any, float]]:
    """Each rater's scores as z-scores of their own ratings (sample standard deviation).

    A rater who gave one value throughout (or only one rating) carries no ranking information: all their
    z-scores are 0.
    """
    result: dict[Any, dict[Any, float]] = {}
    for rater, values in ratings_by_rater.items():
        numbers = np.array(list(values.values()), dtype=float)
        spread = float(numbers.std(ddof=1)) if numbers.size > 1 else 0.0
        centre = float(numbers.mean()) if numbers.size else 0.0
        result[rater] = {
            item: ((value - centre) / spread if spread > 0 else 0.0) for item, value in values.items()
        }
    return result


def raters_vs_rest(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]],
    extra_by_item: Mapping[Any, Sequence[float]] | None = None,
) -> list[RaterVsRest]:
    """Every rater against the mean of all other ratings of the same replies.

    ``extra_by_item`` holds ratings of raters with unknown identity: they count in "the rest" of every
    rater, never as a rater of their own. A rater's replies are in the order of their ``repr`` (as Python
    sorts them), and "the rest" of a reply is (its total - the rater's value) / (its count - 1).
    """
    keys, values = flattened(ratings_by_rater)
    extra = extra_by_item or {}
    codes, replies = factorized([*keys, *extra])
    named = codes[: len(keys)]
    own_values = np.asarray(values, dtype=np.float64)
    # Named ratings added one by one in rater order (bincount adds in the order of its input), then the
    # anonymous ones of each reply with math.fsum.
    totals = np.bincount(named, weights=own_values, minlength=len(replies))
    counts = np.bincount(named, minlength=len(replies))
    for code, ratings in zip(codes[len(keys) :].tolist(), extra.values(), strict=True):
        totals[code] += math.fsum(ratings)
        counts[code] += len(ratings)
    result = []
    start = 0
    sort_keys = _decimal_sort_keys(replies)
    for rater, rated in ratings_by_rater.items():
        end = start + len(rated)
        mine = named[start:end][counts[named[start:end]] > 1]
        own_all = own_values[start:end][counts[named[start:end]] > 1]
        order = _repr_order(mine, replies, sort_keys)
        chosen, own_array = mine[order], own_all[order]
        rest_array = (totals[chosen] - own_array) / (counts[chosen] - 1)
        own, rest = tuple(own_array.tolist()), tuple(rest_array.tolist())
        result.append(
            RaterVsRest(
                rater=rater,
                items=tuple(replies[code] for code in chosen.tolist()),
                own=own,
                rest=rest,
                pearson=pearson_with_ci(rest, own),
                spearman=spearman_with_ci(rest, own),
            )
        )
        start = end
    return result


def _decimal_sort_keys(keys: Sequence[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """For keys that are all non-negative ints below 10^17: (each key scaled to the digits of the longest, its
    number of digits), which order them as their decimal strings compare (``repr`` of an int): the scaled
    numbers first, then a string before the longer ones it begins (a prefix sorts first). ``None`` otherwise."""
    if not keys or not all(type(key) is int for key in keys):
        return None
    numbers = np.asarray(keys, dtype=object)
    if not (numbers.min() >= 0 and numbers.max() < 10**17):
        return None
    numbers = numbers.astype(np.int64)
    powers = 10 ** np.arange(18, dtype=np.int64)
    digits = np.maximum(1, np.searchsorted(powers, numbers, side="right"))
    return numbers * powers[int(digits.max()) - digits], digits


def _repr_order(
    codes: np.ndarray, keys: Sequence[Any], sort_keys: tuple[np.ndarray, np.ndarray] | None
) -> np.ndarray:
    """The order that sorts ``keys[code]`` for ``codes`` (distinct keys) by ``repr``, as ``sorted(key=repr)``
    does: on ``sort_keys`` (:func:`_decimal_sort_keys` of ``keys``) where the keys have them, else on the
    strings."""
    if sort_keys is not None:
        scaled, digits = sort_keys
        return np.lexsort((digits[codes], scaled[codes]))
    chosen = [keys[code] for code in codes.tolist()]
    return np.array(sorted(range(len(chosen)), key=lambda index: repr(chosen[index])), dtype=np.int64)


def human_rows(comparisons: Sequence[RaterVsRest]) -> tuple[HumanRow, HumanRow]:
    """Human (Avg) and Human (Max) from each rater's comparison with the rest."""
    pearsons = [
        (c.pearson.coefficient, c.pearson.p_value, c.rater)
        for c in comparisons
        if c.pearson.coefficient is not None
    ]
    spearmans = [
        (c.spearman.coefficient, c.spearman.p_value, c.rater)
        for c in comparisons
        if c.spearman.coefficient is not None
    ]
    if not pearsons and not spearmans:
        reason = _why_no_rater(comparisons)
        return (
            HumanRow("Human (Avg)", None, None, None, None, 0, reason),
            HumanRow("Human (Max)", None, None, None, None, 0, reason),
        )
    left_out = len(comparisons) - len(pearsons)
    note = (
        f"{left_out} rater(s) share fewer than {MIN_SHARED} replies with the others or gave one value throughout"
        if left_out
        else ""
    )
    average = HumanRow(
        "Human (Avg)",
        _mean([value for value, _, _ in pearsons]),
        _max_p([p for _, p, _ in pearsons]),
        _mean([value for value, _, _ in spearmans]),
        _max_p([p for _, p, _ in spearmans]),
        len(pearsons),
        note,
    )
    best_pearson = max(pearsons, key=lambda entry: entry[0], default=None)
    best_spearman = max(spearmans, key=lambda entry: entry[0], default=None)
    best = HumanRow(
        "Human (Max)",
        best_pearson[0] if best_pearson else None,
        best_pearson[1] if best_pearson else None,
        best_spearman[0] if best_spearman else None,
        best_spearman[1] if best_spearman else None,
        len(pearsons),
        note,
        pearson_rater=best_pearson[2] if best_pearson else None,
        spearman_rater=best_spearman[2] if best_spearman else None,
    )
    return average, best


def median_rater(comparisons: Sequence[RaterVsRest]) -> RaterVsRest | None:
    """The rater whose Pearson with the rest is the median (the lower middle one for an even count)."""
    ranked = sorted(
        (c for c in comparisons if c.pearson.coefficient is not None),
        key=lambda c: (c.pearson.coefficient, repr(c.rater)),
    )
    if not ranked:
        return None
    return ranked[(len(ranked) - 1) // 2]


@dataclass(frozen=True)
class Halves:
    """Figure 4(b): the mean of one random half of the raters against the mean of the other half."""

    first: tuple[Any, ...]
    second: tuple[Any, ...]
    items: tuple[Any, ...]
    first_mean: tuple[float, ...]
    second_mean: tuple[float, ...]
    pearson: CorrelationResult
    spearman: CorrelationResult


def random_halves(ratings_by_rater: Mapping[Any, Mapping[Any, float]], *, seed: int = 0) -> Halves | None:
    """Split the raters into two random halves (reproducible from ``seed``) and compare the halves'
    means over the replies that both halves rated. ``None`` with fewer than two raters."""
    raters = sorted(ratings_by_rater, key=repr)
    if len(raters) < 2:
        return None
    order = np.random.default_rng(seed).permutation(len(raters))
    first = tuple(raters[i] for i in sorted(order[: len(raters) // 2]))
    second = tuple(raters[i] for i in sorted(order[len(raters) // 2 :]))
    first_means = _item_means(ratings_by_rater, first)
    second_means = _item_means(ratings_by_rater, second)
    shared = [item for item in first_means if item in second_means]
    order = _repr_order(np.arange(len(shared)), shared, _decimal_sort_keys(shared))
    items = tuple(shared[index] for index in order.tolist())
    x = tuple(first_means[item] for item in items)
    y = tuple(second_means[item] for item in items)
    return Halves(first, second, items, x, y, pearson_with_ci(x, y), spearman_with_ci(x, y))


def _item_means(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]], raters: Sequence[Any]
) -> dict[Any, float]:
    """item -> math.fsum of the raters' ratings / their number, items in order of first appearance."""
    keys, values = flattened({rater: ratings_by_rater[rater] for rater in raters})
    grouped = group_by_key(keys)
    return dict(zip(grouped.keys, grouped.means(values), strict=True))


def _why_no_rater(comparisons: Sequence[RaterVsRest]) -> str:
    if len(comparisons) < 2:
        return "not computable: fewer than two raters with known identity"
    return f"not computable: no rater shares {MIN_SHARED} or more replies with the others and varies their scores"


def _mean(values: Sequence[float | None]) -> float | None:
    numbers = [value for value in values if value is not None]
    return math.fsum(numbers) / len(numbers) if numbers else None


def _max_p(values: Sequence[float | None]) -> float | None:
    numbers = [value for value in values if value is not None]
    return max(numbers) if numbers else None

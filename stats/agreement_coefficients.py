"""How much the human raters of a study agree: the coefficients of the report's agreement section.

All come from well-kept libraries (the ICC as one computes it); this module only shapes the study's ratings for them and says, in
words, when a coefficient cannot be computed (never NaN, never an exception):

* Krippendorff's alpha, ordinal and interval (Krippendorff 2011, "Computing Krippendorff's alpha-
  reliability"), from the ``krippendorff`` package. Alpha uses every reply with two or more ratings,
  whoever gave them, so it is the coefficient of choice for crowd designs where raters rate different
  subsets, and the one that stays meaningful when rater identities are unknown.
* Fleiss' kappa (Fleiss 1971), from ``statsmodels.stats.inter_rater``. It needs the same number of ratings
  on every reply: it is computed over the replies with the most common number of ratings (k >= 2), and the
  result says how many replies that is.
* The intraclass correlation (Shrout and Fleiss 1979; McGraw and Wong 1996), as ``pingouin`` computes it
  (stats/intraclass.py, equal to pingouin's values to 1e-12, without its data frame of every rating). When the
  same raters rated every reply used (a fully crossed design), ICC(A,1) and ICC(A,k): two-way random
  effects, absolute agreement, of one rater and of the mean of k raters. Otherwise ICC(1,1) and ICC(1,k):
  the one-way model, which does not need to know who rated what (each reply's ratings by position), over
  the replies with the most common number of ratings.
* Cohen's kappa per pair of raters over the replies both rated, weighted for ordinal scales
  (stats/agreement.py, checked against ``sklearn.metrics.cohen_kappa_score``), and its mean.
* Leave-one-out alpha: alpha without one rater, and how far it moves; a rater whose removal raises alpha
  a lot disagrees with the rest.

Raters whose identity is unknown (an imported list of scores with no names, as in GRADE's file) count in
alpha, Fleiss' kappa and the one-way ICC, which only look at each reply's set of ratings; they are never
paired as one person across replies.

Pure Python + numpy/scipy/pandas and the three libraries: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, combinations
from typing import Any, Literal

import numpy as np

from stats.agreement import cohen_kappa, weighting_for_scale
from stats.intraclass import Intraclass, MeanSquares, one_way, two_way_absolute
from stats.ratings_by_item import factorized, flattened, group_by_key

Level = Literal["ordinal", "interval"]
MIN_PAIR_ITEMS = 5  # shared replies below which a pair's kappa says more about luck than about the pair


@dataclass(frozen=True)
class Coefficient:
    """One agreement coefficient: its value, or ``None`` with the reason in ``note``."""

    value: float | None
    items: int  # replies the value rests on
    ratings: int  # ratings the value rests on
    note: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "items": self.items,
            "ratings": self.ratings,
            "note": self.note,
            **self.details,
        }


def not_computable(reason: str, items: int = 0, ratings: int = 0) -> Coefficient:
    return Coefficient(None, items, ratings, f"not computable: {reason}")


def krippendorff_alpha(
    values_by_item: Mapping[Any, Sequence[float]], *, points: Sequence[int], level: Level
) -> Coefficient:
    """Krippendorff's alpha over every reply with two or more ratings (identity not needed)."""
    return _alpha_from_counts(value_counts(values_by_item, points), points=points, level=level)


@dataclass(frozen=True)
class RatedCounts:
    """Every rating of named raters (rater by rater) and of anonymous ones (reply by reply) as a table of value
    counts, replies in order of first appearance: the rows :func:`value_counts` gives for
    ``values_by_item(ratings_by_rater, anonymous_by_item)``, in the same order, built in one pass, so that
    alpha (both levels), Fleiss' kappa and leave-one-out alpha share it."""

    counts: np.ndarray  # replies x scale points
    codes: np.ndarray  # each flattened rating's reply (row of ``counts``)
    columns: np.ndarray  # each flattened rating's scale position
    points: tuple[int, ...]

    @classmethod
    def of(
        cls,
        ratings_by_rater: Mapping[Any, Mapping[Any, float]],
        anonymous_by_item: Mapping[Any, Sequence[float]] | None,
        points: Sequence[int],
    ) -> RatedCounts:
        keys, values = flattened(ratings_by_rater, anonymous_by_item)
        grouped = group_by_key(keys)
        position = {point: index for index, point in enumerate(points)}
        columns = scale_positions(values, position)
        counts = _counts(grouped.codes, columns, len(grouped.keys), len(position))
        return cls(counts, grouped.codes, columns, tuple(points))

    def alpha(self, level: Level) -> Coefficient:
        """Krippendorff's alpha: :func:`krippendorff_alpha` of the same ratings."""
        return _alpha_from_counts(self.counts, points=self.points, level=level)

    def fleiss(self) -> Coefficient:
        """Fleiss' kappa: :func:`fleiss_kappa` of the same ratings."""
        sizes = self.counts.sum(axis=1).astype(np.int64)
        return _fleiss_of_rows(self.counts, sizes, self.points)


def value_counts(values_by_item: Mapping[Any, Sequence[float]], points: Sequence[int]) -> np.ndarray:
    """(items x scale points): how many ratings of each value every item got (the form in which
    ``krippendorff.alpha`` takes data, and from which a rater's ratings can be subtracted)."""
    position = {point: index for index, point in enumerate(points)}
    lengths = np.fromiter(map(len, values_by_item.values()), dtype=np.int64, count=len(values_by_item))
    rows = np.repeat(np.arange(len(values_by_item)), lengths)
    columns = scale_positions(list(chain.from_iterable(values_by_item.values())), position)
    return _counts(rows, columns, len(values_by_item), len(position))


def scale_positions(values: Sequence[float], position: Mapping[int, int]) -> np.ndarray:
    """``position[int(value)]`` for every value, vectorised (``KeyError`` for a value off the scale, as the
    dict lookup raises)."""
    if not values:
        return np.array([], dtype=np.int64)
    array = np.asarray(values, dtype=np.float64)
    low, high = min(position), max(position)
    if np.all(np.isfinite(array)) and high - low < 1_000_000:
        whole = np.trunc(array)  # int() truncates towards zero
        table = np.full(high - low + 1, -1, dtype=np.int64)
        table[np.array(list(position), dtype=np.int64) - low] = list(position.values())
        inside = (whole >= low) & (whole <= high)
        if np.all(inside):
            found = table[(whole - low).astype(np.int64)]
            if np.all(found >= 0):
                return found
    return np.array([position[int(value)] for value in values], dtype=np.int64)


def _counts(rows: np.ndarray, columns: np.ndarray, items: int, points: int) -> np.ndarray:
    flat = np.bincount(rows * points + columns, minlength=items * points)
    return flat.reshape(items, points).astype(np.float64)


def _alpha_from_counts(counts: np.ndarray, *, points: Sequence[int], level: Level) -> Coefficient:
    pairable = counts[counts.sum(axis=1) >= 2]
    items, ratings = int(pairable.shape[0]), int(pairable.sum())
    if items == 0:
        return not_computable("no reply has two ratings")
    if np.count_nonzero(pairable.sum(axis=0)) < 2:
        return not_computable("every rating has the same value", items, ratings)
    import krippendorff

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(
            krippendorff.alpha(value_counts=pairable, level_of_measurement=level, value_domain=list(points))
        )
    if not math.isfinite(value):
        return not_computable("no disagreement is expected by chance", items, ratings)
    return Coefficient(value, items, ratings)


def fleiss_kappa(values_by_item: Mapping[Any, Sequence[float]], *, points: Sequence[int]) -> Coefficient:
    """Fleiss' kappa over the replies with the most common number of ratings (at least two)."""
    sizes = np.fromiter(map(len, values_by_item.values()), dtype=np.int64, count=len(values_by_item))
    return _fleiss_of_rows(value_counts(values_by_item, points), sizes, points)


def _fleiss_of_rows(table: np.ndarray, sizes: np.ndarray, points: Sequence[int]) -> Coefficient:
    """Fleiss' kappa of the rows of a value-count ``table`` (replies x points) whose number of ratings
    (``sizes``) is the most common one of at least two; a tie between numbers goes to the larger."""
    rated = sizes[sizes >= 2]
    if rated.size == 0:
        return not_computable("no reply has two ratings")
    frequency = np.bincount(rated)
    k = int(np.flatnonzero(frequency == frequency.max())[-1])
    used = table[sizes == k]
    ratings = used.shape[0] * k
    if np.count_nonzero(used.sum(axis=0)) < 2:
        return not_computable("every rating has the same value", used.shape[0], ratings)
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    value = float(statsmodels_fleiss(used, method="fleiss"))
    if not math.isfinite(value):
        return not_computable("no disagreement is expected by chance", used.shape[0], ratings)
    details = {"raters_per_item": k, "items_left_out": int(rated.size) - used.shape[0]}
    return Coefficient(value, used.shape[0], ratings, details=details)


def intraclass_correlation(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]],
    anonymous_by_item: Mapping[Any, Sequence[float]] | None = None,
) -> Coefficient:
    """ICC(A,1)/ICC(A,k) for a fully crossed design of known raters, else ICC(1,1)/ICC(1,k) by position.

    The value is the single-rater coefficient; ``details`` carries the k-rater one, the model, its 95%
    interval and p-value (the F test), as ``pingouin.intraclass_corr`` gives them (stats/intraclass.py).
    """
    items_of = {rater: set(values) for rater, values in ratings_by_rater.items() if values}
    common = set.intersection(*items_of.values()) if len(items_of) >= 2 else set()
    if not anonymous_by_item and len(items_of) >= 2 and len(common) >= 3:
        # In a fixed order (the replies' own, ids ascending): the sums of squares are float sums over the rows,
        # whose last bits depend on their order, and a set's order depends on the ids' values and history.
        shared = _ordered(common)
        matrix = np.column_stack(
            [
                np.fromiter(map(ratings_by_rater[rater].__getitem__, shared), np.float64, len(shared))
                for rater in items_of
            ]
        )
        model, single, average = "two-way random, absolute agreement", "ICC(A,1)", "ICC(A,k)"
        labels: tuple[list[Any], list[Any]] = (shared, list(items_of))
    else:
        by_item = values_by_item(ratings_by_rater, anonymous_by_item)
        counts = Counter(len(values) for values in by_item.values() if len(values) >= 2)
        if not counts:
            return not_computable("no reply has two ratings")
        k = max(counts, key=lambda size: (counts[size], size))
        used = [item for item, values in by_item.items() if len(values) == k]
        matrix = np.array([by_item[item] for item in used], dtype=np.float64).reshape(len(used), k)
        model, single, average = "one-way random (raters not crossed)", "ICC(1,1)", "ICC(1,k)"
        labels = (used, list(range(k)))
    items, raters = matrix.shape
    if items < 3:
        return not_computable("fewer than 3 replies rated by the same number of raters", items, matrix.size)
    if np.unique(matrix).size < 2:
        return not_computable("every rating has the same value", items, matrix.size)
    squares = MeanSquares.of(matrix)
    crossed = single == "ICC(A,1)"
    if not squares.resolved(one_way=not crossed):
        result = _pingouin_intraclass(matrix, labels, crossed, single, average)
    else:
        result = two_way_absolute(squares) if crossed else one_way(squares)
    if not math.isfinite(result.single):
        return not_computable("no variance between replies", items, matrix.size)
    details = {
        "type": single,
        "model": model,
        "raters": raters,
        "ci95": [_finite_or_none(bound) for bound in result.interval],
        "p": _finite_or_none(result.p),
        "average_type": average,
        "average_value": _finite_or_none(result.average),
    }
    return Coefficient(result.single, items, matrix.size, details=details)


def _ordered(items: set[Any]) -> list[Any]:
    """The items sorted (by ``repr`` where they do not compare with one another)."""
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=repr)


def _pingouin_intraclass(
    matrix: np.ndarray, labels: tuple[list[Any], list[Any]], crossed: bool, single: str, average: str
) -> Intraclass:
    """``pingouin.intraclass_corr`` on the ratings (rows: ``labels``' replies, columns: their raters, or
    positions), in the long form the report gave it before stats/intraclass.py (rater by rater when crossed,
    else reply by reply), for the cases where its values depend on the order of its sums (see
    :meth:`stats.intraclass.MeanSquares.resolved`)."""
    import pandas as pd
    import pingouin

    replies, raters = labels
    if crossed:
        rows = [
            (reply, rater, matrix[row, column])
            for column, rater in enumerate(raters)
            for row, reply in enumerate(replies)
        ]
    else:
        rows = [
            (reply, rater, matrix[row, column])
            for row, reply in enumerate(replies)
            for column, rater in enumerate(raters)
        ]
    frame = pd.DataFrame(rows, columns=["item", "rater", "value"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = pingouin.intraclass_corr(data=frame, targets="item", raters="rater", ratings="value")
    table = table.set_index("Type")
    p_column = "pval" if "pval" in table.columns else "p_val"
    low, high = table.loc[single, "CI95"]
    return Intraclass(
        float(table.loc[single, "ICC"]),
        (float(low), float(high)),
        float(table.loc[single, p_column]),
        float(table.loc[average, "ICC"]),
    )


@dataclass(frozen=True)
class PairKappa:
    first: Any
    second: Any
    kappa: float | None
    items: int
    note: str = ""


def pairwise_kappas(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]],
    *,
    points: Sequence[int],
    min_items: int = MIN_PAIR_ITEMS,
) -> list[PairKappa]:
    """Cohen's kappa of every pair of raters over the replies both rated (quadratic weights on ordinal
    scales of three or more points); a rating's label is ``int(value)``.

    The ratings are laid out once as a raters x replies table of labels, so a pair's shared replies are one
    vectorised AND (kappa counts pairs of labels: it does not depend on the order of the shared replies)."""
    weights = weighting_for_scale(points)
    raters = list(ratings_by_rater)
    keys, values = flattened(ratings_by_rater, None)
    codes, replies = factorized(keys)
    labels = _labels(values)
    rated = np.zeros((len(raters), len(replies)), dtype=bool)
    # Labels are scale points: 4 bytes each keeps the table of 80 raters x 100,000 replies at 32 MB.
    small = labels.size == 0 or (
        labels.min() >= np.iinfo(np.int32).min and labels.max() <= np.iinfo(np.int32).max
    )
    table = np.zeros((len(raters), len(replies)), dtype=np.int32 if small else np.int64)
    start = 0
    for row, rater in enumerate(raters):
        end = start + len(ratings_by_rater[rater])
        rated[row, codes[start:end]] = True
        table[row, codes[start:end]] = labels[start:end]
        start = end
    pairs = []
    for (a, first), (b, second) in combinations(enumerate(raters), 2):
        both = rated[a] & rated[b]
        shared = int(np.count_nonzero(both))
        if not shared:
            pairs.append(PairKappa(first, second, None, 0, "not computable: no reply rated by both"))
            continue
        if shared < min_items:
            note = f"not computable: only {shared} shared replies (at least {min_items} needed)"
            pairs.append(PairKappa(first, second, None, shared, note))
            continue
        kappa = cohen_kappa(table[a, both], table[b, both], points=points, weights=weights)
        note = "" if kappa is not None else "not computable: both gave one and the same value throughout"
        pairs.append(PairKappa(first, second, kappa, shared, note))
    return pairs


def _labels(values: Sequence[float]) -> np.ndarray:
    """``int(value)`` of every value (truncation towards zero), vectorised where every value is finite and
    small (else value by value, so that a value ``int`` refuses raises as it would)."""
    array = np.asarray(values, dtype=np.float64)
    if array.size and np.all(np.isfinite(array)) and float(np.abs(array).max()) < 2.0**52:
        return np.trunc(array).astype(np.int64)
    return np.array([int(value) for value in values], dtype=np.int64)


def mean_pair_kappa(pairs: Sequence[PairKappa]) -> Coefficient:
    kappas = [pair.kappa for pair in pairs if pair.kappa is not None]
    if not pairs:
        return not_computable("fewer than two raters with known identity")
    if not kappas:
        return not_computable("no pair of raters shares enough replies")
    items = sum(pair.items for pair in pairs if pair.kappa is not None)
    details = {"pairs": len(kappas), "pairs_left_out": len(pairs) - len(kappas), "weights": "see per pair"}
    return Coefficient(math.fsum(kappas) / len(kappas), items, 2 * items, details=details)


def leave_one_out_alpha(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]],
    anonymous_by_item: Mapping[Any, Sequence[float]],
    *,
    points: Sequence[int],
    level: Level = "ordinal",
    counted: RatedCounts | None = None,
) -> dict[Any, Coefficient]:
    """rater -> alpha of everyone else's ratings (known raters and anonymous ones alike): the value counts
    of all ratings, minus the rater's own, so each rater costs one alpha on counts, not a rebuild.
    ``counted``: :meth:`RatedCounts.of` the same ratings, when already built."""
    table = counted if counted is not None else RatedCounts.of(ratings_by_rater, anonymous_by_item, points)
    items, width = table.counts.shape
    result: dict[Any, Coefficient] = {}
    start = 0
    for rater, rated in ratings_by_rater.items():
        # The rater's ratings come first in the flattened table, in rater order (see flattened).
        end = start + len(rated)
        own = _counts(table.codes[start:end], table.columns[start:end], items, width)
        result[rater] = _alpha_from_counts(table.counts - own, points=points, level=level)
        start = end
    return result


def values_by_item(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]],
    anonymous_by_item: Mapping[Any, Sequence[float]] | None = None,
) -> dict[Any, list[float]]:
    """item -> every rating it got, from named raters and anonymous ones. (A plain loop: measured at 100,000
    replies x 5 raters, 0.11 s against 0.17 s for a numpy group-by that must hand back the same dict of Python
    lists; what is built from it, the value counts, is vectorised instead.)"""
    result: dict[Any, list[float]] = {}
    for values in ratings_by_rater.values():
        for item, value in values.items():
            result.setdefault(item, []).append(value)
    for item, extra in (anonymous_by_item or {}).items():
        result.setdefault(item, []).extend(extra)
    return result


def _finite_or_none(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None

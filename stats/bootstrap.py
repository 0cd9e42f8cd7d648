"""Paired bootstrap of correlations with human scores: one set of resamples shared by every metric.

Replies are resampled with replacement (Efron and Tibshirani 1993); the 95% interval of a coefficient is
the 2.5th and 97.5th percentile of its resampled values. Every metric of a report sees the *same*
resamples, so the difference between two metrics' correlations is bootstrapped as well (the paired
bootstrap resampling of Koehn 2004), see :func:`paired_difference_p`.

Vectorised instead of a Python loop per resample. A resample is a vector of counts ``w`` (how often each
reply was drawn; the counts sum to n), and a block of resamples is a matrix W (B x n):

* Pearson's r of a resample is the weighted Pearson correlation with weights ``w``: the sums
  W @ x, W @ x^2, W @ y, W @ y^2 and W @ (x y) give it for every resample and every metric at once.
* Spearman's rho of a resample is Pearson's r of the resample's average ranks. The rank of reply i
  in a resample is (number of drawn replies with a smaller value) + (number of drawn replies with the
  same value + 1) / 2, so a cumulative sum of W taken in the sorted order of the values gives the ranks
  of all resamples at once: each column is sorted once, not once per resample. Replies with equal values
  form tie groups that share one rank, so the sums over replies become sums over groups.

Both are exactly what ``scipy.stats.pearsonr`` and ``scipy.stats.spearmanr`` return on ``x[idx]`` and
``y[idx]`` for the drawn indices ``idx`` (tests/correlation/test_bootstrap.py checks it).

Re-ranking every resample costs a cumulative sum over the replies per metric and resample, which no
matrix product replaces. Above :data:`EXACT_SPEARMAN_CELLS` (replies x resamples x metrics), Spearman's
draws are therefore the weighted Pearson correlations of the replies' ranks in the full sample
("full-sample ranks"): the ranks a reply gets in a resample differ from its full-sample rank by noise of
order 1/sqrt(n), so the two bootstrap distributions agree to within that, and the interval costs a
matrix product like Pearson's. :attr:`BootstrapDraws.spearman_method` says which one was used.

Where a metric has no value for some replies, those replies weigh nothing in that metric's sums; the
resample itself stays shared. A resample in which either side is constant has no correlation (NaN in
the draws); intervals are taken over the resamples that have one.

Pure Python + numpy: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from stats.centred import scale_exponent

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 20180201
# Elements per block of the count matrix (16 MB of float64): large enough for efficient matrix products.
BLOCK_ELEMENTS = 2_000_000
# The exact Spearman pass works through a block in slices of this many elements, which stay in the CPU cache.
SLICE_ELEMENTS = 250_000
# An interval from fewer defined resamples than this share says more about the sample than about the metric.
MIN_DEFINED_SHARE = 0.9
# Replies x resamples x metrics up to which Spearman's draws re-rank every resample (see the docstring).
EXACT_SPEARMAN_CELLS = 25_000_000
EXACT, FULL_SAMPLE_RANKS = "exact", "full-sample ranks"
# A product of a block with few rows (few resamples of many replies) and a tall matrix can run two orders of
# magnitude slower than its size says once OpenBLAS splits it over threads on a busy machine (measured, 2 shared
# cores: 20 x 100,000 by 100,000 x 63 took 33 s of CPU per 1,000 rows, sliced 0.43 s); so can one with few
# columns. When rows or columns are fewer than this, the product is summed over slices of the replies small
# enough (rows x columns x slice <= PRODUCT_CELLS) for one thread, which also keeps each slice in the cache.
MIN_PRODUCT_ROWS = 64
PRODUCT_CELLS = 2**19
Progress = Callable[[int, int], None]
# The counts of the last resamples drawn in full, by (n, count, seed), one byte a cell, while n x count is at most
# this: a report resamples its contexts with one seed for the grouped correlations and both pairwise accuracies,
# and drawing 1,000 resamples of 20,000 contexts costs 0.17 s each time, reading them back 0.01 s.
KEPT_COUNT_CELLS = 25_000_000
_KEPT_COUNTS: dict[tuple[int, int, int], list[np.ndarray]] = {}


@dataclass(frozen=True)
class Resamples:
    """``count`` bootstrap resamples of ``n`` items, reproducible from ``seed``. ``keep``: keep their counts
    for the next ``blocks()`` of the same n, count and seed (see :data:`KEPT_COUNT_CELLS`): for resamples that
    several statistics draw (the contexts of a report), not for those drawn once."""

    n: int
    count: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    keep: bool = False

    @property
    def block_size(self) -> int:
        return max(1, min(self.count, BLOCK_ELEMENTS // max(1, self.n)))

    def blocks(self) -> Iterator[np.ndarray]:
        """Count matrices of at most ``block_size`` resamples each, (b x n) float64, in a fixed order. The
        counts of the last resamples drawn in full are kept (see :data:`KEPT_COUNT_CELLS`) and handed out again
        to the next ``blocks()`` of the same n, count and seed."""
        key = (self.n, self.count, self.seed)
        kept = _KEPT_COUNTS.get(key)
        if kept is not None:
            for counts in kept:
                yield counts.astype(np.float64)
            return
        keeping: list[np.ndarray] | None = (
            [] if self.keep and self.n * self.count <= KEPT_COUNT_CELLS else None
        )
        generator = np.random.default_rng(self.seed)
        done = 0
        while done < self.count:
            size = min(self.block_size, self.count - done)
            drawn = generator.integers(0, self.n, size=(size, self.n))
            # One bincount per resample: its n counters stay in the cache (one over the whole block is twice as slow).
            counts = np.empty((size, self.n))
            for row, resample in enumerate(drawn):
                counts[row] = np.bincount(resample, minlength=self.n)
            if keeping is not None and counts.max() <= 255:
                keeping.append(counts.astype(np.uint8))
            else:
                keeping = None
            yield counts
            done += size
        if keeping is not None:
            _KEPT_COUNTS.clear()
            _KEPT_COUNTS[key] = keeping

    def indices(self) -> Iterator[np.ndarray]:
        """The same resamples as drawn indices (one array of n per resample), for tests and for code
        that needs the items themselves; slow for large n."""
        generator = np.random.default_rng(self.seed)
        done = 0
        while done < self.count:
            size = min(self.block_size, self.count - done)
            drawn = generator.integers(0, self.n, size=(size, self.n))
            yield from drawn
            done += size


@dataclass(frozen=True)
class BootstrapDraws:
    """Per metric (rows) and resample (columns): Pearson's r and Spearman's rho, NaN where undefined."""

    pearson: np.ndarray
    spearman: np.ndarray
    spearman_method: str = EXACT


def bootstrap_correlations(
    human: np.ndarray,
    metrics: np.ndarray,
    resamples: Resamples,
    *,
    progress: Progress | None = None,
    spearman: str = "auto",
) -> BootstrapDraws:
    """Pearson and Spearman of every metric column with ``human`` over the shared ``resamples``.

    ``human`` has one finite value per item; ``metrics`` is (items x metrics) with NaN where a metric has
    no value for an item. ``spearman``: "exact" (re-rank every resample), "full-sample ranks", or "auto"
    (exact up to :data:`EXACT_SPEARMAN_CELLS`).
    """
    x = np.asarray(human, dtype=np.float64)
    values = np.asarray(metrics, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] != x.shape[0]:
        raise ValueError(f"metrics must be (items x metrics) with {x.shape[0]} items, got {values.shape}")
    if x.shape[0] != resamples.n:
        raise ValueError(f"the resamples are of {resamples.n} items, the data has {x.shape[0]}")
    if not np.all(np.isfinite(x)):
        raise ValueError("human scores must be finite")
    columns = values.shape[1]
    pearson = np.full((columns, resamples.count), np.nan)
    spearman_matrix = np.full((columns, resamples.count), np.nan)
    if columns == 0 or resamples.count == 0:
        return BootstrapDraws(pearson, spearman_matrix)
    if spearman == "auto":
        exact = x.size * resamples.count * columns <= EXACT_SPEARMAN_CELLS
        spearman = EXACT if exact else FULL_SAMPLE_RANKS
    if spearman not in (EXACT, FULL_SAMPLE_RANKS):
        raise ValueError(f'spearman must be "auto", "{EXACT}" or "{FULL_SAMPLE_RANKS}", not {spearman!r}')
    present = np.isfinite(values)
    patterns = _availability_patterns(present)
    pearson_sums = [
        (columns_of, _WeightedPearson(x, values[:, columns_of], present[:, columns_of[0]]))
        for columns_of in patterns
    ]
    if spearman == EXACT:
        prepared = [_PreparedPattern.of(x, values, present, columns_of) for columns_of in patterns]
        ranked: list[tuple[np.ndarray, _WeightedPearson]] = []
    else:
        prepared = []
        ranked = [(columns_of, _ranked_pattern(x, values, present, columns_of)) for columns_of in patterns]
    done = 0
    for block in resamples.blocks():
        size = block.shape[0]
        where = slice(done, done + size)
        for columns_of, sums in pearson_sums:
            pearson[columns_of, where] = sums.correlations(block).T
        rows = max(1, SLICE_ELEMENTS // max(1, resamples.n))
        for start in range(0, size, rows):
            part = slice(done + start, done + min(size, start + rows))
            for pattern in prepared:
                spearman_matrix[pattern.columns, part] = pattern.spearman(block[start : start + rows])
        for columns_of, sums in ranked:
            spearman_matrix[columns_of, where] = sums.correlations(block).T
        done += size
        if progress is not None:
            progress(done, resamples.count)
    return BootstrapDraws(pearson, spearman_matrix, spearman)


def percentile_interval(draws: np.ndarray, confidence: float = 0.95) -> tuple[float, float] | None:
    """The percentile interval of one metric's draws; ``None`` when too few resamples had a value."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must lie strictly between 0 and 1")
    defined = draws[np.isfinite(draws)]
    if defined.size == 0 or defined.size < MIN_DEFINED_SHARE * draws.size:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(defined, [tail, 100.0 - tail])
    return (float(low), float(high))


def paired_difference_p(first: np.ndarray, second: np.ndarray) -> float | None:
    """Two-sided p-value that two metrics correlate equally, from their paired draws.

    The share of resamples in which the difference takes the sign opposite to its majority, doubled,
    with the usual +1 correction so that B resamples never claim p = 0: p = min(1, 2 (k + 1) / (B + 1)).
    ``None`` when fewer than :data:`MIN_DEFINED_SHARE` of the resamples define both correlations.
    """
    both = np.isfinite(first) & np.isfinite(second)
    if both.sum() == 0 or both.sum() < MIN_DEFINED_SHARE * first.size:
        return None
    difference = first[both] - second[both]
    minority = min(int(np.sum(difference <= 0)), int(np.sum(difference >= 0)))
    result: float | None = min(1.0, 2.0 * (minority + 1) / (difference.size + 1))
    return result


def _availability_patterns(present: np.ndarray) -> list[np.ndarray]:
    """Metric columns grouped by the set of items they have values for (usually one group)."""
    groups: dict[bytes, list[int]] = {}
    for column in range(present.shape[1]):
        groups.setdefault(np.packbits(present[:, column]).tobytes(), []).append(column)
    return [np.array(columns) for columns in groups.values()]


class _WeightedPearson:
    """The weighted Pearson correlation of ``x`` with metric columns that share one set of items, for
    blocks of count vectors: the sums it needs come from one matrix product per block (the human side's
    three sums once for all the columns, the metric side's three per column)."""

    def __init__(self, x: np.ndarray, values: np.ndarray, items: np.ndarray) -> None:
        mask = items.astype(np.float64)
        # Centering first keeps the sums of squares free of cancellation for values far from zero; scaling each
        # side by a power of two (exact) keeps them inside the range of doubles for values of any scale
        # (stats/centred.py): a weighted r does not change when a side is multiplied by a constant.
        # Both sides measured from their smallest value first (stats/centred.py): means as exact as the spread.
        if items.any():
            x_above = x - x[items].min()
            x_centered = (x_above - x_above[items].mean()) * mask
        else:
            x_centered = np.zeros_like(x)
        x_centered = np.ldexp(x_centered, -scale_exponent(x_centered))
        floor = np.where(items[:, None], values, np.inf).min(axis=0) if values.size else np.zeros(0)
        y = np.where(items[:, None], values - np.where(np.isfinite(floor), floor, 0.0), 0.0)
        counts = max(1.0, float(mask.sum()))
        y_centered = (y - y.sum(axis=0) / counts) * mask[:, None]
        if y_centered.size:
            largest = np.max(np.abs(y_centered), axis=0)
            y_centered = np.ldexp(y_centered, -np.where(largest > 0, np.frexp(largest)[1], 0))
        self.columns = values.shape[1]
        self.stacked = np.ascontiguousarray(
            np.concatenate(
                [
                    np.stack([mask, x_centered, x_centered**2], axis=1),
                    y_centered,
                    y_centered**2,
                    x_centered[:, None] * y_centered,
                ],
                axis=1,
            )
        )

    def correlations(self, block: np.ndarray) -> np.ndarray:
        """(b x columns) weighted Pearson correlations; NaN where either side is constant in a resample."""
        sums = row_product(block, self.stacked)
        s0, sx, sxx = sums[:, 0:1], sums[:, 1:2], sums[:, 2:3]
        m = self.columns
        sy, syy, sxy = sums[:, 3 : 3 + m], sums[:, 3 + m : 3 + 2 * m], sums[:, 3 + 2 * m : 3 + 3 * m]
        with np.errstate(invalid="ignore", divide="ignore"):
            covariance = sxy - sx * sy / s0
            variance_x = sxx - sx**2 / s0
            variance_y = syy - sy**2 / s0
            r = covariance / np.sqrt(variance_x * variance_y)
        undefined = (variance_x <= 1e-12 * np.maximum(sxx, 1e-300)) | (
            variance_y <= 1e-12 * np.maximum(syy, 1e-300)
        )
        r[undefined | (s0 < 2)] = np.nan
        result: np.ndarray = np.clip(r, -1.0, 1.0)
        return result


def _ranked_pattern(
    x: np.ndarray, values: np.ndarray, present: np.ndarray, columns: np.ndarray
) -> _WeightedPearson:
    """Full-sample average ranks of the human scores and of the pattern's metric columns over the
    pattern's items, ready for the weighted Pearson correlation."""
    items = present[:, columns[0]]
    ranks_x = np.zeros_like(x)
    ranks_x[items] = rankdata(x[items])
    ranks = np.zeros((x.size, columns.size))
    ranks[items] = rankdata(values[items][:, columns], axis=0)
    return _WeightedPearson(ranks_x, ranks, items)


@dataclass(frozen=True)
class _TieGroups:
    """One column's items in sorted order and where each run of equal values ends."""

    order: np.ndarray  # item positions (within the pattern's items) in ascending order of value
    ends: np.ndarray  # index into ``order`` of the last item of each tie group
    group_of_item: np.ndarray  # tie group of each item (within the pattern's items)

    @classmethod
    def of(cls, column: np.ndarray) -> _TieGroups:
        order = np.argsort(column, kind="stable")
        ordered = column[order]
        last_of_group = np.append(ordered[1:] != ordered[:-1], True)
        ends = np.flatnonzero(last_of_group)
        group_sorted = np.concatenate(([0], np.cumsum(last_of_group[:-1])))
        group_of_item = np.empty_like(group_sorted)
        group_of_item[order] = group_sorted
        return cls(order=order, ends=ends, group_of_item=group_of_item)

    @property
    def untied(self) -> bool:
        return self.ends.size == self.order.size

    def ranks_and_cross(
        self, weights: np.ndarray, weighted_other_rank: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per resample: the tie term sum over groups of (d^3 - d), where d is how many draws a tie group
        got, and the cross sum sum_i w_i rank_i o_i with ``weighted_other_rank`` = w_i o_i.

        The average rank of a group is c - (d - 1) / 2, where c is the cumulative count of draws up to
        the group's last member, so the cross sum is sum_g (c_g - (d_g - 1) / 2) S_g with S_g the group's
        sum of w_i o_i.
        """
        drawn_sorted = weights[:, self.order]
        cumulative = np.cumsum(drawn_sorted, axis=1)
        other_sorted = weighted_other_rank[:, self.order]
        if self.untied:
            # Singleton groups: d = w_i, S_g = w_i o_i; the tie term depends on the counts only.
            cross = np.einsum("bi,bi->b", cumulative, other_sorted)
            cross -= 0.5 * np.einsum("bi,bi->b", drawn_sorted, other_sorted)
            cross += 0.5 * other_sorted.sum(axis=1)
            return _tie_term(weights), cross
        at_ends = cumulative[:, self.ends]
        drawn = np.diff(at_ends, axis=1, prepend=0.0)
        group_other = np.diff(np.cumsum(other_sorted, axis=1)[:, self.ends], axis=1, prepend=0.0)
        cross = np.einsum("bg,bg->b", at_ends - 0.5 * (drawn - 1.0), group_other)
        return _tie_term(drawn), cross

    def ranks(self, weights: np.ndarray) -> np.ndarray:
        """(b x items): each item's average rank in each resample."""
        cumulative = np.cumsum(weights[:, self.order], axis=1)[:, self.ends]
        drawn = np.diff(cumulative, axis=1, prepend=0.0)
        group_rank = cumulative - 0.5 * (drawn - 1.0)
        return group_rank[:, self.group_of_item]


def _tie_term(drawn: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.einsum("bg,bg,bg->b", drawn, drawn, drawn) - drawn.sum(axis=1)
    return result


@dataclass(frozen=True)
class _PreparedPattern:
    """The metric columns that share one set of items, with the human scores' tie groups on that set.

    With N draws, average ranks always sum to N(N + 1) / 2 and their sum of squared deviations is
    (N^3 - N) / 12 minus the tie correction sum (d^3 - d) / 12 (Kendall's tie correction), so only the
    cross sum of the two rankings needs a pass over the items for each metric.
    """

    columns: np.ndarray
    items: np.ndarray
    human: _TieGroups
    metrics: tuple[_TieGroups, ...]

    @classmethod
    def of(
        cls, x: np.ndarray, values: np.ndarray, present: np.ndarray, columns: np.ndarray
    ) -> _PreparedPattern:
        items = np.flatnonzero(present[:, columns[0]])
        return cls(
            columns=columns,
            items=items,
            human=_TieGroups.of(x[items]),
            metrics=tuple(_TieGroups.of(values[items, column]) for column in columns),
        )

    def spearman(self, block: np.ndarray) -> np.ndarray:
        """(metrics of the pattern x b) Spearman correlations for one block of resamples."""
        result = np.full((len(self.columns), block.shape[0]), np.nan)
        if self.items.size < 2:
            return result
        weights = np.ascontiguousarray(block[:, self.items])
        drawn = weights.sum(axis=1)
        untied = (drawn**3 - drawn) / 12.0
        weighted_human_rank = weights * self.human.ranks(weights)
        variance_h = untied - self.human.ranks_and_cross(weights, weighted_human_rank)[0] / 12.0
        mean_part = drawn * ((drawn + 1.0) / 2.0) ** 2
        tolerance = 1e-9 * np.maximum(drawn, 1.0) ** 3
        for row, groups in enumerate(self.metrics):
            tie_term, cross = groups.ranks_and_cross(weights, weighted_human_rank)
            variance_m = untied - tie_term / 12.0
            with np.errstate(invalid="ignore", divide="ignore"):
                rho = (cross - mean_part) / np.sqrt(variance_h * variance_m)
            rho[(variance_h <= tolerance) | (variance_m <= tolerance) | (drawn < 2)] = np.nan
            result[row] = np.clip(rho, -1.0, 1.0)
        return result


def row_product(block: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``block @ matrix``; when either side is narrow (few resamples, or few columns), summed over slices of the
    replies (see :data:`MIN_PRODUCT_ROWS`)."""
    rows, inner = block.shape
    columns = matrix.shape[1] if matrix.ndim == 2 else 1
    width = max(64, PRODUCT_CELLS // max(1, rows * columns))
    if min(rows, columns) >= MIN_PRODUCT_ROWS or inner <= width:
        return np.asarray(block @ matrix)
    total = np.zeros((rows, columns) if matrix.ndim == 2 else rows)
    for start in range(0, inner, width):
        total += block[:, start : start + width] @ matrix[start : start + width]
    return total


def bootstrap_interval_or_none(draws: np.ndarray, confidence: float = 0.95) -> list[float | None]:
    """``[low, high]`` for JSON, ``[None, None]`` when undefined."""
    interval = percentile_interval(draws, confidence)
    if interval is None or not all(math.isfinite(v) for v in interval):
        return [None, None]
    return [interval[0], interval[1]]

"""The data behind two figures of the papers: the quantile plot and the number-of-references curve.

* Quantile plot (Tao et al., 2018, Figure 1): the replies sorted by human score (the mean over raters) and cut
  into five equal-sized groups; each metric's mean score per group. A metric that agrees with people
  rises from the first group to the last.
* Number of references (Gupta et al., 2019, section 5.3 and Figure 2): the correlation of a multi-reference metric
  (score(y, R) = max over r in R of d(y, r), eq. 1) when only k of a context's references are used,
  averaged over random subsets, for k = 1 .. N. The per-reference scores d(y, r) come from the caller.
  A context with fewer than k references uses all it has.

Pure Python + numpy/scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

QUANTILE_GROUPS = 5
DEFAULT_SUBSET_DRAWS = 50


@dataclass(frozen=True)
class QuantileGroup:
    human_low: float
    human_high: float
    human_mean: float
    metric_mean: float
    items: int


def quantile_means(
    human: np.ndarray, metric: np.ndarray, groups: int = QUANTILE_GROUPS
) -> list[QuantileGroup]:
    """Mean human score and mean metric score of each of ``groups`` equal-sized groups of replies
    ordered by human score (ties broken by position, so the groups stay equal-sized); items without a
    metric value (NaN) are left out first. Fewer items than groups: one group per item."""
    x = np.asarray(human, dtype=float)
    y = np.asarray(metric, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size == 0:
        return []
    order = np.argsort(x, kind="stable")
    result = []
    for part in np.array_split(order, min(groups, x.size)):
        result.append(
            QuantileGroup(
                human_low=float(x[part].min()),
                human_high=float(x[part].max()),
                human_mean=float(x[part].mean()),
                metric_mean=float(y[part].mean()),
                items=int(part.size),
            )
        )
    return result


@dataclass(frozen=True)
class ReferenceCountPoint:
    """The correlation with k references, over ``draws`` random subsets: mean and standard deviation."""

    references: int
    pearson_mean: float | None
    pearson_sd: float | None
    spearman_mean: float | None
    spearman_sd: float | None
    items: int


def reference_count_curve(
    human: np.ndarray,
    per_reference: np.ndarray,
    *,
    draws: int = DEFAULT_SUBSET_DRAWS,
    seed: int = 0,
) -> list[ReferenceCountPoint]:
    """Correlation with human scores when each reply is scored against k random references, k = 1..N.

    ``per_reference`` is (items x N): the metric of each reply against each reference of its context,
    NaN where the context has fewer references. Items with no reference at all are left out.
    """
    x = np.asarray(human, dtype=float)
    scores = np.asarray(per_reference, dtype=float)
    if scores.ndim != 2 or scores.shape[0] != x.size:
        raise ValueError(f"per_reference must be (items x references) for {x.size} items, got {scores.shape}")
    available = np.isfinite(scores)
    keep = available.any(axis=1) & np.isfinite(x)
    x, scores, available = x[keep], scores[keep], available[keep]
    width = scores.shape[1]
    if x.size == 0 or width == 0:
        return []
    generator = np.random.default_rng(seed)
    running = np.empty((draws, *scores.shape))
    for draw in range(draws):
        # A random order of each context's references, missing ones last; the running maximum along it
        # is the score with the first k references, for every k at once.
        keys = np.where(available, generator.random(scores.shape), np.inf)
        shuffled = np.take_along_axis(scores, np.argsort(keys, axis=1), axis=1)
        running[draw] = np.fmax.accumulate(shuffled, axis=1)
    pearson = np.full((draws, width), np.nan)
    spearman = np.full((draws, width), np.nan)
    if x.size >= 3 and np.ptp(x) > 0:
        x_ranks = scipy_stats.rankdata(x)
        for k in range(width):
            columns = running[:, :, k].T  # items x draws
            pearson[:, k] = _columnwise_pearson(x, columns)
            spearman[:, k] = _columnwise_pearson(x_ranks, scipy_stats.rankdata(columns, axis=0))
    return [
        ReferenceCountPoint(
            references=k + 1,
            pearson_mean=_mean_or_none(pearson[:, k]),
            pearson_sd=_sd_or_none(pearson[:, k]),
            spearman_mean=_mean_or_none(spearman[:, k]),
            spearman_sd=_sd_or_none(spearman[:, k]),
            items=int(np.sum(available.sum(axis=1) >= k + 1)),
        )
        for k in range(width)
    ]


def _columnwise_pearson(x: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Pearson's r of ``x`` with every column; NaN for a constant column."""
    x_centered = x - x.mean()
    centered = columns - columns.mean(axis=0)
    spread = np.sqrt((centered**2).sum(axis=0) * (x_centered**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (x_centered @ centered) / spread
    r[spread <= 1e-12 * max(1.0, float(np.abs(spread).max(initial=0.0)))] = np.nan
    result: np.ndarray = np.clip(r, -1.0, 1.0)
    return result


def _mean_or_none(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def _sd_or_none(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    if finite.size < 2:
        return 0.0 if finite.size == 1 else None
    value = float(finite.std(ddof=1))
    return value if math.isfinite(value) else None

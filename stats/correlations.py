"""Correlation of an automatic metric with human judgments: coefficients, p-values, confidence intervals.

RUBER (Tao et al., 2018, section 4.2, Table 2) and the multi-reference study (Gupta et al., 2019, section 5.1.2, Table 4)
report Pearson's r and Spearman's rho with their p-values; this module adds 95% confidence intervals so
that two metrics can be compared honestly on a few hundred items:

* Pearson: Fisher's z transform, z = artanh(r) with standard error 1/sqrt(n - 3).
* Spearman: the same transform with the variance 1.06 / (n - 3) of Fieller, Hartley and Pearson (1957),
  as recommended by Bonett and Wright (2000), "Sample size requirements for estimating Pearson, Kendall
  and Spearman correlations", Psychometrika 65(1), 23-28.
* Kendall's tau-b (scipy's, which handles the ties of discrete human scores): the transform with the
  variance 0.437 / (n - 4) from the same two papers.

These intervals are the fast fallback; the report's main intervals come from a paired bootstrap shared
by all metrics (stats/bootstrap.py).

``jitter`` adds the N(0, 0.25^2) noise that RUBER's Figures 4-5 put on human scores so that the discrete
points of a 0-2 scale do not hide one another in a scatter plot (for display only, never for statistics).

Pure Python + numpy/scipy: no Django here (import-linter contract "stats.correlations").
By convention ``x`` holds human scores and ``y`` metric values; the notes name them so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

TOO_FEW_ITEMS = "too few items"
TOO_FEW_FOR_INTERVAL = "too few items for a confidence interval"
METRIC_CONSTANT = "metric is constant"
HUMAN_CONSTANT = "human scores are constant"
SPEARMAN_VARIANCE_FACTOR = 1.06  # Bonett & Wright (2000): var(artanh(rho_s)) ~ 1.06 / (n - 3)
KENDALL_VARIANCE_FACTOR = 0.437  # Fieller et al. (1957): var(artanh(tau)) ~ 0.437 / (n - 4)


@dataclass(frozen=True)
class CorrelationResult:
    """A correlation coefficient with its two-sided p-value and confidence interval.

    Every statistic is ``None`` (never NaN) when it is undefined; ``note`` then says why, and is ``""``
    when everything could be computed.
    """

    coefficient: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    note: str = ""


def pearson_with_ci(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> CorrelationResult:
    """Pearson's r of paired values, its p-value (scipy) and a Fisher-z confidence interval."""
    xs, ys = _paired_arrays(x, y, confidence)
    undefined = _undefined_reason(xs, ys)
    if undefined:
        return CorrelationResult(None, None, None, None, len(xs), undefined)
    result = scipy_stats.pearsonr(xs, ys)
    return _with_fisher_interval(float(result.statistic), float(result.pvalue), len(xs), confidence, 1.0)


def spearman_with_ci(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> CorrelationResult:
    """Spearman's rho of paired values, its p-value (scipy) and a Bonett-Wright Fisher-z interval."""
    xs, ys = _paired_arrays(x, y, confidence)
    undefined = _undefined_reason(xs, ys)
    if undefined:
        return CorrelationResult(None, None, None, None, len(xs), undefined)
    result = scipy_stats.spearmanr(xs, ys)
    return _with_fisher_interval(
        float(result.statistic), float(result.pvalue), len(xs), confidence, SPEARMAN_VARIANCE_FACTOR
    )


def kendall_with_ci(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> CorrelationResult:
    """Kendall's tau-b of paired values, its p-value (scipy) and a Fisher-z interval with variance
    0.437 / (n - 4) (Fieller, Hartley and Pearson 1957)."""
    xs, ys = _paired_arrays(x, y, confidence)
    undefined = _undefined_reason(xs, ys)
    if undefined:
        return CorrelationResult(None, None, None, None, len(xs), undefined)
    result = scipy_stats.kendalltau(xs, ys)
    coefficient = max(-1.0, min(1.0, float(result.statistic)))
    p_value = float(result.pvalue)
    p_or_none = p_value if math.isfinite(p_value) else None
    n = len(xs)
    if n <= 4:
        return CorrelationResult(coefficient, p_or_none, None, None, n, TOO_FEW_FOR_INTERVAL)
    if abs(coefficient) >= 1.0:
        return CorrelationResult(coefficient, p_or_none, coefficient, coefficient, n)
    half_width = _critical_value(confidence) * math.sqrt(KENDALL_VARIANCE_FACTOR / (n - 4))
    z = math.atanh(coefficient)
    return CorrelationResult(coefficient, p_or_none, math.tanh(z - half_width), math.tanh(z + half_width), n)


def fisher_z_interval(
    coefficient: float, n: int, confidence: float = 0.95, variance_factor: float = 1.0
) -> tuple[float, float]:
    """tanh(artanh(r) -/+ z_crit * sqrt(variance_factor / (n - 3))); needs n > 3."""
    if n <= 3:
        raise ValueError("a Fisher-z interval needs more than 3 items")
    if abs(coefficient) >= 1.0:
        # artanh(+-1) is infinite: the interval collapses onto the (perfect) coefficient.
        return (coefficient, coefficient)
    z = math.atanh(coefficient)
    half_width = _critical_value(confidence) * math.sqrt(variance_factor / (n - 3))
    return (math.tanh(z - half_width), math.tanh(z + half_width))


def jitter(values: Sequence[float], sd: float = 0.25, seed: int = 0) -> list[float]:
    """``values`` plus Gaussian noise N(0, sd^2) from a seeded generator: the same plot on every load."""
    if sd < 0:
        raise ValueError("sd must not be negative")
    generator = np.random.default_rng(seed)
    noise = generator.normal(0.0, sd, size=len(values))
    return [float(value) + float(delta) for value, delta in zip(values, noise, strict=True)]


def _paired_arrays(
    x: Sequence[float], y: Sequence[float], confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    if len(x) != len(y):
        raise ValueError(f"x and y must be paired: {len(x)} != {len(y)} values")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must lie strictly between 0 and 1")
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ys))):
        raise ValueError("values must be finite (leave missing items out before correlating)")
    return xs, ys


def _undefined_reason(xs: np.ndarray, ys: np.ndarray) -> str:
    if len(xs) < 3:
        return TOO_FEW_ITEMS
    # Both coefficients divide by a standard deviation; a constant side makes them 0/0.
    if np.all(ys == ys[0]):
        return METRIC_CONSTANT
    if np.all(xs == xs[0]):
        return HUMAN_CONSTANT
    return ""


def _with_fisher_interval(
    coefficient: float, p_value: float, n: int, confidence: float, variance_factor: float
) -> CorrelationResult:
    # Rounding can push a perfect correlation a hair past 1; keep the coefficient in [-1, 1].
    coefficient = max(-1.0, min(1.0, coefficient))
    p_or_none = p_value if math.isfinite(p_value) else None
    if n <= 3:
        return CorrelationResult(coefficient, p_or_none, None, None, n, TOO_FEW_FOR_INTERVAL)
    low, high = fisher_z_interval(coefficient, n, confidence, variance_factor)
    return CorrelationResult(coefficient, p_or_none, low, high, n)


def _critical_value(confidence: float) -> float:
    return float(scipy_stats.norm.ppf(0.5 + confidence / 2.0))

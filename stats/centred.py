"""Values centred within their groups and scaled by a power of two: correlations exact at every scale.

A correlation is invariant under positive scaling and shifts of either side, but the textbook sums are not:
``sum(x^2) - sum(x)^2 / n`` cancels when the spread is small beside the level (a metric with a 1e-15 floor,
CIDEr-D values of 1e-240 inside one context), and ``sum((x - mean)^2)`` underflows to 0 below about 1e-154
and overflows above 1e154. Here each group's values are centred first (two passes, as
``scipy.stats.pearsonr`` does) and its deviations divided by the power of two nearest above their largest
magnitude, so every group's deviations lie in (-1, 1) whatever the scale of the values: their sums of squares
and products neither underflow nor cancel, and the scaling itself is exact (it changes only the exponent).
A group whose present values are all equal (compared exactly, on the raw values) is marked constant and its
deviations are exactly 0, so a rounding residue of its mean can never pass for a spread.

Means are taken of the values minus a reference (the smallest value): far from zero, a mean rounds at the
level of the values (1e-13 at 1024), which beside a spread of 0.01 is an error of 1e-11 in every deviation;
the differences from the smallest value are exact there (Sterbenz), and so is their mean to the spread's own
precision. A shift of the values then changes nothing but the reference.

Pure numpy: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# The exponent of a constant group: 2 ** (NO_SPREAD - e) is 0 for every exponent e a double can have.
NO_SPREAD = -100_000


@dataclass(frozen=True)
class Centred:
    """``scaled[i]`` = (value_i - mean of i's group) * 2 ** -exponent[group of i], in (-1, 1); 0 for the
    replies of constant groups, whose ``exponent`` is :data:`NO_SPREAD`."""

    scaled: np.ndarray
    exponent: np.ndarray  # int64, one per group
    mean: np.ndarray  # each group's mean (NaN where a group has no value)
    constant: np.ndarray  # per group: every value equal, or fewer than 2 values

    @property
    def squares(self) -> np.ndarray:
        result: np.ndarray = self.scaled * self.scaled
        return result


def centred_within_groups(
    values: np.ndarray, codes: np.ndarray, count: int, reference: float | None = None
) -> Centred:
    """``values`` (finite) of replies in groups ``codes`` (0..count-1), centred and scaled group by group.
    ``mean`` is each group's mean minus ``reference`` (0 when None), as exact as the deviations."""
    values = np.asarray(values, dtype=np.float64)
    sizes = np.bincount(codes, minlength=count).astype(np.float64)
    high = np.full(count, -np.inf)
    low = np.full(count, np.inf)
    np.maximum.at(high, codes, values)
    np.minimum.at(low, codes, values)
    constant = ~(high > low)
    floor = np.where(np.isfinite(low), low, 0.0)
    above = values - floor[codes]  # exact where the group's values lie within a factor 2 of its smallest
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_above = np.bincount(codes, above, count) / sizes
    # A constant group's mean is its value exactly (a sum of equal values over their count need not be).
    mean_above = np.where(constant, 0.0, mean_above)
    deviation = above - mean_above[codes]
    largest = np.zeros(count)
    np.maximum.at(largest, codes, np.abs(deviation))
    exponent = np.frexp(largest)[1].astype(np.int64)
    exponent[constant | (largest == 0)] = NO_SPREAD
    constant = constant | (largest == 0)
    scaled_deviation = np.ldexp(deviation, -np.where(constant, 0, exponent)[codes])
    scaled_deviation[constant[codes]] = 0.0
    with np.errstate(invalid="ignore"):
        mean = (floor - (reference or 0.0)) + mean_above
    mean[sizes == 0] = np.nan
    return Centred(scaled_deviation, exponent, mean, constant)


def scale_exponent(values: np.ndarray) -> int:
    """The exponent e with max |values| in [2^(e-1), 2^e) (0 when every value is 0): ``ldexp(values, -e)``
    lies in (-1, 1), exactly as ``values`` times a power of two."""
    largest = float(np.max(np.abs(values))) if np.size(values) else 0.0
    return int(np.frexp(largest)[1]) if largest > 0 else 0


@dataclass(frozen=True)
class Scaled:
    """``values`` minus ``reference`` (their smallest), times 2 ** -``top`` (in [0, 1)), with their mean and
    population standard deviation (1.0 where the values are all equal, so that dividing by it centres them
    only)."""

    values: np.ndarray
    reference: float
    top: int
    mean: float
    spread: float


def scaled(values: np.ndarray) -> Scaled:
    """The values minus the smallest, scaled into [0, 1) by a power of two, and their mean and spread computed
    there: neither the squares nor the sums can leave the range of doubles, and a shift of the values only
    moves the reference."""
    values = np.asarray(values, dtype=np.float64)
    reference = float(values.min()) if values.size else 0.0
    above = values - reference
    top = scale_exponent(above)
    inside = np.ldexp(above, -top)
    mean = float(inside.mean()) if inside.size else 0.0
    spread = float(np.sqrt(np.mean((inside - mean) ** 2))) if inside.size else 0.0
    return Scaled(inside, reference, top, mean, spread if spread > 0 else 1.0)


def standardised(values: np.ndarray) -> np.ndarray:
    """z-scores (population standard deviation, as ``scipy.stats.zscore``) at any scale and level; values that
    are all equal are centred only."""
    inside = scaled(values)
    return (inside.values - inside.mean) / inside.spread


def centred_columns(data: np.ndarray) -> np.ndarray:
    """Each column of ``data`` minus its mean, times the power of two that brings its largest deviation into
    [0.5, 1): what ``np.corrcoef`` needs to be exact at any scale (its products would under- or overflow
    beyond about 1e+-154). A constant column stays all 0."""
    if data.size == 0:
        return data.astype(np.float64)
    constant = np.all(data == data[:1], axis=0)  # exactly: a rounding residue of the mean is no spread
    above = data - data.min(axis=0)  # see the module docstring: a mean as exact as the spread
    centred = np.where(constant, 0.0, above - above.mean(axis=0))
    largest = np.max(np.abs(centred), axis=0)
    return np.ldexp(centred, -np.where(largest > 0, np.frexp(largest)[1], 0))


def group_pearson(x: Centred, y: Centred, codes: np.ndarray, count: int) -> np.ndarray:
    """Pearson's r within every group from centred, scaled values; NaN where either side is constant."""
    sxy = np.bincount(codes, x.scaled * y.scaled, count)
    sxx = np.bincount(codes, x.squares, count)
    syy = np.bincount(codes, y.squares, count)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx * syy)
    r[x.constant | y.constant] = np.nan
    result: np.ndarray = np.clip(r, -1.0, 1.0)
    return result


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r of two vectors at any scale (each centred and scaled by a power of two first); ``None`` for
    fewer than two values or a constant side."""
    if np.size(x) < 2:
        return None
    data = centred_columns(
        np.column_stack([np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)])
    )
    sxx, syy = (data * data).sum(axis=0)
    if sxx == 0 or syy == 0:
        return None
    return float(np.clip(float(data[:, 0] @ data[:, 1]) / math.sqrt(float(sxx) * float(syy)), -1.0, 1.0))

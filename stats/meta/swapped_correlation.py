"""Pearson's r within a group whose replies hold one metric's scores or the other's: the statistic of a swapped
permutation (stats/meta/permutation.py), exact at every scale.

The permutation tests of Deutsch, Dror and Roth (2021) standardise each metric over the replies both scored
(z-scores, as mt-metrics-eval's ``PermutationSigDiff``) and swap them. A z-score is z_i = c_g + d_i: its group's
offset c_g = (mean_g - mean) / sd and its deviation within the group d_i = (v_i - mean_g) / sd. Forming z_i
as one double loses d_i wherever a metric's spread inside a group is tiny beside the offset (a BLEU-4 with a
1e-15 floor: values below 1e-6 in most contexts; CIDEr-D values of 1e-240), and a within-group r from sums of
z then cancels to noise. So here the two parts stay apart: d_i is computed from the raw values (centred
within the group, scaled by a power of two: stats/centred.py) and carries its own exponent; c_g is a plain
double, needed only where a group mixes the two metrics.

In a group of n replies, let A be the replies that hold metric a (sums over A of a's scaled deviations: count
m_A, sum S_A, squares Q_A, products with the centred human score P_A) and B those that hold metric b (m_B,
S_B, Q_B, P_B). With f_a, f_b the two metrics' scale factors, G the gap between the two parts' means and
h the human score centred within the group (so that sum h = 0), the decomposition of a sum of squares by parts
gives

    S_yy = f_a^2 (Q_A - S_A^2 / m_A) + f_b^2 (Q_B - S_B^2 / m_B) + (m_A m_B / n) G^2,
    G    = (c_b - c_a) + f_b S_B / m_B - f_a S_A / m_A,
    S_xy = f_a P_A + f_b P_B + (c_b - c_a) sum_B h,

and r = S_xy / sqrt(S_hh S_yy). The offsets enter only through the gap, so nothing cancels against them:
with every reply holding metric a (no swap) this is exactly the group's r of the report's rows. All terms are
divided by the largest scale present (a power of two), so nothing under- or overflows either.

A swapped group counts as constant (its r undefined, as scipy's and mt-metrics-eval's NaN) when S_yy is at
most 1e-12 of the sum of its terms' magnitudes (the gap's counted as |c_a| + |c_b|, the size its rounding
follows): rounding leaves a residue of about 1e-16 of them when every value held is equal (two constant
metrics whose offsets are equal in exact arithmetic), and a true spread is far above it.

Pure numpy: no Django here (import-linter contract).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stats.centred import NO_SPREAD, centred_within_groups, scaled

CONSTANT_SHARE = 1e-12  # S_yy at most this share of its terms' magnitudes: the swapped group is constant


@dataclass(frozen=True)
class Deviations:
    """One metric on a set of replies in groups: the z-scores' deviations within groups, ``scaled`` (per
    reply, in (-1, 1)) times 2 ** ``exponent`` (per group; :data:`NO_SPREAD` where constant), and the groups'
    ``offset`` (the z-score of each group's mean)."""

    scaled: np.ndarray
    exponent: np.ndarray
    offset: np.ndarray


def deviations(values: np.ndarray, codes: np.ndarray, count: int) -> Deviations:
    """The z-scores (over all ``values``, population sd) of replies in groups ``codes``, split into the
    offset of each group and the deviations within it (see the module docstring)."""
    inside = scaled(values)  # the z-scores' mean and sd, at any scale (mt-metrics-eval: centred only if 0)
    centred = centred_within_groups(values, codes, count, reference=inside.reference)
    factor, power = np.frexp(1.0 / inside.spread)  # 1 / sd = factor * 2 ** power, factor in [0.5, 1)
    with np.errstate(invalid="ignore"):
        offset = (np.ldexp(centred.mean, -inside.top) - inside.mean) / inside.spread
    exponent = np.where(centred.constant, NO_SPREAD, centred.exponent - inside.top + int(power))
    return Deviations(centred.scaled * factor, exponent, np.nan_to_num(offset))


def mixed_r(
    n: np.ndarray,
    part_a: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    part_b: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    human_b: np.ndarray,
    exponents: tuple[np.ndarray, np.ndarray],
    offsets: tuple[np.ndarray, np.ndarray],
    human_sq: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Pearson's r of each group (arrays broadcast: groups, or permutations x groups, or groups x patterns)
    when the replies A hold metric a and B metric b. ``part_a`` = (m_A, S_A, Q_A, P_A) of metric a's scaled
    deviations over A, ``part_b`` the same of b's over B; ``human_b`` = the centred human scores summed over B;
    ``exponents`` = (a's, b's) per group; ``offsets`` = (c_a, c_b) per group; ``human_sq`` = S_hh (0 where the
    human scores are constant). Returns r (0 where undefined) and where it is defined."""
    count_a, sum_a, squares_a, human_a = part_a
    count_b, sum_b, squares_b, human_products_b = part_b
    has_a, has_b = count_a > 0.5, count_b > 0.5
    mixed = has_a & has_b
    offset_gap = offsets[1] - offsets[0]
    # The gap is exact only to the rounding of the offsets themselves: a gap of two equal offsets is no spread.
    offset_size = np.abs(offsets[0]) + np.abs(offsets[1])
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        gap_exponent = np.where(mixed & (offset_gap != 0), np.frexp(offset_gap)[1], NO_SPREAD)
        top = np.maximum(
            np.maximum(np.where(has_a, exponents[0], NO_SPREAD), np.where(has_b, exponents[1], NO_SPREAD)),
            gap_exponent,
        )
        factor_a = np.where(has_a, np.ldexp(1.0, exponents[0] - top), 0.0)
        factor_b = np.where(has_b, np.ldexp(1.0, exponents[1] - top), 0.0)
        gap = np.where(mixed, np.ldexp(offset_gap, -top), 0.0)
        size = np.where(mixed, np.ldexp(offset_size, -top), 0.0)
        mean_a = np.where(has_a, sum_a / count_a, 0.0)
        mean_b = np.where(has_b, sum_b / count_b, 0.0)
        within_a = np.maximum(squares_a - sum_a * mean_a, 0.0)
        within_b = np.maximum(squares_b - sum_b * mean_b, 0.0)
        weight = np.where(mixed, count_a * count_b / n, 0.0)
        level_gap = gap + factor_b * mean_b - factor_a * mean_a
        syy = factor_a**2 * within_a + factor_b**2 * within_b + weight * level_gap**2
        magnitude = factor_a**2 * np.maximum(squares_a, 0.0) + factor_b**2 * np.maximum(squares_b, 0.0)
        magnitude = magnitude + weight * (size + factor_b * np.abs(mean_b) + factor_a * np.abs(mean_a)) ** 2
        sxy = factor_a * human_a + factor_b * human_products_b + gap * human_b
        r = sxy / np.sqrt(human_sq * syy)
    valid = (syy > CONSTANT_SHARE * magnitude) & (human_sq > 0) & (n >= 2)
    r = np.clip(np.where(valid, r, 0.0), -1.0, 1.0)
    return r, valid

"""Pearson's r within a group whose replies hold one metric's scores or the other's: the statistic of a swapped
permutation (stats/meta/permutation/), exact at every scale.

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
    factor_a, factor_b, gap, size = _scales(count_a, count_b, exponents, offsets)
    # In place, on as few temporaries as the arithmetic allows (a pattern table is groups x patterns large). An
    # empty part has zero sums, so each of its terms vanishes by itself, and the weight of the gap between the
    # parts, m_A m_B / n, is 0 unless both hold replies. With f the factors and S, Q the parts' sums:
    # S_yy = f_a^2 Q_A - (f_a S_A)^2 / m_A + f_b^2 Q_B - (f_b S_B)^2 / m_B + w (gap + f_b S_B/m_B - f_a S_A/m_A)^2.
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled_a = np.multiply(sum_a, factor_a)  # f_a S_A
        mean_a = np.divide(scaled_a, np.maximum(count_a, 1.0))
        scaled_b = np.multiply(sum_b, factor_b)
        mean_b = np.divide(scaled_b, np.maximum(count_b, 1.0))
        magnitude = np.multiply(squares_a, factor_a * factor_a)
        magnitude += squares_b * (factor_b * factor_b)
        scaled_a *= mean_a
        scaled_b *= mean_b
        syy = magnitude - scaled_a
        syy -= scaled_b
        weight = np.multiply(count_a, count_b)
        weight /= n
        level = np.subtract(mean_b, mean_a)
        level += gap
        level *= level
        level *= weight
        syy += level
        # |terms| for the test of a constant group: the squares, and the gap's reach at its largest
        np.abs(mean_a, out=mean_a)
        np.abs(mean_b, out=mean_b)
        mean_a += mean_b
        mean_a += size
        mean_a *= mean_a
        mean_a *= weight
        magnitude += mean_a
        sxy = np.multiply(human_a, factor_a)
        sxy += human_products_b * factor_b
        sxy += human_b * gap
        r = np.multiply(syy, human_sq)
        np.sqrt(r, out=r)
        np.divide(sxy, r, out=r)
    magnitude *= CONSTANT_SHARE
    valid = syy > magnitude
    valid &= (human_sq > 0) & (n >= 2)
    np.clip(r, -1.0, 1.0, out=r)
    r[~valid] = 0.0
    return r, valid


# Exponents of one group's scales this far apart at most: one common scale leaves every term's square above
# 2^-1000 (no underflow), so the scale can be the group's, not each swap pattern's.
COMMON_SCALE_SPREAD = 450


def _scales(
    count_a: np.ndarray,
    count_b: np.ndarray,
    exponents: tuple[np.ndarray, np.ndarray],
    offsets: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The factors of a's and b's deviations, the gap c_b - c_a and |c_a| + |c_b|, all divided by the largest
    scale present (a power of two): per group where its scales lie within :data:`COMMON_SCALE_SPREAD`
    exponents of each other (nearly always), else per cell, from the parts the cell holds."""
    offset_gap = offsets[1] - offsets[0]
    # The gap is exact only to the rounding of the offsets themselves: a gap of two equal offsets is no spread.
    offset_size = np.abs(offsets[0]) + np.abs(offsets[1])
    gap_exponent = np.where(offset_gap != 0, np.frexp(offset_gap)[1], NO_SPREAD)
    top = np.maximum(np.maximum(exponents[0], exponents[1]), gap_exponent)
    low = np.minimum.reduce([np.where(e == NO_SPREAD, top, e) for e in (*exponents, gap_exponent)])
    with np.errstate(over="ignore"):
        if np.all(top - low <= COMMON_SCALE_SPREAD):
            return (
                np.ldexp(1.0, exponents[0] - top),
                np.ldexp(1.0, exponents[1] - top),
                np.ldexp(offset_gap, -top),
                np.ldexp(offset_size, -top),
            )
        has_a, has_b = count_a > 0.5, count_b > 0.5
        mixed = has_a & has_b
        top = np.maximum(
            np.maximum(np.where(has_a, exponents[0], NO_SPREAD), np.where(has_b, exponents[1], NO_SPREAD)),
            np.where(mixed, gap_exponent, NO_SPREAD),
        )
        return (
            np.where(has_a, np.ldexp(1.0, exponents[0] - top), 0.0),
            np.where(has_b, np.ldexp(1.0, exponents[1] - top), 0.0),
            np.where(mixed, np.ldexp(offset_gap, -top), 0.0),
            np.where(mixed, np.ldexp(offset_size, -top), 0.0),
        )

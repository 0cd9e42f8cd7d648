"""The intraclass correlation of a complete ratings matrix (replies x raters), from its two-way ANOVA.

Shrout and Fleiss (1979), McGraw and Wong (1996), in the notation of Liljequist et al. (2019), and computed as
``pingouin.intraclass_corr`` computes it (its balanced two-way ANOVA with one rating per cell, then its
formulas for the coefficients, the F tests and the 95% intervals, the intervals rounded to 2 decimals as
pingouin's default options round them), without building a data frame of every
rating: at 100,000 replies x 5 raters pingouin spends most of its time in pandas. Equal to pingouin's values
to 1e-12 (tests/stats/test_intraclass.py).

With n replies (rows), k raters (columns) and grand mean mu, the mean squares are

* between replies MSB = k sum_i (mean_i - mu)^2 / (n - 1),
* between raters MSJ = n sum_j (mean_j - mu)^2 / (k - 1),
* error MSE = (SS_total - SS_replies - SS_raters) / ((n - 1)(k - 1)),
* within replies MSW = (SS_raters + SS_error) / (k - 1 + (n - 1)(k - 1)) (the one-way model's);

ICC(1,1) = (MSB - MSW) / (MSB + (k - 1) MSW), ICC(A,1) = (MSB - MSE) / (MSB + (k - 1) MSE + k (MSJ - MSE) / n),
ICC(1,k) = (MSB - MSW) / MSB, ICC(A,k) = (MSB - MSE) / (MSB + (MSJ - MSE) / n) (McGraw and Wong 1996, table 4;
the interval of ICC(A,1) with Satterthwaite's degrees of freedom, their table 7).

Pure numpy/scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import f

ALPHA = 0.05  # the intervals are 95%
# An error sum of squares at most this share of the total is (nearly) perfect agreement: see MeanSquares.resolved.
RESOLVED = 1e-8
INTERVAL_DECIMALS = 2  # pingouin rounds its CI95 column so by default (pingouin.options["round.column.CI95"])


@dataclass(frozen=True)
class Intraclass:
    """One model's single-rater coefficient with its interval and F test's p-value, and the k-rater one."""

    single: float
    interval: tuple[float, float]
    p: float
    average: float


@dataclass(frozen=True)
class MeanSquares:
    """The two-way ANOVA of a complete replies x raters matrix with one rating per cell."""

    n: int
    k: int
    between: float  # MSB, replies
    raters: float  # MSJ
    error: float  # MSE
    within: float  # MSW
    total_squares: float  # SS_total
    error_squares: float  # SS_error
    within_squares: float  # SS_raters + SS_error

    def resolved(self, one_way: bool) -> bool:
        """Whether the model's error term (MSW one-way, MSE two-way) stands above rounding: not when the raters
        agree (nearly) perfectly, where pingouin's values (and these) are rounding noise that differs with the
        order of the sums; there :func:`stats.agreement_coefficients.intraclass_correlation` asks pingouin."""
        squares = self.within_squares if one_way else self.error_squares
        return bool(squares > RESOLVED * self.total_squares)

    @classmethod
    def of(cls, matrix: np.ndarray) -> MeanSquares:
        n, k = matrix.shape
        mu = matrix.mean()
        ss_total = ((matrix - mu) ** 2).sum()
        ss_replies = ((matrix.mean(axis=1) - mu) ** 2 * k).sum()
        ss_raters = ((matrix.mean(axis=0) - mu) ** 2 * n).sum()
        ss_error = ss_total - (
            0.0 + ss_replies + ss_raters
        )  # pingouin: ss_tot - (ss_resid + sum(ss)), resid 0
        df_replies, df_raters = n - 1, k - 1
        df_error = df_replies * df_raters
        with np.errstate(all="ignore"):
            return cls(
                n=n,
                k=k,
                between=float(np.float64(ss_replies) / df_replies),
                raters=float(np.float64(ss_raters) / df_raters),
                error=float(np.float64(ss_error) / df_error),
                within=float(np.float64(ss_raters + ss_error) / (df_raters + df_error)),
                total_squares=float(ss_total),
                error_squares=float(ss_error),
                within_squares=float(ss_raters + ss_error),
            )


def one_way(squares: MeanSquares) -> Intraclass:
    """ICC(1,1) with its interval and p-value, and ICC(1,k)."""
    msb, msw, n, k = np.float64(squares.between), np.float64(squares.within), squares.n, squares.k
    with np.errstate(all="ignore"):
        icc = (msb - msw) / (msb + (k - 1) * msw)
        average = (msb - msw) / msb
        f1k = msb / msw
        df1, df1kd = n - 1, n * (k - 1)
        p = f.sf(f1k, df1, df1kd)
        f1l = f1k / f.ppf(1 - ALPHA / 2, df1, df1kd)
        f1u = f1k * f.ppf(1 - ALPHA / 2, df1kd, df1)
        low = (f1l - 1) / (f1l + (k - 1))
        high = (f1u - 1) / (f1u + (k - 1))
    return Intraclass(float(icc), _rounded(low, high), float(p), float(average))


def two_way_absolute(squares: MeanSquares) -> Intraclass:
    """ICC(A,1) with its interval and p-value, and ICC(A,k)."""
    msb, msj, mse = np.float64(squares.between), np.float64(squares.raters), np.float64(squares.error)
    n, k = squares.n, squares.k
    with np.errstate(all="ignore"):
        icc = (msb - mse) / (msb + (k - 1) * mse + k * (msj - mse) / n)
        average = (msb - mse) / (msb + (msj - mse) / n)
        f2k = msb / mse
        df1, df2kd = n - 1, (n - 1) * (k - 1)
        p = f.sf(f2k, df1, df2kd)
        fj = msj / mse
        vn = df2kd * (k * icc * fj + n * (1 + (k - 1) * icc) - k * icc) ** 2
        vd = df1 * k**2 * icc**2 * fj**2 + (n * (1 + (k - 1) * icc) - k * icc) ** 2
        v = vn / vd
        f2u = f.ppf(1 - ALPHA / 2, n - 1, v)
        f2l = f.ppf(1 - ALPHA / 2, v, n - 1)
        low = n * (msb - f2u * mse) / (f2u * (k * msj + (k * n - k - n) * mse) + n * msb)
        high = n * (f2l * msb - mse) / (k * msj + (k * n - k - n) * mse + n * f2l * msb)
    return Intraclass(float(icc), _rounded(low, high), float(p), float(average))


def _rounded(low: float, high: float) -> tuple[float, float]:
    """The interval as pingouin hands it out: an array of the two bounds, rounded."""
    rounded = np.round(np.array([low, high]), decimals=INTERVAL_DECIMALS)
    return float(rounded[0]), float(rounded[1])

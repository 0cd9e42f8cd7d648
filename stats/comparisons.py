"""Is metric A better than metric B? Two tests on correlations that share the human scores.

* Williams' test (Williams 1959, in the form of Steiger 1980, "Tests for comparing elements of a
  correlation matrix", Psychological Bulletin 87(2), eq. 7), as Graham and Baldwin (2014) brought it to
  the evaluation of MT metrics: the correlations r12 = corr(human, A) and r13 = corr(human, B) are
  dependent because they share the human scores, and how much depends on r23 = corr(A, B):

      t = (r12 - r13) sqrt( (n - 1)(1 + r23) / ( 2 (n - 1)/(n - 3) |R| + rbar^2 (1 - r23)^3 ) )

  with |R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23, rbar = (r12 + r13) / 2 and n - 3 degrees of
  freedom. The p-value here is two-sided (a difference in either direction); it equals R's
  ``psych::r.test(n, r12, r13, r23)``. Applied to Spearman's rho it is the usual approximation.
* The paired bootstrap of the difference (stats/bootstrap.py, :func:`paired_difference_p`), which
  makes no normality assumption.

Pure Python + numpy/scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats as scipy_stats

NOT_ENOUGH_ITEMS = "Williams' test needs more than 3 items"
UNDEFINED_CORRELATION = "a correlation is undefined"


@dataclass(frozen=True)
class WilliamsResult:
    t: float | None
    p_value: float | None
    note: str = ""


def williams_test(r12: float | None, r13: float | None, r23: float | None, n: int) -> WilliamsResult:
    """Two-sided Williams test of H0: corr(human, A) == corr(human, B), with r23 = corr(A, B)."""
    if n <= 3:
        return WilliamsResult(None, None, NOT_ENOUGH_ITEMS)
    if r12 is None or r13 is None or r23 is None or not all(math.isfinite(r) for r in (r12, r13, r23)):
        return WilliamsResult(None, None, UNDEFINED_CORRELATION)
    determinant = 1.0 - r12**2 - r13**2 - r23**2 + 2.0 * r12 * r13 * r23
    mean = (r12 + r13) / 2.0
    denominator = 2.0 * (n - 1) / (n - 3) * determinant + mean**2 * (1.0 - r23) ** 3
    if r12 == r13:
        return WilliamsResult(0.0, 1.0)
    if denominator <= 0.0:
        # Only when A and B are the same ranking (r23 = 1) or |R| is negative by rounding: the
        # difference of two identical correlations is no evidence of anything.
        return WilliamsResult(None, None, "the two metrics are perfectly correlated")
    t = (r12 - r13) * math.sqrt((n - 1) * (1.0 + r23) / denominator)
    p_value = float(2.0 * scipy_stats.t.sf(abs(t), n - 3))
    return WilliamsResult(t, min(1.0, p_value))

"""Two ways of feeding :func:`stats.meta.clusters.significance_clusters` that only the tests and the bench
use (the report runs its permutation tests up front, stats/report/meta.py): permutation tests run lazily as
the clustering asks for them, and mt-metrics-eval's matrix of p-values (its ``AssignRanks`` input)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.meta.clusters import SIGNIFICANCE, WMT_RULE, Rule, significance_clusters
from stats.meta.permutation import (
    DEFAULT_EARLY_STOP,
    PERM_BOTH,
    EarlyStop,
    Layout,
    PermutationResult,
    Scheme,
    Statistic,
)
from stats.meta.permutation.tester import Tester, check_inputs


def permutation_p_values(
    human: np.ndarray | Sequence[float],
    metrics: np.ndarray,
    layout: Layout,
    statistic: Statistic,
    *,
    scheme: Scheme = PERM_BOTH,
    permutations: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    early_stop: EarlyStop | None = DEFAULT_EARLY_STOP,
) -> Callable[[int, int], PermutationResult]:
    """A function (better, worse) -> that pair's test, run when first asked and remembered: what
    :func:`stats.meta.clusters.significance_clusters` needs, for the tests it asks for only."""
    cache: dict[tuple[int, int], PermutationResult] = {}
    x = np.asarray(human, dtype=np.float64)
    values = np.asarray(metrics, dtype=np.float64)
    check_inputs(x, values, layout, scheme, permutations)
    tester = Tester(x, values, layout, statistic, scheme)

    def test(better: int, worse: int) -> PermutationResult:
        if (better, worse) not in cache:
            cache[(better, worse)] = tester.run([(better, worse)], permutations, seed, early_stop)[0]
        return cache[(better, worse)]

    return test


def ranks_from_matrix(
    p_values: Sequence[Sequence[float]], alpha: float = SIGNIFICANCE, rule: Rule = WMT_RULE
) -> list[int]:
    """Ranks of metrics already sorted best first, from an upper-triangular matrix of one-sided p-values
    (``p_values[i][j]``, i < j: that metric i beats metric j), as mt-metrics-eval's ``AssignRanks`` takes it."""
    size = len(p_values)
    clusters = significance_clusters(
        [float(size - i) for i in range(size)], lambda i, j: float(p_values[i][j]), alpha=alpha, rule=rule
    )
    return [rank for rank in clusters.ranks if rank is not None]

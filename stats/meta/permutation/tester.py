"""The permutation tests of pairs of metric columns: the replies both metrics of a pair score make one plan,
prepared once and shared by every pair that scores the same replies."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.meta.groups import Groups
from stats.meta.permutation.accuracy_plans import PairsPlan, SystemPlan
from stats.meta.permutation.correlation_plan import CorrelationPlan
from stats.meta.permutation.counting import run_plan
from stats.meta.permutation.plan import Plan
from stats.meta.permutation.types import (
    DEFAULT_EARLY_STOP,
    PERM_BOTH,
    PERM_INPUTS,
    EarlyStop,
    Layout,
    PermutationResult,
    Scheme,
    Statistic,
)


def permutation_tests(
    human: np.ndarray | Sequence[float],
    metrics: np.ndarray,
    layout: Layout,
    statistic: Statistic,
    pairs: Sequence[tuple[int, int]],
    *,
    scheme: Scheme = PERM_BOTH,
    permutations: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    early_stop: EarlyStop | None = DEFAULT_EARLY_STOP,
) -> list[PermutationResult]:
    """The permutation test of every (first, second) pair of metric columns, in the order given."""
    x = np.asarray(human, dtype=np.float64)
    values = np.asarray(metrics, dtype=np.float64)
    check_inputs(x, values, layout, scheme, permutations)
    return Tester(x, values, layout, statistic, scheme).run(pairs, permutations, seed, early_stop)


class Tester:
    """The data of a study and the plans made for it (one per set of replies both metrics of a pair score),
    kept across calls: a chain of tests for significance clusters prepares each set of replies once."""

    def __init__(
        self, human: np.ndarray, values: np.ndarray, layout: Layout, statistic: Statistic, scheme: str
    ):
        self.human, self.values, self.layout, self.statistic, self.scheme = (
            human,
            values,
            layout,
            statistic,
            scheme,
        )
        self.plans: dict[bytes, Plan] = {}

    def run(
        self,
        pairs: Sequence[tuple[int, int]],
        permutations: int,
        seed: int,
        early_stop: EarlyStop | None,
    ) -> list[PermutationResult]:
        results: dict[tuple[int, int], PermutationResult] = {}
        batches: dict[bytes, list[tuple[int, int]]] = {}
        for first, second in pairs:
            present = (
                np.isfinite(self.human)
                & np.isfinite(self.values[:, first])
                & np.isfinite(self.values[:, second])
            )
            key = np.packbits(present).tobytes()
            if key not in self.plans:
                self.plans[key] = plan_for(
                    self.human, self.values, present, self.layout, self.statistic, self.scheme
                )
            batches.setdefault(key, []).append((first, second))
        for key, batch in batches.items():
            results.update(run_plan(self.plans[key], batch, permutations, seed, early_stop))
        return [results[(first, second)] for first, second in pairs]


def check_inputs(x: np.ndarray, values: np.ndarray, layout: Layout, scheme: str, permutations: int) -> None:
    if values.ndim != 2 or values.shape[0] != x.size or layout.n != x.size:
        raise ValueError(f"metrics must be (replies x metrics) for {x.size} replies and a layout of as many")
    if scheme not in (PERM_BOTH, PERM_INPUTS):
        raise ValueError(f"scheme must be {PERM_BOTH!r} or {PERM_INPUTS!r}, not {scheme!r}")
    if permutations < 1:
        raise ValueError("a permutation test needs at least one permutation")


def plan_for(
    human: np.ndarray,
    values: np.ndarray,
    present: np.ndarray,
    layout: Layout,
    statistic: Statistic,
    scheme: str,
) -> Plan:
    if statistic.name == "reply_accuracy":
        return PairsPlan(human, values, present, layout.contexts)
    if statistic.name == "system_accuracy":
        return SystemPlan(human, values, present, layout, scheme, statistic.tie_calibration)
    groups = {
        "none": Groups.single(layout.n),
        "context": layout.contexts,
        "system": layout.systems,
    }[statistic.grouping]
    return CorrelationPlan(human, values, present, groups, layout, scheme, statistic.name == "spearman")

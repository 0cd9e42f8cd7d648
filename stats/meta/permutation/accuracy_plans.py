"""The plans of pairwise accuracy: of system means (Kocmi et al., 2021), whose swapped sums by system are
linear in the mask, and acc_eq within contexts (Deutsch et al., 2023), whose pairs test swaps the outcome of
each pair of replies."""

from __future__ import annotations

import numpy as np

from stats.centred import scaled, standardised
from stats.meta.groups import Groups, within_group_pairs
from stats.meta.pairwise_accuracy import agreement, best_accuracies, calibrate_ties, snapped, spread
from stats.meta.permutation.masks import sum_matrix, swap_units
from stats.meta.permutation.plan import MetricSums, Plan
from stats.meta.permutation.types import Layout


class SystemPlan(Plan):
    """Pairwise accuracy of system means (swapped sums per system are linear in the mask)."""

    def __init__(
        self,
        human: np.ndarray,
        values: np.ndarray,
        present: np.ndarray,
        layout: Layout,
        scheme: str,
        calibrate: bool,
    ) -> None:
        self.values, self.present, self.calibrate = values, present, calibrate
        self.replies = np.flatnonzero(present)
        used, codes = np.unique(layout.systems.codes[self.replies], return_inverse=True)
        self.codes, self.systems = codes, used.size
        self.count = np.bincount(codes, minlength=used.size).astype(np.float64)
        human_means = np.bincount(codes, human[self.replies], used.size) / self.count
        self.first, self.second = np.triu_indices(used.size, k=1)
        self.human_diff = snapped(
            human_means[self.first] - human_means[self.second], spread(human[self.replies])
        )
        unit_codes, self.units = swap_units(layout, scheme)
        self.unit_of = unit_codes[self.replies]
        self.cache: dict[int, MetricSums] = {}
        if used.size < 2:
            self.observed_undefined = "not computable: fewer than 2 systems"

    def metric(self, column: int) -> MetricSums:
        if column not in self.cache:
            values = self.values[self.replies, column]
            z = standardised(values)
            # The system sums of the values above their smallest (as the rows sum them), and the same in units
            # of sd: a system mean minus another is then the rows' difference of means, times one factor in the
            # swapped statistics (systems with equal sums stay tied); z's offset would cancel in it.
            inside = scaled(values)
            raw = np.bincount(self.codes, values - inside.reference, self.systems)
            fixed = np.bincount(self.codes, inside.values, self.systems) / inside.spread
            matrix = sum_matrix(self.unit_of, self.codes, z, (self.units, self.systems))
            self.cache[column] = MetricSums(fixed, matrix, raw=raw, spread=spread(values))
        return self.cache[column]

    def statistic(
        self, first: MetricSums, second: MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Observed (``sums`` None): from the raw system sums, as the rows compute it (tie calibration
        compares differences of means as the doubles they are). Swapped: in units of each metric's sd."""
        if sums is None:
            assert first.raw is not None
            assert second.raw is not None
            return (
                self._accuracy(first.raw[None, :], first.spread),
                self._accuracy(second.raw[None, :], second.spread),
            )
        swapped = sums[1] - sums[0]
        return self._accuracy(first.fixed + swapped, 1.0), self._accuracy(second.fixed - swapped, 1.0)

    def _accuracy(self, system_sums: np.ndarray, scale: float) -> np.ndarray:
        means = system_sums / self.count
        # Means within 1e-12 sd of each other are tied, as in the rows (stats/meta/pairwise_accuracy.py).
        metric_diff = snapped(means[:, self.first] - means[:, self.second], scale)
        human_diff = np.broadcast_to(self.human_diff, metric_diff.shape)
        return best_accuracies(human_diff, metric_diff, self.calibrate)


class PairsPlan(Plan):
    """acc_eq within contexts; the pairs test swaps the outcome of each pair of replies."""

    def __init__(self, human: np.ndarray, values: np.ndarray, present: np.ndarray, contexts: Groups) -> None:
        self.values, self.present = values, present
        self.pairs = within_group_pairs(contexts, present)
        self.units = self.pairs.count
        self.human_diff = human[self.pairs.first] - human[self.pairs.second]
        _, dense = np.unique(self.pairs.group, return_inverse=True)
        per_group = np.bincount(dense).astype(np.float64)
        self.weight = 1.0 / (per_group[dense] * max(per_group.size, 1))
        self.cache: dict[int, MetricSums] = {}
        if self.units == 0:
            self.observed_undefined = "not computable: no context has two replies both metrics scored"

    def metric(self, column: int) -> MetricSums:
        if column not in self.cache:
            metric = self.values[:, column]
            metric_diff = metric[self.pairs.first] - metric[self.pairs.second]
            epsilon = calibrate_ties(self.human_diff, metric_diff, self.pairs.group).epsilon
            outcome = agreement(self.human_diff, metric_diff, epsilon) * self.weight
            self.cache[column] = MetricSums(np.array([outcome.sum()]), outcome[None, :])
        return self.cache[column]

    def statistic(
        self, first: MetricSums, second: MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        if sums is None:
            return first.fixed.copy(), second.fixed.copy()
        swapped = (sums[1] - sums[0])[:, 0]
        return first.fixed[0] + swapped, second.fixed[0] - swapped

"""What every plan of a permutation test shares (one set of replies, its masks and the sums already drawn),
and one block of permutations as a plan's tests see it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from stats.meta.permutation.masks import MaskBlocks, Masks

KEPT_SUM_COLUMNS = 64  # a metric's swapped sums per block are kept for later tests up to this many columns


class Plan:
    """Everything a test needs that depends only on the replies used, not on the pair of metrics; and what
    earlier tests on the same replies already drew: the masks (packed bits, by seed and block size) and the
    swapped sums of the metrics while they are small (those of a correlation within 2,000 contexts are not)."""

    units: int  # swap units of the study (replies, contexts, or pairs of replies)
    values: np.ndarray  # every metric column of the study
    present: np.ndarray  # the replies this plan uses
    observed_undefined: str = ""
    sums: dict[tuple[int, int, int, int], np.ndarray]
    cells: dict[tuple[int, int, int], np.ndarray]  # each block's swap patterns, where a plan has them
    blocks: dict[tuple[int, int], MaskBlocks]

    def mask_blocks(self, seed: int, rows: int) -> MaskBlocks:
        if not hasattr(self, "blocks"):
            self.blocks, self.sums, self.cells = {}, {}, {}
        if (seed, rows) not in self.blocks:
            self.blocks[(seed, rows)] = MaskBlocks(np.random.default_rng(seed), self.units)
        return self.blocks[(seed, rows)]

    def keeps_sums(self, sums: np.ndarray) -> bool:
        result: bool = sums.shape[1] <= KEPT_SUM_COLUMNS
        return result

    def columns(self) -> list[int]:
        """The metric columns with a value for every reply of this plan."""
        values, present = self.values, self.present
        return [c for c in range(values.shape[1]) if np.all(np.isfinite(values[present, c]))]

    def metric(self, column: int) -> MetricSums:  # pragma: no cover - interface
        raise NotImplementedError

    def pair(self, first: int, second: int) -> object:
        """What :meth:`deltas` needs of a pair of metrics, made once per test."""
        return (first, second)

    def deltas(self, pair: object, block: Block) -> np.ndarray:
        """The swapped differences first - second in every permutation of ``block``."""
        assert isinstance(pair, tuple)
        first, second = pair
        a, b = self.statistic(
            self.metric(first), self.metric(second), (block.metric_sums(first), block.metric_sums(second))
        )
        result: np.ndarray = a - b
        return result

    def statistic(
        self, first: MetricSums, second: MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        raise NotImplementedError


@dataclass
class MetricSums:
    """One metric on a plan: its fixed sums and the matrix that turns a swap mask into swapped sums."""

    fixed: np.ndarray
    matrix: np.ndarray | sparse.csr_matrix
    by_unit: np.ndarray | None = None  # sums x groups x units within a group, where swap patterns are used
    # A correlation's metric, per group: the exponent of its deviations and the z-score of the group's mean
    # (stats/meta/swapped_correlation.py).
    exponent: np.ndarray | None = None
    offset: np.ndarray | None = None
    raw: np.ndarray | None = None  # system accuracy: the raw sums by system, and the values' sd
    spread: float = 0.0


class Block:
    """One block of permutations as a plan's tests see it: its masks, unpacked when first needed, and the
    metrics' swapped sums on it (kept on the plan while narrow, see :data:`KEPT_SUM_COLUMNS`)."""

    def __init__(self, plan: Plan, blocks: MaskBlocks, key: tuple[int, int, int], size: int) -> None:
        self.plan, self.blocks, self.key, self.size = plan, blocks, key, size
        self.masks: Masks | None = None
        self.sums: dict[int, np.ndarray] = {}

    def metric_sums(self, column: int) -> np.ndarray:
        """permutations x sums: the metric's sums over the swapped units of every permutation."""
        plan = self.plan
        if column not in self.sums:
            cached = plan.sums.get((*self.key, column))
            if cached is None:
                if self.masks is None:
                    self.masks = Masks(self.blocks.block(self.key[2], self.size))
                cached = self.masks.times(plan.metric(column).matrix)
                if plan.keeps_sums(cached):
                    plan.sums[(*self.key, column)] = cached
                    # Narrow sums are cheap: every other metric's of this block too, while the masks are
                    # at hand (a chain of tests then draws each block's masks once).
                    for other in plan.columns():
                        if (*self.key, other) not in plan.sums:
                            plan.sums[(*self.key, other)] = self.masks.times(plan.metric(other).matrix)
            self.sums[column] = cached
        return self.sums[column]

    def pattern_cells(self) -> np.ndarray:
        """permutations x groups: each group's swap pattern (as a table cell), kept on the plan by block."""
        plan = self.plan
        patterns = getattr(plan, "patterns", None)
        assert patterns is not None
        if self.key not in plan.cells:
            plan.cells[self.key] = patterns.cells(self.blocks.bits(self.key[2], self.size))
        return plan.cells[self.key]

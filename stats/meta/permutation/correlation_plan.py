"""The plan of a correlation (Pearson, or Pearson of ranks for Spearman) averaged over the groups of a
grouping: each group's r under a swap (stats/meta/swapped_correlation.py), from swapped sums or, where groups
have few swap units, from tables by swap pattern (stats/meta/swap_patterns.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stats.centred import centred_within_groups
from stats.meta.grouped import group_ranks
from stats.meta.groups import Groups
from stats.meta.permutation.masks import sum_matrix, swap_units
from stats.meta.permutation.plan import Block, MetricSums, Plan
from stats.meta.permutation.types import Layout
from stats.meta.swap_patterns import SwapPatterns
from stats.meta.swapped_correlation import deviations, mixed_r

PATTERN_SLICE_CELLS = 65_536  # groups x patterns of a pattern table computed at once (in the CPU cache)
BASE = -1  # a correlation plan's "metric" of the replies' counts and centred human scores by group


class CorrelationPlan(Plan):
    """Pearson (or Pearson of ranks) within the groups of a grouping, averaged over groups; each group's r
    under a swap from the decomposition of stats/meta/swapped_correlation.py, exact at every scale."""

    def __init__(
        self,
        human: np.ndarray,
        values: np.ndarray,
        present: np.ndarray,
        groups: Groups,
        layout: Layout,
        scheme: str,
        ranks: bool,
    ) -> None:
        self.values, self.present, self.ranks, self.group_of = values, present, ranks, groups
        self.replies = np.flatnonzero(present)
        used_groups, codes = np.unique(groups.codes[self.replies], return_inverse=True)
        self.codes = codes
        count = used_groups.size
        self.count = np.bincount(codes, minlength=count).astype(np.float64)
        h = group_ranks(human, present, groups)[self.replies] if ranks else human[self.replies]
        centred = centred_within_groups(h, codes, count)
        self.centred = centred.scaled  # the human score centred within its group, scaled (exactly)
        self.human_sq = np.bincount(codes, centred.squares, count)  # 0 where the human scores are constant
        unit_codes, self.units = swap_units(layout, scheme)
        self.unit_of = unit_codes[self.replies]
        self.groups_count = count
        self.cache: dict[int, MetricSums] = {}
        self.patterns = SwapPatterns.of(codes, self.unit_of, count, self.units)

    def metric(self, column: int) -> MetricSums:
        """A metric's sums by group (its scaled deviations d, h * d and d * d: the fixed sums over every reply,
        and by swap unit), with its exponents and offsets; column :data:`BASE`: the replies (count) and their
        centred human scores, whatever the metric."""
        if column not in self.cache:
            count, codes = self.groups_count, self.codes
            if column == BASE:
                parts, quantities = 2, np.concatenate([np.ones(codes.size), self.centred])
                split = None
            else:
                raw = self.values[:, column]
                if self.ranks:
                    raw = group_ranks(raw, self.present, self.group_of)
                split = deviations(raw[self.replies], codes, count)
                d = split.scaled
                parts, quantities = 3, np.concatenate([d, self.centred * d, d * d])
            columns = np.concatenate([codes + part * count for part in range(parts)])
            fixed = np.bincount(columns, quantities, parts * count)
            if self.patterns is not None:  # no product with masks: sums by group and unit (see pair)
                width = self.patterns.width
                cells = np.concatenate([codes * width + self.patterns.local] * parts)
                cells += np.repeat(np.arange(parts) * count * width, codes.size)
                by_unit = np.bincount(cells, quantities, parts * count * width).reshape(parts, count, width)
                sums = MetricSums(fixed, np.zeros((0, 0)), by_unit)
            else:
                units = np.tile(self.unit_of, parts)
                sums = MetricSums(fixed, sum_matrix(units, columns, quantities, (self.units, parts * count)))
            if split is not None:
                sums.exponent, sums.offset = split.exponent, split.offset
            self.cache[column] = sums
        return self.cache[column]

    def pair(self, first: int, second: int) -> object:
        """With swap patterns (:mod:`stats.meta.swap_patterns`): each group's r of the first metric under each
        of its patterns (the units of the pattern hold the second metric's scores), the table every
        permutation's statistic is gathered from; the second metric's is the same table read backwards."""
        if self.patterns is None:
            return (first, second)
        a, b, base = self.metric(first), self.metric(second), self.metric(BASE)
        assert a.by_unit is not None
        assert b.by_unit is not None
        assert base.by_unit is not None
        assert a.exponent is not None
        assert b.exponent is not None
        assert a.offset is not None
        assert b.offset is not None
        g, width, patterns = self.groups_count, self.patterns.width, self.patterns.patterns
        swapped = self.patterns.bits().T  # width x patterns: the units each pattern swaps
        kept = 1.0 - swapped
        r_a = np.empty((g, patterns))
        valid_a = np.empty((g, patterns), dtype=bool)
        step = max(1, PATTERN_SLICE_CELLS // patterns)
        for start in range(0, g, step):
            rows = slice(start, min(g, start + step))
            size = rows.stop - rows.start

            def summed(
                by_unit: np.ndarray, bits: np.ndarray, rows: slice = rows, size: int = size
            ) -> np.ndarray:
                # One 2-D product (a stacked matmul with an inner size of a few units takes numpy's slow loop).
                parts = by_unit.shape[0]
                result: np.ndarray = (by_unit[:, rows].reshape(-1, width) @ bits).reshape(
                    parts, size, patterns
                )
                return result

            on_a, on_b = summed(a.by_unit, kept), summed(b.by_unit, swapped)
            base_a, base_b = summed(base.by_unit, kept), summed(base.by_unit, swapped)
            r_a[rows], valid_a[rows] = mixed_r(
                self.count[rows, None],
                (base_a[0], on_a[0], on_a[2], on_a[1]),
                (base_b[0], on_b[0], on_b[2], on_b[1]),
                base_b[1],
                (a.exponent[rows, None], b.exponent[rows, None]),
                (a.offset[rows, None], b.offset[rows, None]),
                self.human_sq[rows, None],
            )
        # Under pattern p the second metric holds what the first holds under the complement of p (every unit
        # swapped the other way), so its table is the first's read backwards: r_b(p) = r_a(~p), the
        # complement of p being patterns - 1 - p.
        r_b, valid_b = r_a[:, ::-1], valid_a[:, ::-1]
        if valid_a.all() and valid_b.all():
            return PatternTable((r_a - r_b).reshape(-1), None)
        tables = np.stack([r_a, r_b], axis=-1).reshape(-1, 2)
        defined = np.stack([valid_a, valid_b], axis=-1).reshape(-1, 2).view(np.int8)
        return PatternTable(None, tables, defined)

    def deltas(self, pair: object, block: Block) -> np.ndarray:
        if not isinstance(pair, PatternTable):
            assert isinstance(pair, tuple)
            first, second = pair
            sums = (block.metric_sums(first), block.metric_sums(second), block.metric_sums(BASE))
            r_first, r_second = self._swapped(self.metric(first), self.metric(second), sums)
            result: np.ndarray = r_first - r_second
            return result
        cells = block.pattern_cells()
        if pair.difference is not None:  # every group counts in every permutation
            result = np.take(pair.difference, cells).sum(axis=0) / self.groups_count
            return result
        assert pair.tables is not None
        assert pair.defined is not None
        r_a, r_b = np.take(pair.tables, cells, axis=0).sum(axis=0).T
        # Counts of defined groups, exact in integers as in floats: the same as summing 1.0s, in a quarter of
        # the memory the gather moves.
        used_a, used_b = np.take(pair.defined, cells, axis=0).sum(axis=0, dtype=np.int64).T.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(used_a > 0, r_a / used_a, np.nan) - np.where(used_b > 0, r_b / used_b, np.nan)

    def statistic(
        self, first: MetricSums, second: MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The observed statistics (one row): nothing swapped, so each metric's r is its rows' r."""
        return self._swapped(first, second, None)

    def _swapped(
        self,
        first: MetricSums,
        second: MetricSums,
        sums: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows: permutations (one row, nothing swapped, when ``sums`` is None); (first's, second's) mean r.
        ``sums``: the swapped units' sums of the first metric, the second and :data:`BASE`."""
        g = self.groups_count
        if sums is None:
            sums = (np.zeros((1, 3 * g)), np.zeros((1, 3 * g)), np.zeros((1, 2 * g)))
        on_first, on_second, base = sums
        swapped_count, human_swapped = base[:, :g], base[:, g:]
        kept_count = self.count - swapped_count

        def parts(
            metric: MetricSums, on: np.ndarray, kept: bool
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
            if not kept:  # (count, sum d, sum d^2, sum h d) over the swapped units
                return swapped_count, on[:, :g], on[:, 2 * g :], on[:, g : 2 * g]
            fixed = metric.fixed
            return (
                kept_count,
                fixed[:g] - on[:, :g],
                fixed[2 * g :] - on[:, 2 * g :],
                fixed[g : 2 * g] - on[:, g : 2 * g],
            )

        assert first.exponent is not None
        assert second.exponent is not None
        assert first.offset is not None
        assert second.offset is not None
        r_first, valid_first = mixed_r(
            self.count,
            parts(first, on_first, True),
            parts(second, on_second, False),
            human_swapped,
            (first.exponent, second.exponent),
            (first.offset, second.offset),
            self.human_sq,
        )
        # The second metric's configuration: its scores where nothing is swapped, the first's elsewhere.
        r_second, valid_second = mixed_r(
            self.count,
            parts(second, on_second, True),
            parts(first, on_first, False),
            human_swapped,
            (second.exponent, first.exponent),
            (second.offset, first.offset),
            self.human_sq,
        )
        return mean_over_groups(r_first, valid_first), mean_over_groups(r_second, valid_second)


def mean_over_groups(r: np.ndarray, valid: np.ndarray) -> np.ndarray:
    used = valid.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(used > 0, r.sum(axis=1) / used, np.nan)


@dataclass(frozen=True)
class PatternTable:
    """A pair's table by group and swap pattern (cells as :meth:`SwapPatterns.cells` numbers them): the
    difference of the two metrics' r where every group's r is always defined, else both r (columns r_first,
    r_second; 0 where undefined) and whether each is defined (``defined``, 0/1 as int8)."""

    difference: np.ndarray | None
    tables: np.ndarray | None
    defined: np.ndarray | None = None

"""Swap patterns of small groups: a group's statistic under every way its swap units can be swapped.

When each swap unit lies in one group and every group has few units (a correlation within contexts of a few
replies under PERM-BOTH, where the units are the replies; or within contexts under PERM-INPUTS, where the unit
is the context itself), a group has only 2^k swap patterns of its k units. A group's statistic under each
pattern is computed once per pair of metrics (a table groups x patterns), and a permutation's statistic is
then a sum of one table entry per group, picked by the group's pattern in that permutation: a gather instead
of the arithmetic of every group in every permutation (``CorrelationPlan``,
stats/meta/permutation/correlation_plan.py).

A group's k units are numbered 0..k-1 in the order of their first reply; bit j of a pattern says whether unit
j is swapped.

Pure numpy: no Django here (import-linter contract).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_UNITS = 8  # units per group: 2^8 = 256 patterns at most
MAX_CELLS = 4_000_000  # groups x patterns of one table


@dataclass(frozen=True)
class SwapPatterns:
    """The units of each group: ``members`` groups x k unit numbers (``units``, a unit that never swaps,
    where a group has fewer than k)."""

    members: np.ndarray
    local: np.ndarray  # each reply's unit number within its group
    units: int

    @classmethod
    def of(cls, group_of: np.ndarray, unit_of: np.ndarray, groups: int, units: int) -> SwapPatterns | None:
        """From each reply's group and unit; None when a unit spans groups or a group has too many units."""
        if group_of.size == 0:
            return None
        cells, first, inverse = np.unique(
            group_of.astype(np.int64) * units + unit_of, return_index=True, return_inverse=True
        )
        cell_group, cell_unit = cells // units, cells % units
        if np.unique(cell_unit).size != cell_unit.size:
            return None  # a unit with replies in two groups: its swap changes both
        per_group = np.bincount(cell_group, minlength=groups)
        width = int(per_group.max())
        if width > MAX_UNITS or groups * (1 << width) > MAX_CELLS:
            return None
        # Number each group's units in the order of their first reply.
        order = np.lexsort((first, cell_group))
        starts = np.concatenate([[0], np.cumsum(per_group)[:-1]])
        number = np.empty(cells.size, dtype=np.int64)
        number[order] = np.arange(cells.size) - starts[cell_group[order]]
        members = np.full((groups, width), units, dtype=np.int64)
        members[cell_group, number] = cell_unit
        return cls(members, number[inverse.reshape(-1)], units)

    @property
    def width(self) -> int:
        return int(self.members.shape[1])

    @property
    def patterns(self) -> int:
        return 1 << self.width

    def bits(self) -> np.ndarray:
        """patterns x k of 0.0/1.0: bit j of pattern p."""
        return ((np.arange(self.patterns)[:, None] >> np.arange(self.width)) & 1).astype(np.float64)

    def cells(self, bits: np.ndarray) -> np.ndarray:
        """groups x permutations: the table entry (group * patterns + pattern) of every group in every
        permutation, from ``bits`` (units x permutations of 0/1, as drawn). Group by group, so that a gather
        from a table reads each group's entries while they are in the cache."""
        padded = np.concatenate([bits, np.zeros((1, bits.shape[1]), dtype=bits.dtype)])
        codes = np.zeros((self.members.shape[0], bits.shape[1]), dtype=np.int64)
        for j in range(self.width):
            codes |= padded[self.members[:, j]].astype(np.int64) << j
        codes += (np.arange(self.members.shape[0]) * self.patterns)[:, None]
        return codes

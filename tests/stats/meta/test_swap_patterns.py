"""Swap patterns: which groups get tables, and that a group's pattern in a permutation is the bits of its units."""

from __future__ import annotations

import numpy as np

from stats.meta.swap_patterns import MAX_UNITS, SwapPatterns


def test_units_within_small_groups_have_patterns_and_their_cells_are_the_units_bits() -> None:
    rng = np.random.default_rng(5)
    group_of = np.array([0, 0, 1, 1, 1, 2, 0])  # group 0 has three units, in the order of their first reply
    unit_of = np.array([4, 2, 0, 1, 3, 5, 6])
    patterns = SwapPatterns.of(group_of, unit_of, groups=3, units=7)
    assert patterns is not None
    assert patterns.width == 3
    assert patterns.local.tolist() == [0, 1, 0, 1, 2, 0, 2]
    bits = rng.integers(0, 2, size=(7, 40)).astype(np.uint8)
    cells = patterns.cells(bits)
    assert cells.shape == (3, 40)
    assert (cells[2] % patterns.patterns).max() == 1  # group 2's one unit: the other bits never set
    table = patterns.bits()
    for permutation in range(40):
        for group in range(3):
            cell = cells[group, permutation]
            assert cell // patterns.patterns == group
            pattern = table[cell % patterns.patterns]
            replies = np.flatnonzero(group_of == group)
            for reply in replies:
                assert pattern[patterns.local[reply]] == bits[unit_of[reply], permutation]


def test_a_unit_in_two_groups_or_too_many_units_in_a_group_have_none() -> None:
    # PERM-INPUTS within systems: a context (the unit) has replies of every system (the groups).
    assert SwapPatterns.of(np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1]), groups=2, units=2) is None
    wide = MAX_UNITS + 1
    assert SwapPatterns.of(np.zeros(wide, dtype=int), np.arange(wide), groups=1, units=wide) is None
    assert SwapPatterns.of(np.zeros(0, dtype=int), np.zeros(0, dtype=int), groups=0, units=0) is None
    one_unit = SwapPatterns.of(np.array([0, 0, 1, 1]), np.array([0, 0, 1, 1]), groups=2, units=2)
    assert one_unit is not None
    assert one_unit.patterns == 2

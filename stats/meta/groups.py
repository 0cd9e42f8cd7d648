"""Replies partitioned into groups (their contexts, or their systems), and the pairs of replies within a group.

The study is a matrix contexts x systems with possibly missing cells, but every statistic here reads it in
the long form the report already has: one entry per reply (its human score, its metric values, its context
and its system). A :class:`Groups` gives each reply the dense index of its group; grouped statistics
("item-grouped" in the metrics field: Deutsch, Dror and Roth 2021, section 3, "summary-level"; the
``average_by='item'`` of mt-metrics-eval) compute one value per group and average them.

:func:`within_group_pairs` enumerates every unordered pair of replies that share a group (the pairs of
pairwise accuracy within contexts, Deutsch, Foster and Freitag 2023, section 3). The enumeration is
vectorised by group size: groups of one size form a matrix, and one ``triu_indices`` gives all their pairs.

Pure numpy: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from stats.ratings_by_item import factorized


@dataclass(frozen=True)
class Groups:
    """Every reply's group as a dense index ``0..count-1``; ``names`` in order of first appearance."""

    codes: np.ndarray  # int64, one per reply
    names: tuple[Hashable, ...]

    @classmethod
    def of(cls, labels: Sequence[Hashable] | np.ndarray) -> Groups:
        """Groups from one label per reply (a context id, a system name; or an integer array of them)."""
        codes, names = factorized(labels)
        return cls(codes=codes, names=tuple(names))

    @classmethod
    def single(cls, n: int) -> Groups:
        """All replies in one group: the flat statistic ("none" grouping)."""
        return cls(codes=np.zeros(n, dtype=np.int64), names=("all",))

    @property
    def count(self) -> int:
        return len(self.names)

    @property
    def n(self) -> int:
        return int(self.codes.size)

    def sizes(self, present: np.ndarray | None = None) -> np.ndarray:
        """Replies per group (only those where ``present`` is true, when given)."""
        weights = None if present is None else present.astype(np.float64)
        return np.bincount(self.codes, weights=weights, minlength=self.count).astype(np.int64)


@dataclass(frozen=True)
class Pairs:
    """Unordered pairs of replies (``first`` < ``second`` in reply order) that share a group."""

    first: np.ndarray
    second: np.ndarray
    group: np.ndarray  # the group of each pair (a code of the Groups they came from)

    @property
    def count(self) -> int:
        return int(self.first.size)


def within_group_pairs(groups: Groups, present: np.ndarray | None = None) -> Pairs:
    """Every pair of replies of one group, among the replies where ``present`` is true.

    Pairs come grouped by group size, then by group, then in ``triu_indices`` order; statistics over them
    do not depend on the order.
    """
    keep = np.ones(groups.n, dtype=bool) if present is None else np.asarray(present, dtype=bool)
    replies = np.flatnonzero(keep)
    codes = groups.codes[replies]
    order = np.argsort(codes, kind="stable")
    replies, codes = replies[order], codes[order]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if codes.size else np.array([], int)
    sizes = np.diff(np.r_[starts, codes.size])
    firsts, seconds, pair_groups = [], [], []
    for size in np.unique(sizes):
        if size < 2:
            continue
        begin = starts[sizes == size]
        members = replies[begin[:, None] + np.arange(size)[None, :]]  # (groups of this size) x size
        i, j = np.triu_indices(int(size), k=1)
        firsts.append(members[:, i].ravel())
        seconds.append(members[:, j].ravel())
        pair_groups.append(np.repeat(codes[begin], i.size))
    if not firsts:
        empty = np.array([], dtype=np.int64)
        return Pairs(empty, empty.copy(), empty.copy())
    return Pairs(np.concatenate(firsts), np.concatenate(seconds), np.concatenate(pair_groups))


def pair_count(groups: Groups, present: np.ndarray | None = None) -> int:
    """How many pairs :func:`within_group_pairs` would enumerate (without enumerating them)."""
    sizes = groups.sizes(present)
    return int((sizes * (sizes - 1) // 2).sum())

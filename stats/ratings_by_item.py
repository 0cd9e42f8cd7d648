"""Ratings grouped by the reply they rate, with numpy: for the rater side's sums, means and value counts.

A report reads a study's ratings per reply several times: the mean of each reply's ratings (the human score,
the halves of Tao et al. (2018)'s Figure 4), the sum and count per reply (each rater against the rest), how many
ratings of each scale point a reply got (Krippendorff's alpha, Fleiss' kappa, alpha without one rater).
:func:`group_by_key` numbers the replies in order of first appearance with one hash pass (pandas'
``factorize``) and the results come from ``bincount``: the same keys in the same order, and the same floats,
as the loops they replaced (tests/stats/test_ratings_by_item.py keeps the loops as the reference):

* a mean is ``math.fsum(group) / len(group)``; for whole numbers (ratings on a scale) a float64 sum is
  exact in any order, so numpy sums them; other values (z-scores) still go through ``math.fsum``;
* a sum added one value at a time in a given order is what ``bincount`` with weights computes (it adds in
  the order of its input).

Where the result has to be a dict of Python lists (``values_by_item``), the plain loop stays: measured, it is
faster than any group-by that must build those lists again.

Keys are Python ints in the report (reply and rater ids); any other key type takes a dict path.

Pure Python + numpy (+ pandas' factorize): no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

EXACT_SUM_LIMIT = 2.0**52  # whole numbers up to this add exactly in float64, in any order
FEW_GROUPS = 32


@dataclass(frozen=True)
class Grouped:
    """Entries grouped by key: ``keys`` (first-appearance order), each entry's group (``codes``), and
    ``order``/``starts``: the entries sorted stably by group, and where each group begins in that order."""

    keys: list[Any]
    codes: np.ndarray
    order: np.ndarray
    starts: np.ndarray

    @property
    def ends(self) -> np.ndarray:
        if not self.keys:
            return np.array([], dtype=np.int64)
        result: np.ndarray = np.r_[self.starts[1:], self.order.size].astype(np.int64)
        return result

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=len(self.keys))

    def lists(self, values: Sequence[Any]) -> list[list[Any]]:
        """Each group's values (the same values, of the same types), in their original order."""
        kinds = set(map(type, values))
        ordered: list[Any] | None = None
        if kinds in ({int}, {float}):
            # Python ints (that fit in int64) and floats survive a round trip through numpy exactly.
            try:
                array = np.asarray(values, dtype=np.int64 if kinds == {int} else np.float64)
                ordered = array[self.order].tolist()
            except OverflowError:
                ordered = None
        if ordered is None:
            ordered = [values[i] for i in self.order.tolist()]
        return self._split(ordered)

    def _split(self, ordered: list[Any]) -> list[list[Any]]:
        bounds = zip(self.starts.tolist(), self.ends.tolist(), strict=True)
        return [ordered[start:end] for start, end in bounds]

    def means(self, values: Sequence[float]) -> list[float]:
        """``math.fsum(group) / len(group)`` for every group."""
        array = np.asarray(values, dtype=np.float64)
        whole = bool(np.all(np.isfinite(array))) and bool(np.all(array == np.round(array)))
        if whole and float(np.abs(array).sum()) < EXACT_SUM_LIMIT:
            totals = np.bincount(self.codes, weights=array, minlength=len(self.keys))
            result: list[float] = (totals / self.sizes).tolist()
            return result
        return [math.fsum(group) / len(group) for group in self.lists(values)]


def flattened(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]],
    anonymous_by_item: Mapping[Any, Sequence[float]] | None = None,
) -> tuple[list[Any], list[Any]]:
    """Every rating as (item, value): each named rater's in turn (in their order), then the anonymous ones
    item by item."""
    keys: list[Any] = []
    values: list[Any] = []
    for rated in ratings_by_rater.values():
        keys.extend(rated.keys())
        values.extend(rated.values())
    for item, extra in (anonymous_by_item or {}).items():
        keys.extend([item] * len(extra))
        values.extend(extra)
    return keys, values


def group_by_key(keys: Sequence[Hashable]) -> Grouped:
    """Group entries by their key, keys in order of first appearance."""
    codes, distinct = factorized(keys)
    return _grouped(distinct, codes)


def factorized(keys: Sequence[Hashable] | np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """(each key's dense code as int64, the distinct keys in order of first appearance). Integer keys (Python
    ints, or an integer array) are numbered by pandas' hash-based factorize in one pass; other keys by a dict."""
    if isinstance(keys, np.ndarray) and keys.dtype.kind in "iu":
        return _factorized_ints(keys.astype(np.int64, copy=False))
    n = len(keys)
    if n and set(map(type, keys)) == {int}:
        try:
            array = np.fromiter(keys, dtype=np.int64, count=n)
        except OverflowError:
            array = None
        if array is not None:
            return _factorized_ints(array)
    index: dict[Hashable, int] = {}
    codes = np.fromiter((index.setdefault(key, len(index)) for key in keys), dtype=np.int64, count=n)
    return codes, list(index)


def _factorized_ints(array: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    import pandas as pd  # its hash-based factorize numbers keys in order of first appearance, in one pass

    codes, uniques = pd.factorize(array)
    # Python ints equal to the keys (and of their type: only int keys come here).
    return codes.astype(np.int64), np.asarray(uniques).tolist()


def _grouped(keys: list[Any], codes: np.ndarray) -> Grouped:
    if 0 < len(keys) <= FEW_GROUPS:
        # A few groups (raters): one pass per group beats a stable sort of interleaved codes.
        order = np.concatenate([np.flatnonzero(codes == code) for code in range(len(keys))])
    else:
        order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=len(keys))
    starts = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64) if len(keys) else np.array([], dtype=np.int64)
    return Grouped(keys, codes, order, starts)

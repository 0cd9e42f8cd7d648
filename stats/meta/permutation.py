"""Is metric A's statistic really higher than metric B's? The permutation tests of Deutsch, Dror and Roth (2021).

Deutsch et al. (2021), section 5, test H0: r(A, people) <= r(B, people) by swapping the two metrics' scores
at random and recomputing both statistics: under H0 the two metrics are exchangeable, so the observed
difference should look like the swapped ones. The study is a matrix systems x inputs (here contexts):

* PERM-BOTH (their recommendation: section 6, it keeps its size and has the most power in their
  simulations): every cell (one system's reply to one context) is swapped independently with probability
  1/2. With several systems per context this permutes systems and contexts jointly; with one reply per
  context it swaps replies.
* PERM-INPUTS (the input-only variant): all replies of one context are swapped together.

The metrics' scores are standardised first (z-scores over the replies both metrics scored), as
mt-metrics-eval's ``PermutationSigDiff`` does, since swapping only makes sense on one scale. Missing cells
(a reply one of the two metrics did not score, or without a human score) are left out of that pair's test.
A z-score is kept as its group's offset and its deviation within the group, never formed as one double
(stats/meta/swapped_correlation.py): the statistics a test compares are the rows' (stats/meta/grouped.py)
for values of any scale, also for a metric whose spread inside a group is tiny beside its level.

Statistics (:class:`Statistic`):

* ``pearson``, ``spearman`` with grouping none, context or system (stats/meta/grouped.py): the statistic of
  a swapped matrix is a function of per-group sums that are linear in the swap mask (of each metric's
  scaled deviations d, h*d and d^2 over the swapped units, and of the swapped replies and their h), so a block
  of permutations costs one matrix product per metric, shared by every pair. Where each
  swap unit lies in one group and groups have few units (within contexts: PERM-BOTH swaps a context's few
  replies, PERM-INPUTS the context whole), each group's r under each of its 2^k swap patterns is tabled once
  per pair and a permutation's statistic is gathered from the tables (stats/meta/swap_patterns.py). For
  Spearman the scores are first replaced by their (within-group) average ranks, and the swapped statistic
  is Pearson's r of the swapped ranks: at the identity it is Spearman's rho exactly, and no permutation
  re-ranks (re-ranking 1,000 permutations of 10,000 replies per pair costs seconds). This is a deviation from
  re-ranking after every swap, which mt-metrics-eval does; the test stays a permutation test of the
  exchangeability of the two metrics' ranks.
* ``system_accuracy``: Kocmi et al. (2021) pairwise accuracy of system means (acc_eq with tie calibration,
  recalibrated in every permutation, when asked), under PERM-BOTH or PERM-INPUTS: system means are linear in
  the swap mask too.
* ``reply_accuracy``: acc_eq within contexts with tie calibration (stats/meta/pairwise_accuracy.py). Deutsch,
  Foster and Freitag (2023) compare such accuracies with the *pairs* permutation test of mt-metrics-eval
  (``PairwisePermutationSigDiff``): each metric keeps its own calibrated epsilon, and what is swapped is the
  outcome of a pair of replies (agreement or not) between the two metrics, each pair independently. The
  statistic is then linear in the swaps: every pair of metrics costs one matrix product per block.

The p-value (one-sided, that the first metric's statistic is the higher) is (1 + #{swapped differences >=
the observed one}) / (1 + permutations): the +1 keeps a Monte Carlo p-value valid and never 0 (Phipson and
Smyth 2010; mt-metrics-eval reports the plain share). ``p_two_sided`` counts |swapped| >= |observed|.
Differences equal up to 1e-12 count as equal, so that rounding never decides.

Early stopping as the WMT metrics task runs mt-metrics-eval (its ``Task`` defaults: blocks of 100
permutations, stop when the running share is under 0.02 or over 0.5); ``EarlyStop(block=permutations)``
turns it off. Permutation masks come from one seeded generator in a fixed order, the same for every pair of
metrics (common random numbers), so a pair's p-value does not depend on which other pairs were tested. A pair
asked in both directions is run once: the reverse's swapped differences are the negated ones on the same
masks, counted with its own early stop, so both results are those of separate runs (the report's clusters
take their one-sided tests from its comparisons' run this way).

Pure numpy/scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import sparse

from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, row_product
from stats.centred import centred_within_groups, scaled, standardised
from stats.meta.grouped import group_ranks
from stats.meta.groups import Groups, within_group_pairs
from stats.meta.pairwise_accuracy import agreement, best_accuracies, calibrate_ties, snapped, spread
from stats.meta.swap_patterns import SwapPatterns
from stats.meta.swapped_correlation import deviations, mixed_r

StatisticName = Literal["pearson", "spearman", "system_accuracy", "reply_accuracy"]
Grouping = Literal["none", "context", "system"]
Scheme = Literal["both", "inputs"]
PERM_BOTH: Scheme = "both"
PERM_INPUTS: Scheme = "inputs"
EQUAL = 1e-12  # swapped and observed differences this close count as equal
# A metric's sum matrix (units x group sums) is dense up to this many columns and cells, else sparse: a product
# with a dense matrix costs units x columns per permutation, with the sparse one (one entry per reply) replies.
DENSE_COLUMNS = 48
DENSE_CELLS = 4_000_000
BLOCK_CELLS = 2_000_000  # permutations x units of one mask block
KEPT_SUM_COLUMNS = 64  # a metric's swapped sums per block are kept for later tests up to this many columns
PATTERN_SLICE_CELLS = 65_536  # groups x patterns of a pattern table computed at once (in the CPU cache)
BASE = -1  # a correlation plan's "metric" of the replies' counts and centred human scores by group


@dataclass(frozen=True)
class Statistic:
    """What is compared: a correlation (``pearson``, ``spearman``) at a ``grouping``, or a pairwise accuracy
    (``system_accuracy``; ``reply_accuracy`` within contexts) with or without ``tie_calibration``."""

    name: StatisticName = "pearson"
    grouping: Grouping = "none"
    tie_calibration: bool = True

    def __post_init__(self) -> None:
        if self.name not in ("pearson", "spearman", "system_accuracy", "reply_accuracy"):
            raise ValueError(f"no permutation test for the statistic {self.name!r}")
        if self.grouping not in ("none", "context", "system"):
            raise ValueError(f"grouping must be none, context or system, not {self.grouping!r}")


@dataclass(frozen=True)
class Layout:
    """Each reply's context and system (the cells of the contexts x systems matrix)."""

    contexts: Groups
    systems: Groups

    @classmethod
    def of(cls, contexts: Sequence[Hashable], systems: Sequence[Hashable]) -> Layout:
        if len(contexts) != len(systems):
            raise ValueError(f"{len(contexts)} contexts for {len(systems)} systems: one of each per reply")
        return cls(Groups.of(contexts), Groups.of(systems))

    @property
    def n(self) -> int:
        return self.contexts.n


@dataclass(frozen=True)
class EarlyStop:
    """mt-metrics-eval's ``PermutationSigDiffParams`` as the WMT tasks set them."""

    block: int = 100
    below: float = 0.02
    above: float = 0.5


@dataclass(frozen=True)
class PermutationResult:
    """One pair of metrics (column indices): ``delta`` = statistic(first) - statistic(second)."""

    first: int
    second: int
    delta: float | None
    p_value: float | None  # one-sided: that first's statistic is the higher
    p_two_sided: float | None
    permutations: int
    statistic_first: float | None = None
    statistic_second: float | None = None
    note: str = ""


DEFAULT_EARLY_STOP = EarlyStop()


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
    _check(x, values, layout, scheme, permutations)
    return _Tester(x, values, layout, statistic, scheme).run(pairs, permutations, seed, early_stop)


class _Tester:
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
        self.plans: dict[bytes, _Plan] = {}

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
                self.plans[key] = _plan(
                    self.human, self.values, present, self.layout, self.statistic, self.scheme
                )
            batches.setdefault(key, []).append((first, second))
        for key, batch in batches.items():
            results.update(_run(self.plans[key], batch, permutations, seed, early_stop))
        return [results[(first, second)] for first, second in pairs]


def _check(x: np.ndarray, values: np.ndarray, layout: Layout, scheme: str, permutations: int) -> None:
    if values.ndim != 2 or values.shape[0] != x.size or layout.n != x.size:
        raise ValueError(f"metrics must be (replies x metrics) for {x.size} replies and a layout of as many")
    if scheme not in (PERM_BOTH, PERM_INPUTS):
        raise ValueError(f"scheme must be {PERM_BOTH!r} or {PERM_INPUTS!r}, not {scheme!r}")
    if permutations < 1:
        raise ValueError("a permutation test needs at least one permutation")


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
    _check(x, values, layout, scheme, permutations)
    tester = _Tester(x, values, layout, statistic, scheme)

    def test(better: int, worse: int) -> PermutationResult:
        if (better, worse) not in cache:
            cache[(better, worse)] = tester.run([(better, worse)], permutations, seed, early_stop)[0]
        return cache[(better, worse)]

    return test


# --- the plan of one set of replies (those both metrics of a pair score) -------------------------------------


class _Plan:
    """Everything a test needs that depends only on the replies used, not on the pair of metrics; and what
    earlier tests on the same replies already drew: the masks (packed bits, by seed and block size) and the
    swapped sums of the metrics while they are small (those of a correlation within 2,000 contexts are not)."""

    units: int  # swap units of the study (replies, contexts, or pairs of replies)
    values: np.ndarray  # every metric column of the study
    present: np.ndarray  # the replies this plan uses
    observed_undefined: str = ""
    sums: dict[tuple[int, int, int, int], np.ndarray]
    cells: dict[tuple[int, int, int], np.ndarray]  # each block's swap patterns, where a plan has them
    blocks: dict[tuple[int, int], _MaskBlocks]

    def mask_blocks(self, seed: int, rows: int) -> _MaskBlocks:
        if not hasattr(self, "blocks"):
            self.blocks, self.sums, self.cells = {}, {}, {}
        if (seed, rows) not in self.blocks:
            self.blocks[(seed, rows)] = _MaskBlocks(np.random.default_rng(seed), self.units)
        return self.blocks[(seed, rows)]

    def keeps_sums(self, sums: np.ndarray) -> bool:
        result: bool = sums.shape[1] <= KEPT_SUM_COLUMNS
        return result

    def columns(self) -> list[int]:
        """The metric columns with a value for every reply of this plan."""
        values, present = self.values, self.present
        return [c for c in range(values.shape[1]) if np.all(np.isfinite(values[present, c]))]

    def metric(self, column: int) -> _MetricSums:  # pragma: no cover - interface
        raise NotImplementedError

    def pair(self, first: int, second: int) -> object:
        """What :meth:`deltas` needs of a pair of metrics, made once per test."""
        return (first, second)

    def deltas(self, pair: object, block: _Block) -> np.ndarray:
        """The swapped differences first - second in every permutation of ``block``."""
        assert isinstance(pair, tuple)
        first, second = pair
        a, b = self.statistic(
            self.metric(first), self.metric(second), (block.metric_sums(first), block.metric_sums(second))
        )
        result: np.ndarray = a - b
        return result

    def statistic(
        self, first: _MetricSums, second: _MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        raise NotImplementedError


@dataclass
class _MetricSums:
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


def _plan(
    human: np.ndarray,
    values: np.ndarray,
    present: np.ndarray,
    layout: Layout,
    statistic: Statistic,
    scheme: str,
) -> _Plan:
    if statistic.name == "reply_accuracy":
        return _PairsPlan(human, values, present, layout.contexts)
    if statistic.name == "system_accuracy":
        return _SystemPlan(human, values, present, layout, scheme, statistic.tie_calibration)
    groups = {
        "none": Groups.single(layout.n),
        "context": layout.contexts,
        "system": layout.systems,
    }[statistic.grouping]
    return _CorrelationPlan(human, values, present, groups, layout, scheme, statistic.name == "spearman")


def _unit_codes(layout: Layout, scheme: str) -> tuple[np.ndarray, int]:
    """Each reply's swap unit: itself (PERM-BOTH) or its context (PERM-INPUTS)."""
    if scheme == PERM_BOTH:
        return np.arange(layout.n), layout.n
    return layout.contexts.codes, layout.contexts.count


def _sum_matrix(
    units: np.ndarray, columns: np.ndarray, values: np.ndarray, shape: tuple[int, int]
) -> np.ndarray | sparse.csr_matrix:
    """units x columns: the sum of ``values`` of the replies of each unit that fall in each column, stored
    transposed (columns x units, C order), the form its product with the masks (units x permutations) takes."""
    if shape[1] <= DENSE_COLUMNS and shape[0] * shape[1] <= DENSE_CELLS:
        dense = np.zeros((shape[1], shape[0]))
        np.add.at(dense, (columns, units), values)
        return dense
    return sparse.csr_matrix((values, (columns, units)), shape=(shape[1], shape[0]))


class _Masks:
    """One block of swap masks as drawn: units x permutations, C order."""

    def __init__(self, units_first: np.ndarray) -> None:
        self.units_first = units_first

    def times(self, matrix: np.ndarray | sparse.csr_matrix) -> np.ndarray:
        """permutations x sums: the swapped sums (``matrix`` is columns x units, see :func:`_sum_matrix`)."""
        if sparse.issparse(matrix):
            return np.asarray(matrix @ self.units_first).T
        return row_product(matrix, self.units_first).T


class _CorrelationPlan(_Plan):
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
        unit_codes, self.units = _unit_codes(layout, scheme)
        self.unit_of = unit_codes[self.replies]
        self.groups_count = count
        self.cache: dict[int, _MetricSums] = {}
        self.patterns = SwapPatterns.of(codes, self.unit_of, count, self.units)

    def metric(self, column: int) -> _MetricSums:
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
                sums = _MetricSums(fixed, np.zeros((0, 0)), by_unit)
            else:
                units = np.tile(self.unit_of, parts)
                sums = _MetricSums(
                    fixed, _sum_matrix(units, columns, quantities, (self.units, parts * count))
                )
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
            return _PatternTable((r_a - r_b).reshape(-1), None)
        tables = np.stack([r_a, r_b], axis=-1).reshape(-1, 2)
        defined = np.stack([valid_a, valid_b], axis=-1).reshape(-1, 2).view(np.int8)
        return _PatternTable(None, tables, defined)

    def deltas(self, pair: object, block: _Block) -> np.ndarray:
        if not isinstance(pair, _PatternTable):
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
        self, first: _MetricSums, second: _MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The observed statistics (one row): nothing swapped, so each metric's r is its rows' r."""
        return self._swapped(first, second, None)

    def _swapped(
        self,
        first: _MetricSums,
        second: _MetricSums,
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
            metric: _MetricSums, on: np.ndarray, kept: bool
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
        return _mean_over_groups(r_first, valid_first), _mean_over_groups(r_second, valid_second)


def _mean_over_groups(r: np.ndarray, valid: np.ndarray) -> np.ndarray:
    used = valid.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(used > 0, r.sum(axis=1) / used, np.nan)


@dataclass(frozen=True)
class _PatternTable:
    """A pair's table by group and swap pattern (cells as :meth:`SwapPatterns.cells` numbers them): the
    difference of the two metrics' r where every group's r is always defined, else both r (columns r_first,
    r_second; 0 where undefined) and whether each is defined (``defined``, 0/1 as int8)."""

    difference: np.ndarray | None
    tables: np.ndarray | None
    defined: np.ndarray | None = None


class _SystemPlan(_Plan):
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
        unit_codes, self.units = _unit_codes(layout, scheme)
        self.unit_of = unit_codes[self.replies]
        self.cache: dict[int, _MetricSums] = {}
        if used.size < 2:
            self.observed_undefined = "not computable: fewer than 2 systems"

    def metric(self, column: int) -> _MetricSums:
        if column not in self.cache:
            values = self.values[self.replies, column]
            z = standardised(values)
            # The system sums of the values above their smallest (as the rows sum them), and the same in units
            # of sd: a system mean minus another is then the rows' difference of means, times one factor in the
            # swapped statistics (systems with equal sums stay tied); z's offset would cancel in it.
            inside = scaled(values)
            raw = np.bincount(self.codes, values - inside.reference, self.systems)
            fixed = np.bincount(self.codes, inside.values, self.systems) / inside.spread
            matrix = _sum_matrix(self.unit_of, self.codes, z, (self.units, self.systems))
            self.cache[column] = _MetricSums(fixed, matrix, raw=raw, spread=spread(values))
        return self.cache[column]

    def statistic(
        self, first: _MetricSums, second: _MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
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


class _PairsPlan(_Plan):
    """acc_eq within contexts; the pairs test swaps the outcome of each pair of replies."""

    def __init__(self, human: np.ndarray, values: np.ndarray, present: np.ndarray, contexts: Groups) -> None:
        self.values, self.present = values, present
        self.pairs = within_group_pairs(contexts, present)
        self.units = self.pairs.count
        self.human_diff = human[self.pairs.first] - human[self.pairs.second]
        _, dense = np.unique(self.pairs.group, return_inverse=True)
        per_group = np.bincount(dense).astype(np.float64)
        self.weight = 1.0 / (per_group[dense] * max(per_group.size, 1))
        self.cache: dict[int, _MetricSums] = {}
        if self.units == 0:
            self.observed_undefined = "not computable: no context has two replies both metrics scored"

    def metric(self, column: int) -> _MetricSums:
        if column not in self.cache:
            metric = self.values[:, column]
            metric_diff = metric[self.pairs.first] - metric[self.pairs.second]
            epsilon = calibrate_ties(self.human_diff, metric_diff, self.pairs.group).epsilon
            outcome = agreement(self.human_diff, metric_diff, epsilon) * self.weight
            self.cache[column] = _MetricSums(np.array([outcome.sum()]), outcome[None, :])
        return self.cache[column]

    def statistic(
        self, first: _MetricSums, second: _MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        if sums is None:
            return first.fixed.copy(), second.fixed.copy()
        swapped = (sums[1] - sums[0])[:, 0]
        return first.fixed[0] + swapped, second.fixed[0] - swapped


# --- running the tests ------------------------------------------------------------------------------------------


@dataclass
class _Count:
    """One direction of a pair's test: how many swapped differences reached the observed one."""

    observed: float
    greater: int = 0
    larger: int = 0
    used: int = 0
    done: bool = False

    def add(self, delta: np.ndarray, drawn: int, early_stop: EarlyStop | None) -> None:
        defined = np.isfinite(delta)
        self.greater += int(np.sum(delta[defined] >= self.observed - EQUAL))
        self.larger += int(np.sum(np.abs(delta[defined]) >= abs(self.observed) - EQUAL))
        self.used += int(defined.sum())
        if early_stop is not None and drawn % early_stop.block == 0 and self.used:
            share = self.greater / self.used
            self.done = share < early_stop.below or share > early_stop.above


@dataclass
class _Tally:
    """A pair's test, and the reverse pair's (second against first) when it was asked for too: the reverse's
    swapped differences are the negated ones on the very same masks, so one run counts both, each stopping by
    its own rule, exactly as two runs would."""

    first: int
    second: int
    statistics: tuple[float, float]
    forward: _Count
    reverse: _Count | None = None
    pair: object = None

    @property
    def active(self) -> bool:
        return not self.forward.done or (self.reverse is not None and not self.reverse.done)

    def add(self, delta: np.ndarray, drawn: int, early_stop: EarlyStop | None) -> None:
        if not self.forward.done:
            self.forward.add(delta, drawn, early_stop)
        if self.reverse is not None and not self.reverse.done:
            self.reverse.add(-delta, drawn, early_stop)

    def results(self) -> dict[tuple[int, int], PermutationResult]:
        a, b = self.statistics
        results = {(self.first, self.second): _result(self.first, self.second, self.forward, a, b)}
        if self.reverse is not None:
            results[(self.second, self.first)] = _result(self.second, self.first, self.reverse, b, a)
        return results


def _result(first: int, second: int, count: _Count, a: float, b: float) -> PermutationResult:
    return PermutationResult(
        first=first,
        second=second,
        delta=count.observed,
        p_value=(count.greater + 1) / (count.used + 1),
        p_two_sided=(count.larger + 1) / (count.used + 1),
        permutations=count.used,
        statistic_first=a,
        statistic_second=b,
    )


def _run(
    plan: _Plan,
    pairs: list[tuple[int, int]],
    permutations: int,
    seed: int,
    early_stop: EarlyStop | None,
) -> dict[tuple[int, int], PermutationResult]:
    """The tests of ``pairs`` on one plan; a pair whose reverse is in ``pairs`` too is counted with it."""
    results: dict[tuple[int, int], PermutationResult] = {}
    tallies: dict[tuple[int, int], _Tally] = {}
    for first, second in pairs:
        if (first, second) in tallies or (second, first) in tallies:
            tally = tallies.get((second, first))
            if tally is not None and first != second and tally.reverse is None:
                tally.reverse = _Count(-tally.forward.observed)
            continue
        if plan.observed_undefined:
            results[(first, second)] = PermutationResult(
                first, second, None, None, None, 0, note=plan.observed_undefined
            )
            continue
        a, b = plan.statistic(plan.metric(first), plan.metric(second), None)
        if not (np.isfinite(a[0]) and np.isfinite(b[0])):
            note = "not computable: a statistic is undefined on the replies both metrics scored"
            results[(first, second)] = PermutationResult(first, second, None, None, None, 0, note=note)
            results[(second, first)] = PermutationResult(second, first, None, None, None, 0, note=note)
            continue
        tallies[(first, second)] = _Tally(
            first, second, (float(a[0]), float(b[0])), _Count(float(a[0] - b[0]))
        )
    step = early_stop.block if early_stop is not None else permutations
    cap = max(1, min(step, BLOCK_CELLS // max(1, plan.units)))
    # The largest block that divides the early-stopping block, so that every check falls on a block's end.
    rows = next(size for size in range(cap, 0, -1) if step % size == 0)
    blocks = plan.mask_blocks(seed, rows)
    drawn, index = 0, 0
    while drawn < permutations and any(tally.active for tally in tallies.values()):
        size = min(rows, permutations - drawn)
        drawn += size
        block = _Block(plan, blocks, (seed, rows, index), size)
        for tally in tallies.values():
            if tally.active:
                if tally.pair is None:
                    tally.pair = plan.pair(tally.first, tally.second)
                tally.add(plan.deltas(tally.pair, block), drawn, early_stop)
        index += 1
    for tally in tallies.values():
        results.update(tally.results())
    return results


class _Block:
    """One block of permutations as a plan's tests see it: its masks, unpacked when first needed, and the
    metrics' swapped sums on it (kept on the plan while narrow, see :data:`KEPT_SUM_COLUMNS`)."""

    def __init__(self, plan: _Plan, blocks: _MaskBlocks, key: tuple[int, int, int], size: int) -> None:
        self.plan, self.blocks, self.key, self.size = plan, blocks, key, size
        self.masks: _Masks | None = None
        self.sums: dict[int, np.ndarray] = {}

    def metric_sums(self, column: int) -> np.ndarray:
        """permutations x sums: the metric's sums over the swapped units of every permutation."""
        plan = self.plan
        if column not in self.sums:
            cached = plan.sums.get((*self.key, column))
            if cached is None:
                if self.masks is None:
                    self.masks = _Masks(self.blocks.block(self.key[2], self.size))
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


class _MaskBlocks:
    """The blocks of swap masks of one seed, drawn in order as :func:`swap_masks` draws them and kept packed
    (one bit per unit and permutation), so that later tests see the same masks without drawing them again."""

    def __init__(self, generator: np.random.Generator, units: int) -> None:
        self.generator, self.units = generator, units
        self.packed: list[tuple[int, np.ndarray]] = []

    def block(self, index: int, rows: int) -> np.ndarray:
        """units x rows of 0.0/1.0."""
        return _unpacked(self.raw(index, rows), rows, self.units)

    def bits(self, index: int, rows: int) -> np.ndarray:
        """units x rows of 0/1 (uint8): the same masks as :meth:`block`."""
        return np.unpackbits(self.raw(index, rows))[: rows * self.units].reshape(self.units, rows)

    def raw(self, index: int, rows: int) -> np.ndarray:
        if index > len(self.packed):
            raise ValueError("blocks of masks are drawn in order")
        if index == len(self.packed):
            raw = np.frombuffer(self.generator.bytes((rows * self.units + 7) // 8), dtype=np.uint8)
            self.packed.append((rows, raw))
        size, raw = self.packed[index]
        if size != rows:
            raise ValueError("a block of masks was first drawn with another size")
        return raw


_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)


def _unpacked(raw: np.ndarray, rows: int, units: int) -> np.ndarray:
    """units x rows of 0.0/1.0 from packed bits (a byte's 8 bits at once, from a table)."""
    result: np.ndarray = _BITS[raw].reshape(-1)[: rows * units].reshape(units, rows)
    return result


def swap_masks(generator: np.random.Generator, rows: int, units: int) -> np.ndarray:
    """rows x units of 0.0/1.0, each independently 1 (swap) with probability 1/2; drawn unit by unit (the
    result is the transpose of a C-ordered units x rows array)."""
    raw = np.frombuffer(generator.bytes((rows * units + 7) // 8), dtype=np.uint8)
    return _unpacked(raw, rows, units).T

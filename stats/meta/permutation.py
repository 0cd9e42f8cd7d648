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

Statistics (:class:`Statistic`):

* ``pearson``, ``spearman`` with grouping none, context or system (stats/meta/grouped.py): the statistic of
  a swapped matrix is a function of per-group sums that are linear in the swap mask (sum of w*z, w*h*z,
  w*z^2), so a block of permutations costs one matrix product per metric, shared by every pair. For
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
metrics (common random numbers), so a pair's p-value does not depend on which other pairs were tested.

Pure numpy/scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import sparse

from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, row_product
from stats.meta.grouped import group_ranks
from stats.meta.groups import Groups, within_group_pairs
from stats.meta.pairwise_accuracy import agreement, best_accuracies, calibrate_ties

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
    if values.ndim != 2 or values.shape[0] != x.size or layout.n != x.size:
        raise ValueError(f"metrics must be (replies x metrics) for {x.size} replies and a layout of as many")
    if scheme not in (PERM_BOTH, PERM_INPUTS):
        raise ValueError(f"scheme must be {PERM_BOTH!r} or {PERM_INPUTS!r}, not {scheme!r}")
    if permutations < 1:
        raise ValueError("a permutation test needs at least one permutation")
    results: dict[tuple[int, int], PermutationResult] = {}
    plans: dict[bytes, tuple[_Plan, list[tuple[int, int]]]] = {}
    for first, second in pairs:
        present = np.isfinite(x) & np.isfinite(values[:, first]) & np.isfinite(values[:, second])
        key = np.packbits(present).tobytes()
        if key not in plans:
            plans[key] = (_plan(x, values, present, layout, statistic, scheme), [])
        plans[key][1].append((first, second))
    for plan, plan_pairs in plans.values():
        results.update(_run(plan, plan_pairs, permutations, seed, early_stop))
    return [results[(first, second)] for first, second in pairs]


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

    def test(better: int, worse: int) -> PermutationResult:
        if (better, worse) not in cache:
            cache[(better, worse)] = permutation_tests(
                human,
                metrics,
                layout,
                statistic,
                [(better, worse)],
                scheme=scheme,
                permutations=permutations,
                seed=seed,
                early_stop=early_stop,
            )[0]
        return cache[(better, worse)]

    return test


# --- the plan of one set of replies (those both metrics of a pair score) -------------------------------------


class _Plan:
    """Everything a test needs that depends only on the replies used, not on the pair of metrics."""

    units: int  # swap units of the study (replies, contexts, or pairs of replies)
    observed_undefined: str = ""

    def metric(self, column: int) -> _MetricSums:  # pragma: no cover - interface
        raise NotImplementedError

    def statistic(
        self, first: _MetricSums, second: _MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        raise NotImplementedError


@dataclass
class _MetricSums:
    """One metric on a plan: its fixed sums and the matrix that turns a swap mask into swapped sums."""

    fixed: np.ndarray
    matrix: np.ndarray | sparse.csr_matrix


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
    """units x columns: the sum of ``values`` of the replies of each unit that fall in each column; a sparse
    one is stored transposed (columns x units), the form its product with the masks needs."""
    if shape[1] <= DENSE_COLUMNS and shape[0] * shape[1] <= DENSE_CELLS:
        dense = np.zeros(shape)
        np.add.at(dense, (units, columns), values)
        return dense
    return sparse.csr_matrix((values, (columns, units)), shape=(shape[1], shape[0]))


class _Masks:
    """One block of swap masks (permutations x units), and its transpose made once for sparse products."""

    def __init__(self, masks: np.ndarray) -> None:
        self.masks = masks
        self._transposed: np.ndarray | None = None

    def times(self, matrix: np.ndarray | sparse.csr_matrix) -> np.ndarray:
        if sparse.issparse(matrix):
            if self._transposed is None:
                self._transposed = np.ascontiguousarray(self.masks.T)
            return np.asarray(matrix @ self._transposed).T
        return row_product(self.masks, matrix)


class _CorrelationPlan(_Plan):
    """Pearson (or Pearson of ranks) within the groups of a grouping, averaged over groups."""

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
        centred = h - (np.bincount(codes, h, count) / self.count)[codes]
        self.centred = centred
        self.human_sq = np.bincount(codes, centred * centred, count)
        unit_codes, self.units = _unit_codes(layout, scheme)
        self.unit_of = unit_codes[self.replies]
        self.groups_count = count
        self.cache: dict[int, _MetricSums] = {}

    def metric(self, column: int) -> _MetricSums:
        if column not in self.cache:
            raw = self.values[:, column]
            if self.ranks:
                raw = group_ranks(raw, self.present, self.group_of)
            z = _standardised(raw[self.replies])
            count, codes = self.groups_count, self.codes
            quantities = np.concatenate([z, self.centred * z, z * z])
            columns = np.concatenate([codes, codes + count, codes + 2 * count])
            fixed = np.bincount(columns, quantities, 3 * count)
            units = np.tile(self.unit_of, 3)
            matrix = _sum_matrix(units, columns, quantities, (self.units, 3 * count))
            self.cache[column] = _MetricSums(fixed, matrix)
        return self.cache[column]

    def statistic(
        self, first: _MetricSums, second: _MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows: permutations (one row, the observed, when ``sums`` is None); (first's, second's) statistic."""
        if sums is None:
            return self._mean_r(first.fixed[None, :]), self._mean_r(second.fixed[None, :])
        swapped = sums[1] - sums[0]  # sums of w * (second - first)
        return self._mean_r(first.fixed + swapped), self._mean_r(second.fixed - swapped)

    def _mean_r(self, sums: np.ndarray) -> np.ndarray:
        g = self.groups_count
        s_y, s_xy, s_yy = sums[:, :g], sums[:, g : 2 * g], sums[:, 2 * g :]
        variance = s_yy - s_y * s_y / self.count
        with np.errstate(invalid="ignore", divide="ignore"):
            r = s_xy / np.sqrt(self.human_sq * variance)
        valid = (self.human_sq > 1e-12) & (self.count >= 2) & (variance > 1e-12 * np.maximum(s_yy, 1.0))
        r = np.where(valid, np.clip(r, -1.0, 1.0), 0.0)
        used = valid.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(used > 0, r.sum(axis=1) / used, np.nan)


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
        self.values, self.calibrate = values, calibrate
        self.replies = np.flatnonzero(present)
        used, codes = np.unique(layout.systems.codes[self.replies], return_inverse=True)
        self.codes, self.systems = codes, used.size
        self.count = np.bincount(codes, minlength=used.size).astype(np.float64)
        human_means = np.bincount(codes, human[self.replies], used.size) / self.count
        self.first, self.second = np.triu_indices(used.size, k=1)
        self.human_diff = human_means[self.first] - human_means[self.second]
        unit_codes, self.units = _unit_codes(layout, scheme)
        self.unit_of = unit_codes[self.replies]
        self.cache: dict[int, _MetricSums] = {}
        if used.size < 2:
            self.observed_undefined = "not computable: fewer than 2 systems"

    def metric(self, column: int) -> _MetricSums:
        if column not in self.cache:
            z = _standardised(self.values[self.replies, column])
            fixed = np.bincount(self.codes, z, self.systems)
            matrix = _sum_matrix(self.unit_of, self.codes, z, (self.units, self.systems))
            self.cache[column] = _MetricSums(fixed, matrix)
        return self.cache[column]

    def statistic(
        self, first: _MetricSums, second: _MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        if sums is None:
            return self._accuracy(first.fixed[None, :]), self._accuracy(second.fixed[None, :])
        swapped = sums[1] - sums[0]
        return self._accuracy(first.fixed + swapped), self._accuracy(second.fixed - swapped)

    def _accuracy(self, system_sums: np.ndarray) -> np.ndarray:
        means = system_sums / self.count
        metric_diff = means[:, self.first] - means[:, self.second]
        human_diff = np.broadcast_to(self.human_diff, metric_diff.shape)
        return best_accuracies(human_diff, metric_diff, self.calibrate)


class _PairsPlan(_Plan):
    """acc_eq within contexts; the pairs test swaps the outcome of each pair of replies."""

    def __init__(self, human: np.ndarray, values: np.ndarray, present: np.ndarray, contexts: Groups) -> None:
        self.values = values
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
            self.cache[column] = _MetricSums(np.array([outcome.sum()]), outcome[:, None])
        return self.cache[column]

    def statistic(
        self, first: _MetricSums, second: _MetricSums, sums: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        if sums is None:
            return first.fixed.copy(), second.fixed.copy()
        swapped = (sums[1] - sums[0])[:, 0]
        return first.fixed[0] + swapped, second.fixed[0] - swapped


def _standardised(values: np.ndarray) -> np.ndarray:
    spread = float(values.std())
    centred = values - values.mean()
    return centred / spread if spread > 0 else centred


# --- running the tests ------------------------------------------------------------------------------------------


@dataclass
class _Tally:
    first: int
    second: int
    observed: float
    statistics: tuple[float, float]
    greater: int = 0
    larger: int = 0
    used: int = 0
    done: bool = False


def _run(
    plan: _Plan,
    pairs: list[tuple[int, int]],
    permutations: int,
    seed: int,
    early_stop: EarlyStop | None,
) -> dict[tuple[int, int], PermutationResult]:
    results: dict[tuple[int, int], PermutationResult] = {}
    tallies = []
    for first, second in pairs:
        if plan.observed_undefined:
            results[(first, second)] = PermutationResult(
                first, second, None, None, None, 0, note=plan.observed_undefined
            )
            continue
        a, b = plan.statistic(plan.metric(first), plan.metric(second), None)
        if not (np.isfinite(a[0]) and np.isfinite(b[0])):
            note = "not computable: a statistic is undefined on the replies both metrics scored"
            results[(first, second)] = PermutationResult(first, second, None, None, None, 0, note=note)
            continue
        tallies.append(_Tally(first, second, float(a[0] - b[0]), (float(a[0]), float(b[0]))))
    step = early_stop.block if early_stop is not None else permutations
    cap = max(1, min(step, BLOCK_CELLS // max(1, plan.units)))
    # The largest block that divides the early-stopping block, so that every check falls on a block's end.
    rows = next(size for size in range(cap, 0, -1) if step % size == 0)
    generator = np.random.default_rng(seed)
    drawn = 0
    while drawn < permutations and any(not tally.done for tally in tallies):
        size = min(rows, permutations - drawn)
        masks = _Masks(swap_masks(generator, size, plan.units))
        drawn += size
        block_sums: dict[int, np.ndarray] = {}
        for tally in tallies:
            if tally.done:
                continue
            for column in (tally.first, tally.second):
                if column not in block_sums:
                    block_sums[column] = masks.times(plan.metric(column).matrix)
            swapped_first, swapped_second = plan.statistic(
                plan.metric(tally.first),
                plan.metric(tally.second),
                (block_sums[tally.first], block_sums[tally.second]),
            )
            delta = swapped_first - swapped_second
            defined = np.isfinite(delta)
            tally.greater += int(np.sum(delta[defined] >= tally.observed - EQUAL))
            tally.larger += int(np.sum(np.abs(delta[defined]) >= abs(tally.observed) - EQUAL))
            tally.used += int(defined.sum())
            if early_stop is not None and drawn % early_stop.block == 0 and tally.used:
                share = tally.greater / tally.used
                tally.done = share < early_stop.below or share > early_stop.above
        if drawn >= permutations:
            break
    for tally in tallies:
        used = max(tally.used, 0)
        results[(tally.first, tally.second)] = PermutationResult(
            first=tally.first,
            second=tally.second,
            delta=tally.observed,
            p_value=(tally.greater + 1) / (used + 1),
            p_two_sided=(tally.larger + 1) / (used + 1),
            permutations=used,
            statistic_first=tally.statistics[0],
            statistic_second=tally.statistics[1],
        )
    return results


def swap_masks(generator: np.random.Generator, rows: int, units: int) -> np.ndarray:
    """rows x units of 0.0/1.0, each independently 1 (swap) with probability 1/2."""
    raw = np.frombuffer(generator.bytes((rows * units + 7) // 8), dtype=np.uint8)
    return np.unpackbits(raw)[: rows * units].reshape(rows, units).astype(np.float64)

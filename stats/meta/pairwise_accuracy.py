"""Pairwise accuracy: does the metric order pairs as people do? At system level and within contexts, with
the tie calibration of Deutsch, Foster and Freitag (2023).

* System level (Kocmi et al. 2021, "To Ship or Not to Ship", section 3.1): over every pair of systems,
  the share whose order by the metric's system mean agrees with their order by the human system mean,
  ``|sign(metric delta) = sign(human delta)| / |all system pairs|``. A system's two means run over the same
  replies (those with both a human score and a metric value), as in the report's system-level table.
* Within contexts ("group-by-item" pairwise accuracy, Deutsch et al. 2023, sections 3 and 6): over every
  pair of replies to one context, averaged per context and then over the contexts that have two or more
  replies with both scores (each context weighs the same, as mt-metrics-eval's ``average_by='item'``).
* acc_eq (Deutsch et al. 2023, section 4, Eq. 3): a pair counts as agreement when it is concordant or tied
  in both, acc_eq = (C + T_hm) / (C + D + T_h + T_m + T_hm). People tie often (a 1-5 scale) and metrics
  such as sentence BLEU give many exact zeros; counting a tie as a tie rewards a metric that ties where
  people do. At epsilon = 0 acc_eq is Kocmi's accuracy (mt-metrics-eval's ``Agreement``: sign equality,
  ties included).
* Tie calibration (Deutsch et al. 2023, section 5, Algorithm 1): the metric declares a tie when
  |delta metric| <= epsilon; the candidates are 0 and every distinct |delta metric| among the pairs, and
  epsilon is the candidate with the highest acc_eq (the smallest such candidate when several tie, as
  mt-metrics-eval's ``tau_optimization`` picks the first maximum; equal up to 1e-12 counts as a tie here,
  so that rounding never decides). Candidates are scanned in one sorted pass: raising epsilon past a pair's
  |delta| turns that pair into a metric tie, so acc_eq at every candidate is a cumulative sum.

Intervals: none of the three papers defines one for pairwise accuracy. The report gives the percentile
bootstrap over contexts (BOOT-INPUTS of Deutsch, Dror and Roth 2021, section 4): for system-level accuracy
the system means are recomputed from the drawn contexts, for accuracy within contexts the drawn contexts are
averaged. Tie calibration is repeated in every resample ("recalibrated") while replies x resamples x metrics
stays under :data:`RECALIBRATE_CELLS`, else epsilon stays at the full sample's ("fixed"); ``ci_method`` says
which. Resamples follow stats/bootstrap.py (seed, count, the 90% defined rule).

A ``note`` says when accuracy cannot be computed: fewer than 2 systems; no context with two replies that
have both scores.

Pure numpy/scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from scipy import sparse

from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Resamples, percentile_interval, row_product
from stats.centred import scaled
from stats.meta.groups import Groups, Pairs, within_group_pairs

TIE_TOLERANCE = 1e-12  # accuracies this close count as equal when choosing epsilon
# A difference of two system means within this share of the scores' standard deviation is a tie (0): means
# that are equal in exact arithmetic can differ by the rounding of their sums, and a swap of the permutation
# test can leave two systems with the same mean up to rounding; rounding must not order them.
ZERO_SHARE = 1e-12
# Pairs x resamples x metrics up to which the interval recalibrates epsilon in every resample.
RECALIBRATE_CELLS = 40_000_000
SLICE_ELEMENTS = 2_000_000  # resamples x runs of |delta| held at once while recalibrating
RECALIBRATED, FIXED = "contexts resampled, epsilon recalibrated", "contexts resampled, epsilon fixed"
FEWER_THAN_TWO_SYSTEMS = "not computable: fewer than 2 systems with a human score and a metric value"
# Two systems make one pair: the accuracy is 0 or 1, and its interval over contexts, [0, 1] or a point, says
# only how often resampling flips that one order (1.000 [0.00, 1.00] was shown with no word of it).
ONE_PAIR = "one pair of systems: the accuracy can only be 0 or 1, and says little; compare more systems"
NO_CONTEXT_PAIR = "not computable: no context has two replies with a human score and a metric value"


@dataclass(frozen=True)
class TieCounts:
    """Pairs by outcome at one epsilon (Deutsch et al. 2023, Table 1)."""

    concordant: int
    discordant: int
    ties_human: int  # tied in the human scores only
    ties_metric: int  # tied by the metric (|delta| <= epsilon) only
    ties_both: int

    @property
    def pairs(self) -> int:
        return self.concordant + self.discordant + self.ties_human + self.ties_metric + self.ties_both


@dataclass(frozen=True)
class TieCalibration:
    """acc_eq at every candidate epsilon (ascending, 0 first) and the best one."""

    thresholds: np.ndarray
    accuracies: np.ndarray
    epsilon: float
    accuracy: float


@dataclass(frozen=True)
class PairwiseAccuracy:
    """One metric's pairwise accuracy.

    ``value``: acc_eq at ``epsilon`` (calibrated, or the one asked for; 0 gives Kocmi's accuracy);
    ``accuracy_at_zero``: the same pairs with no tie threshold; ``groups``: contexts averaged over (1 at
    system level); ``systems``: systems compared (system level only).
    """

    value: float | None
    epsilon: float | None
    calibrated: bool
    accuracy_at_zero: float | None
    pairs: int
    groups: int
    counts: TieCounts | None
    ci: tuple[float, float] | None = None
    ci_method: str = ""
    systems: int = 0
    note: str = ""


def tie_counts(human_diff: np.ndarray, metric_diff: np.ndarray, epsilon: float = 0.0) -> TieCounts:
    """Pairs by outcome, with a metric tie where |metric_diff| <= epsilon and a human tie where equal."""
    metric_tie = np.abs(metric_diff) <= epsilon
    human_tie = human_diff == 0
    product = np.sign(human_diff) * np.sign(metric_diff)
    return TieCounts(
        concordant=int(np.sum((product > 0) & ~metric_tie)),
        discordant=int(np.sum((product < 0) & ~metric_tie)),
        ties_human=int(np.sum(human_tie & ~metric_tie)),
        ties_metric=int(np.sum(~human_tie & metric_tie)),
        ties_both=int(np.sum(human_tie & metric_tie)),
    )


def agreement(human_diff: np.ndarray, metric_diff: np.ndarray, epsilon: float = 0.0) -> np.ndarray:
    """Per pair: 1.0 where the pair counts for acc_eq at ``epsilon`` (concordant, or tied in both)."""
    metric_tie = np.abs(metric_diff) <= epsilon
    concordant = np.sign(human_diff) * np.sign(metric_diff) > 0
    result: np.ndarray = np.where(metric_tie, human_diff == 0, concordant).astype(np.float64)
    return result


def calibrate_ties(
    human_diff: np.ndarray,
    metric_diff: np.ndarray,
    group: np.ndarray | None = None,
    *,
    dense: np.ndarray | None = None,
    order: np.ndarray | None = None,
) -> TieCalibration:
    """Deutsch et al. (2023) Algorithm 1: acc_eq, averaged over the pairs' groups (each group equally), at
    epsilon = 0 and at every distinct |metric_diff|; the best epsilon (smallest of the best). ``dense`` (the
    inverse of ``np.unique(group)``) and ``order`` (the stable argsort of |metric_diff|): when already known."""
    codes = np.zeros(human_diff.size, dtype=np.int64) if group is None else np.asarray(group)
    if human_diff.size == 0:
        raise ValueError("tie calibration needs at least one pair")
    if dense is None:
        _, dense = np.unique(codes, return_inverse=True)
    per_group = np.bincount(dense)
    size_of_pair = per_group[dense]
    distance = np.abs(metric_diff)
    if order is None:
        order = np.argsort(distance, kind="stable")
    ordered = distance[order]
    base = agreement(human_diff, metric_diff).astype(np.int64)
    # Past its |delta| a pair becomes a metric tie: it then counts iff people tie it too.
    change = (human_diff == 0).astype(np.int64) - base
    # acc_eq = (1/G) sum over groups of agreeing pairs / pairs of the group. Counted in integers per group size
    # (usually one or two sizes), so that a single group's accuracy is an exact fraction.
    cumulative = np.zeros(ordered.size)
    start = 0.0
    for size in np.unique(size_of_pair):
        of_size = size_of_pair == size
        agreeing = int(base[of_size].sum())
        start += agreeing / size
        cumulative += (agreeing + np.cumsum(np.where(of_size[order], change[order], 0))) / size
    start /= per_group.size
    cumulative /= per_group.size
    run_end = np.flatnonzero(np.r_[ordered[1:] != ordered[:-1], True])
    positive = ordered[run_end] > 0
    thresholds = np.r_[0.0, ordered[run_end][positive]]
    # Pairs already tied by the metric (|delta| = 0) do not change anything at epsilon = 0.
    accuracies = np.r_[start, cumulative[run_end][positive]]
    best = int(np.flatnonzero(accuracies >= accuracies.max() - TIE_TOLERANCE)[0])
    return TieCalibration(thresholds, accuracies, float(thresholds[best]), float(accuracies[best]))


def spread(values: np.ndarray) -> float:
    """The values' population standard deviation, at any scale (stats/centred.py); 0 for fewer than 2."""
    if values.size < 2:
        return 0.0
    inside = scaled(values)
    return float(np.ldexp(inside.spread, inside.top)) if np.ptp(values) > 0 else 0.0


def snapped(differences: np.ndarray, scale: float) -> np.ndarray:
    """Differences of means within :data:`ZERO_SHARE` of ``scale`` (the scores' spread) set to 0: ties."""
    return np.where(np.abs(differences) <= ZERO_SHARE * scale, 0.0, differences)


def reply_pairwise_accuracy(
    human: np.ndarray | Sequence[float],
    metrics: np.ndarray,
    contexts: Groups,
    *,
    tie_calibration: bool = True,
    epsilon: float = 0.0,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> list[PairwiseAccuracy]:
    """acc_eq over the pairs of replies within each context, averaged over contexts, for every metric
    column; with ``tie_calibration`` epsilon is chosen per metric, else ``epsilon`` is used."""
    x, values = _inputs(human, metrics, contexts)
    tables = []
    for column in range(values.shape[1]):
        present = np.isfinite(x) & np.isfinite(values[:, column])
        tables.append(_PairTable.of(x, values[:, column], within_group_pairs(contexts, present)))
    cells = sum(table.pairs.count for table in tables) * max(resamples, 0)
    recalibrate = tie_calibration and cells <= RECALIBRATE_CELLS
    chosen = [table.calibration() if tie_calibration and table.pairs.count else None for table in tables]
    epsilons = [calibration.epsilon if calibration is not None else epsilon for calibration in chosen]
    bootstrapped = resamples > 0 and contexts.count > 1
    drawers = [
        table.drawer(contexts.count, eps, recalibrate) if bootstrapped and table.pairs.count else None
        for table, eps in zip(tables, epsilons, strict=True)
    ]
    all_draws = _draws(drawers, contexts.count, resamples, seed) if bootstrapped else [None] * len(tables)
    results = []
    for table, calibration, eps, draws in zip(tables, chosen, epsilons, all_draws, strict=True):
        if table.pairs.count == 0:
            results.append(
                PairwiseAccuracy(None, None, tie_calibration, None, 0, 0, None, note=NO_CONTEXT_PAIR)
            )
            continue
        value = calibration.accuracy if calibration is not None else table.accuracy(eps)
        interval = percentile_interval(draws, confidence) if draws is not None else None
        results.append(
            PairwiseAccuracy(
                value=value,
                epsilon=eps,
                calibrated=tie_calibration,
                accuracy_at_zero=table.accuracy(0.0),
                pairs=table.pairs.count,
                groups=int(table.dense.max()) + 1,
                counts=tie_counts(table.human_diff, table.metric_diff, eps),
                ci=interval,
                ci_method=(RECALIBRATED if recalibrate else FIXED) if interval is not None else "",
            )
        )
    return results


def system_pairwise_accuracy(
    human: np.ndarray | Sequence[float],
    metrics: np.ndarray,
    systems: Groups,
    *,
    contexts: Groups | None = None,
    tie_calibration: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> list[PairwiseAccuracy]:
    """Kocmi et al.'s accuracy over system pairs of system means (acc_eq with tie calibration when asked),
    for every metric column; the interval resamples ``contexts`` (none without them)."""
    x, values = _inputs(human, metrics, systems)
    if contexts is not None and contexts.n != x.size:
        raise ValueError(f"{contexts.n} context codes for {x.size} replies")
    bootstrapped = contexts is not None and contexts.count > 1 and resamples > 0
    estimates: list[PairwiseAccuracy] = []
    # Columns that score the same replies share one drawer (one matrix product per block for all of them).
    sharing: dict[bytes, list[int]] = {}
    for column in range(values.shape[1]):
        present = np.isfinite(x) & np.isfinite(values[:, column])
        estimate = _system_estimate(x, values[:, column], present, systems, tie_calibration)
        if bootstrapped and estimate.systems >= 2:
            sharing.setdefault(np.packbits(present).tobytes(), []).append(column)
        estimates.append(estimate)
    if not bootstrapped or contexts is None:
        return estimates
    by_column = _system_draws(
        x, values, list(sharing.values()), systems, contexts, tie_calibration, resamples, seed
    )
    method = RECALIBRATED if tie_calibration else "contexts resampled"
    results = []
    for column, estimate in enumerate(estimates):
        draws = by_column.get(column)
        interval = percentile_interval(draws, confidence) if draws is not None else None
        results.append(replace(estimate, ci=interval, ci_method=method if interval else ""))
    return results


def _system_estimate(
    x: np.ndarray, column_all: np.ndarray, present: np.ndarray, systems: Groups, tie_calibration: bool
) -> PairwiseAccuracy:
    """One metric's accuracy over the pairs of systems rated on the replies it scored (no interval)."""
    counts = systems.sizes(present)
    rated = np.flatnonzero(counts > 0)
    if rated.size < 2:
        note = FEWER_THAN_TWO_SYSTEMS
        return PairwiseAccuracy(
            None, None, tie_calibration, None, 0, 0, None, systems=int(rated.size), note=note
        )
    codes = systems.codes[present]
    human_means = np.bincount(codes, x[present], systems.count)[rated] / counts[rated]
    # Means of the values above their smallest: differences of means as exact as the values' spread, at
    # any level (stats/centred.py); what the permutation test's observed statistic computes too.
    column_values = column_all[present]
    above = column_values - column_values.min()
    metric_means = np.bincount(codes, above, systems.count)[rated] / counts[rated]
    first, second = np.triu_indices(rated.size, k=1)
    human_diff = snapped(human_means[first] - human_means[second], spread(x[present]))
    metric_diff = snapped(metric_means[first] - metric_means[second], spread(column_values))
    chosen = calibrate_ties(human_diff, metric_diff) if tie_calibration else None
    eps = chosen.epsilon if chosen is not None else 0.0
    at_zero = float(agreement(human_diff, metric_diff).mean())
    return PairwiseAccuracy(
        value=chosen.accuracy if chosen is not None else at_zero,
        epsilon=eps,
        calibrated=tie_calibration,
        accuracy_at_zero=at_zero,
        pairs=int(first.size),
        groups=1,
        counts=tie_counts(human_diff, metric_diff, eps),
        systems=int(rated.size),
        note=ONE_PAIR if rated.size == 2 else "",
    )


def _system_draws(
    x: np.ndarray,
    values: np.ndarray,
    shared: list[list[int]],
    systems: Groups,
    contexts: Groups,
    tie_calibration: bool,
    resamples: int,
    seed: int,
) -> dict[int, np.ndarray]:
    """Each column's bootstrap accuracies (contexts resampled), by column: one drawer per set of columns
    that score the same replies, drawn in the order of ``shared``."""
    drawers: list[Callable[[np.ndarray], np.ndarray] | None] = []
    for columns in shared:
        present = np.isfinite(x) & np.isfinite(values[:, columns[0]])
        rated = np.flatnonzero(systems.sizes(present) > 0)
        drawers.append(
            _system_drawer(x, values[:, columns], present, systems, rated, contexts, tie_calibration)
        )
    by_column: dict[int, np.ndarray] = {}
    for columns, draws in zip(shared, _draws(drawers, contexts.count, resamples, seed), strict=True):
        assert draws is not None
        by_column.update((column, draws[:, index]) for index, column in enumerate(columns))
    return by_column


def trivial_accuracy(human: np.ndarray, metric: np.ndarray, contexts: Groups) -> float | None:
    """acc_eq within contexts of the better trivial metric, the level a real metric must beat: one that ties
    every pair gets t, the contexts' mean share of pairs people tied; one that orders every pair at random
    gets (1 - t) / 2 in expectation. ``None`` when no context has two replies with both scores."""
    pairs = within_group_pairs(contexts, np.isfinite(human) & np.isfinite(metric))
    if pairs.count == 0:
        return None
    tied = (human[pairs.first] == human[pairs.second]).astype(np.float64)
    _, dense = np.unique(pairs.group, return_inverse=True)
    share = float((np.bincount(dense, tied) / np.bincount(dense)).mean())
    return max(share, (1.0 - share) / 2.0)


def best_accuracies(human_diff: np.ndarray, metric_diff: np.ndarray, calibrate: bool) -> np.ndarray:
    """Row by row (pairs in columns, NaN where a pair is absent): acc_eq at epsilon = 0, or at the best
    candidate epsilon of that row. For few pairs per row (system pairs), vectorised over rows."""
    present = np.isfinite(human_diff) & np.isfinite(metric_diff)
    count = present.sum(axis=1).astype(np.float64)
    h = np.where(present, human_diff, 0.0)
    m = np.where(present, metric_diff, 0.0)
    if not calibrate:
        with np.errstate(invalid="ignore", divide="ignore"):
            result: np.ndarray = np.where(present, agreement(h, m), 0.0).sum(axis=1) / count
            return result
    distance = np.abs(m)
    thresholds = np.concatenate([np.zeros((h.shape[0], 1)), distance], axis=1)  # rows x candidates
    tie = distance[:, None, :] <= thresholds[:, :, None]  # rows x candidates x pairs
    concordant = (np.sign(h) * np.sign(m) > 0)[:, None, :]
    agree = np.where(tie, (h == 0)[:, None, :], concordant) & present[:, None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        result = agree.sum(axis=2).max(axis=1) / count
        return result


@dataclass(frozen=True)
class _PairTable:
    """One metric's pairs within contexts: differences and each pair's context."""

    pairs: Pairs
    human_diff: np.ndarray
    metric_diff: np.ndarray

    @classmethod
    def of(cls, human: np.ndarray, metric: np.ndarray, pairs: Pairs) -> _PairTable:
        return cls(
            pairs=pairs,
            human_diff=human[pairs.first] - human[pairs.second],
            metric_diff=metric[pairs.first] - metric[pairs.second],
        )

    @cached_property
    def dense(self) -> np.ndarray:
        """Each pair's group as an index among the groups that have pairs (``np.unique``'s inverse)."""
        return np.asarray(np.unique(self.pairs.group, return_inverse=True)[1])

    @cached_property
    def order(self) -> np.ndarray:
        """The pairs in the (stable) order of |metric_diff|, as tie calibration walks them."""
        return np.argsort(np.abs(self.metric_diff), kind="stable")

    def calibration(self) -> TieCalibration:
        return calibrate_ties(
            self.human_diff, self.metric_diff, self.pairs.group, dense=self.dense, order=self.order
        )

    def accuracy(self, epsilon: float) -> float:
        agree = agreement(self.human_diff, self.metric_diff, epsilon)
        dense = self.dense
        per_group = np.bincount(dense, agree) / np.bincount(dense)
        return float(per_group.mean())

    def drawer(self, count: int, epsilon: float, recalibrate: bool) -> Callable[[np.ndarray], np.ndarray]:
        """A function of a block of resamples of the contexts (counts) to acc_eq of each: the drawn contexts'
        accuracies averaged (each as often as drawn), at ``epsilon`` or at each resample's own best epsilon."""
        group = self.pairs.group
        per_group = np.bincount(group, minlength=count).astype(np.float64)
        has_pairs = (per_group > 0).astype(np.float64)
        weight = 1.0 / np.where(per_group > 0, per_group, 1.0)[group]
        fixed = np.bincount(group, agreement(self.human_diff, self.metric_diff, epsilon) * weight, count)
        if not recalibrate:

            def at_epsilon(block: np.ndarray) -> np.ndarray:
                with np.errstate(invalid="ignore", divide="ignore"):
                    return np.asarray((block @ fixed) / (block @ has_pairs))

            return at_epsilon
        at_zero = agreement(self.human_diff, self.metric_diff)
        start = np.bincount(group, at_zero * weight, count)
        distance = np.abs(self.metric_diff)
        change = ((self.human_diff == 0).astype(np.float64) - at_zero) * weight
        order = self.order
        ordered = distance[order]
        run_of = np.cumsum(np.r_[False, ordered[1:] != ordered[:-1]])  # run index of each sorted pair
        runs = int(run_of[-1]) + 1
        # runs x contexts: the change in each context's accuracy as epsilon passes each run's |delta|
        by_run = sparse.csr_matrix((change[order], (run_of, group[order])), shape=(runs, count))

        def recalibrated(block: np.ndarray) -> np.ndarray:
            best = np.empty(block.shape[0])
            rows = max(1, SLICE_ELEMENTS // runs)
            for top in range(0, block.shape[0], rows):
                part = block[top : top + rows]
                base = part @ start
                steps = np.cumsum(np.asarray(by_run @ part.T).T, axis=1)
                best[top : top + rows] = np.maximum(base, base + steps.max(axis=1))
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.asarray(best / (block @ has_pairs))

        return recalibrated


def _system_drawer(
    human: np.ndarray,
    metrics: np.ndarray,
    present: np.ndarray,
    systems: Groups,
    rated: np.ndarray,
    contexts: Groups,
    calibrate: bool,
) -> Callable[[np.ndarray], np.ndarray]:
    """A function of a block of resamples of the contexts to the system-level accuracy of every column of
    ``metrics`` (b x columns; the columns score the same replies, ``present``): system means from the drawn
    contexts' replies (each context as often as drawn)."""
    cells = contexts.codes[present] * systems.count + systems.codes[present]
    size = contexts.count * systems.count

    def table(weights: np.ndarray) -> np.ndarray:
        return np.bincount(cells, weights, size).reshape(contexts.count, systems.count)[:, rated]

    # Counts and human sums per context and system, then each column's metric sums, side by side: one product
    # per block for all the columns.
    sums = np.concatenate(
        [table(np.ones(int(present.sum()))), table(human[present])]
        + [
            table(metrics[present, column] - metrics[present, column].min())
            for column in range(metrics.shape[1])
        ],
        axis=1,
    )
    first, second = np.triu_indices(rated.size, k=1)
    width = rated.size
    human_spread = spread(human[present])
    spreads = [spread(metrics[present, column]) for column in range(metrics.shape[1])]

    def draw(block: np.ndarray) -> np.ndarray:
        drawn_sums = row_product(block, sums)
        drawn = drawn_sums[:, :width]
        # A resample that lost a system compares fewer pairs than the study: no draw.
        lost = ~np.all(drawn > 0, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            human_means = drawn_sums[:, width : 2 * width] / drawn
        human_diff = snapped(human_means[:, first] - human_means[:, second], human_spread)
        result = np.empty((block.shape[0], metrics.shape[1]))
        for column in range(metrics.shape[1]):
            start = (2 + column) * width
            with np.errstate(invalid="ignore", divide="ignore"):
                metric_means = drawn_sums[:, start : start + width] / drawn
            metric_diff = snapped(metric_means[:, first] - metric_means[:, second], spreads[column])
            accuracy = best_accuracies(human_diff, metric_diff, calibrate)
            accuracy[lost] = np.nan
            result[:, column] = accuracy
        return result

    return draw


def _draws(
    drawers: Sequence[Callable[[np.ndarray], np.ndarray] | None], count: int, resamples: int, seed: int
) -> list[np.ndarray | None]:
    """Every drawer's draws over one pass of the resamples of ``count`` contexts (shared by all metrics): a
    drawer gives one draw per resample of a block (b,), or one per resample and column (b x columns)."""
    draws: list[np.ndarray | None] = [None] * len(drawers)
    done = 0
    for block in Resamples(n=count, count=resamples, seed=seed, keep=True).blocks():
        size = block.shape[0]
        for index, drawer in enumerate(drawers):
            if drawer is not None:
                drawn = drawer(block)
                target = draws[index]
                if target is None:
                    target = draws[index] = np.full((resamples, *drawn.shape[1:]), np.nan)
                target[done : done + size] = drawn
        done += size
    return draws


def _inputs(
    human: np.ndarray | Sequence[float], metrics: np.ndarray, groups: Groups
) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(human, dtype=np.float64)
    values = np.asarray(metrics, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    if values.shape[0] != x.size or groups.n != x.size:
        raise ValueError(f"{x.size} human scores, {values.shape[0]} metric rows and {groups.n} group codes")
    return x, values

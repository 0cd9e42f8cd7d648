"""Grouped correlations: the correlation within each context's (or system's) replies, averaged over groups.

Deutsch, Dror and Roth (2021), section 3, define three levels of correlation between a metric and people
over a matrix systems x inputs: system-level (the correlation of system means), summary-level (for each
input, the correlation over the systems' outputs for it, averaged over inputs) and global (one correlation
over all cells). In a dialog study the inputs are contexts and the outputs replies, so

* grouping "context" is their summary-level correlation, mt-metrics-eval's ``average_by='item'``: does the
  metric order the replies to one context as people do? It answers the question a developer choosing
  between replies asks, and differs from the flat number exactly when several systems answer each context;
* grouping "system" is mt-metrics-eval's ``average_by='sys'``: the correlation within each system's
  replies, averaged over systems;
* grouping "none" is the flat (global) correlation the report has always given.

A group counts when at least two of its replies have both a human score and a metric value and neither
side is constant over them (a constant side has no correlation; mt-metrics-eval drops such NaNs the same
way); the result says how many groups were used and how many were left out for which reason. The reasons
are checked in this order: fewer than 2 replies, human scores constant, metric constant (so the count for
constant human scores is the same for every metric of a study without missing values).

The coefficients within a group are Pearson's r, Spearman's rho (Pearson's r of within-group average ranks)
and Kendall's tau-b (the variant scipy and mt-metrics-eval compute by default), each averaged with equal
weight per group (mt-metrics-eval's ``macro=True``).

Interval: the percentile bootstrap over groups (Deutsch et al. 2021, section 4: BOOT-INPUTS for the
summary-level correlation), drawn as the report's bootstrap draws replies (:class:`stats.bootstrap.Resamples`:
same seed convention, same resample count, the same :data:`~stats.bootstrap.MIN_DEFINED_SHARE` rule). A
resampled statistic is the mean of the drawn groups' correlations, each counted as often as it was drawn,
so every resample costs one matrix product for all metrics at once. Every metric sees the same resamples.
With grouping "none" there is one group: the interval of the flat correlation is the report's bootstrap
over replies (stats/bootstrap.py), not repeated here.

Pure numpy/scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats as scipy_stats

from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Resamples, percentile_interval
from stats.centred import centred_within_groups, group_pearson
from stats.meta.groups import Groups, within_group_pairs

Coefficient = Literal["pearson", "spearman", "kendall"]
COEFFICIENTS: tuple[Coefficient, ...] = ("pearson", "spearman", "kendall")
TOO_FEW = "fewer than 2 replies"
HUMAN_CONSTANT = "human scores constant"
METRIC_CONSTANT = "metric constant"
REASONS = (TOO_FEW, HUMAN_CONSTANT, METRIC_CONSTANT)
# Groups up to this size get Kendall's tau from their enumerated pairs (vectorised); larger ones from scipy.
SMALL_GROUP = 64


@dataclass(frozen=True)
class GroupedCorrelation:
    """One metric's grouped correlation with the human scores.

    ``value`` is ``None`` when no group could be used; ``note`` then says why. ``left_out`` counts the
    groups not used, by reason; ``groups`` + the left-out counts = every group of the grouping. ``ci`` is the
    bootstrap interval over groups (``None`` with one group, no resamples, or too few defined resamples).
    """

    coefficient: Coefficient
    value: float | None
    groups: int
    left_out: dict[str, int] = field(default_factory=dict)
    ci: tuple[float, float] | None = None
    note: str = ""


@dataclass(frozen=True)
class GroupCorrelations:
    """Per group: the coefficient (NaN where undefined) and why a group is left out ("" when used)."""

    values: np.ndarray
    reasons: tuple[str, ...]
    left_out: dict[str, int]  # groups left out, by reason (every one of REASONS), counted with the reasons

    @property
    def used(self) -> np.ndarray:
        result: np.ndarray = np.isfinite(self.values)
        return result


def grouped_correlations(
    human: np.ndarray | Sequence[float],
    metrics: np.ndarray,
    groups: Groups,
    *,
    coefficient: Coefficient = "pearson",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> list[GroupedCorrelation]:
    """The grouped ``coefficient`` of every metric column with the human scores.

    ``human``: one score per reply (NaN: no human score); ``metrics``: (replies x metrics), NaN where a
    metric has no value; ``groups``: each reply's context or system (:meth:`Groups.single` for "none").
    """
    return grouped_coefficients(
        human, metrics, groups, (coefficient,), resamples=resamples, seed=seed, confidence=confidence
    )[coefficient]


def grouped_coefficients(
    human: np.ndarray | Sequence[float],
    metrics: np.ndarray,
    groups: Groups,
    coefficients: Sequence[Coefficient] = COEFFICIENTS,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> dict[Coefficient, list[GroupedCorrelation]]:
    """:func:`grouped_correlations` of several coefficients, each exactly as alone; the resamples over groups
    are drawn once for all of them (and not at all when no group of any metric can be used)."""
    x = np.asarray(human, dtype=np.float64)
    values = np.asarray(metrics, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    if values.shape[0] != x.size or groups.n != x.size:
        raise ValueError(f"{x.size} human scores, {values.shape[0]} metric rows and {groups.n} group codes")
    for coefficient in coefficients:
        if coefficient not in COEFFICIENTS:
            raise ValueError(f"coefficient must be one of {', '.join(COEFFICIENTS)}, not {coefficient!r}")
    shared: dict[bytes, _HumanSide] = {}
    tables = {
        coefficient: [
            group_correlations(x, values[:, column], groups, coefficient, shared)
            for column in range(values.shape[1])
        ]
        for coefficient in coefficients
    }
    usable = any(table.used.any() for per_group in tables.values() for table in per_group)
    draws = _bootstrap(tables, groups.count, resamples, seed) if groups.count > 1 and usable else {}
    return {
        coefficient: _results(coefficient, per_group, draws.get(coefficient), confidence)
        for coefficient, per_group in tables.items()
    }


def _results(
    coefficient: Coefficient,
    per_group: Sequence[GroupCorrelations],
    draws: np.ndarray | None,
    confidence: float,
) -> list[GroupedCorrelation]:
    results = []
    for column, table in enumerate(per_group):
        used = table.used
        left_out = {reason: table.left_out[reason] for reason in REASONS}
        interval = percentile_interval(draws[column], confidence) if draws is not None else None
        if used.any():
            value = float(np.clip(np.mean(table.values[used]), -1.0, 1.0))
            results.append(GroupedCorrelation(coefficient, value, int(used.sum()), left_out, interval))
        else:
            note = "not computable: no group has 2 or more replies with varying human and metric scores"
            results.append(GroupedCorrelation(coefficient, None, 0, left_out, None, note))
    return results


@dataclass
class _HumanSide:
    """What the human scores give on one set of present replies, whatever the metric: the groups where they
    are constant, and their ranks within groups (when first asked)."""

    constant: np.ndarray
    ranks: np.ndarray | None = None


def group_correlations(
    human: np.ndarray,
    metric: np.ndarray,
    groups: Groups,
    coefficient: Coefficient,
    shared: dict[bytes, _HumanSide] | None = None,
) -> GroupCorrelations:
    """The coefficient within every group over its replies with both scores, and the reasons for NaNs.
    ``shared``: the human side by set of present replies, kept across the metrics of one call."""
    present = np.isfinite(human) & np.isfinite(metric)
    sizes = groups.sizes(present)
    if not np.any(sizes >= 2):  # every group too small (a system's replies by context): nothing else to ask
        left_out = {reason: groups.count if reason == TOO_FEW else 0 for reason in REASONS}
        return GroupCorrelations(np.full(groups.count, np.nan), (TOO_FEW,) * groups.count, left_out)
    key = np.packbits(present).tobytes()
    side = shared.get(key) if shared is not None else None
    if side is None:
        side = _HumanSide(_constant(human, present, groups))
        if shared is not None:
            shared[key] = side
    human_constant = side.constant
    metric_constant = _constant(metric, present, groups)
    reasons = np.full(groups.count, "", dtype=object)
    reasons[metric_constant] = METRIC_CONSTANT
    reasons[human_constant] = HUMAN_CONSTANT
    too_few = sizes < 2
    reasons[too_few] = TOO_FEW
    usable = ~(metric_constant | human_constant | too_few)
    left_out = {
        TOO_FEW: int(np.count_nonzero(too_few)),
        HUMAN_CONSTANT: int(np.count_nonzero(human_constant & ~too_few)),
        METRIC_CONSTANT: int(np.count_nonzero(metric_constant & ~human_constant & ~too_few)),
    }
    result = np.full(groups.count, np.nan)
    if usable.any():
        keep = present & usable[groups.codes]
        if coefficient == "kendall":
            result[usable] = _kendall(human, metric, keep, groups)[usable]
        else:
            x, y = human, metric
            if coefficient == "spearman":
                # Ranks within groups depend on the group's replies only: those among all present replies are
                # the ones among the kept groups' (whole groups of them), and serve every metric.
                if side.ranks is None:
                    side.ranks = group_ranks(human, present, groups)
                x, y = side.ranks, group_ranks(metric, keep, groups)
            result[usable] = _pearson(x, y, keep, groups)[usable]
    return GroupCorrelations(np.clip(result, -1.0, 1.0), tuple(reasons.tolist()), left_out)


def group_ranks(values: np.ndarray, present: np.ndarray, groups: Groups) -> np.ndarray:
    """Each reply's average rank (1-based, ties averaged) among the present replies of its group; NaN where
    absent. The ranks of ``scipy.stats.rankdata`` applied to every group separately."""
    ranks = np.full(values.size, np.nan)
    where = np.flatnonzero(present)
    if where.size == 0:
        return ranks
    codes, data = groups.codes[where], values[where]
    order = np.lexsort((data, codes))
    codes, data = codes[order], data[order]
    new_group = np.r_[True, codes[1:] != codes[:-1]]
    new_run = new_group | np.r_[True, data[1:] != data[:-1]]
    position = np.arange(where.size)
    group_start = np.maximum.accumulate(np.where(new_group, position, 0))
    run_start = np.flatnonzero(new_run)
    run_length = np.diff(np.r_[run_start, where.size])
    run_rank = run_start - group_start[run_start] + (run_length + 1) / 2.0
    ranks[where[order]] = np.repeat(run_rank, run_length)
    return ranks


def _constant(values: np.ndarray, present: np.ndarray, groups: Groups) -> np.ndarray:
    """Per group: every present value equal (exactly), or fewer than one present."""
    high = np.full(groups.count, -np.inf)
    low = np.full(groups.count, np.inf)
    codes, data = groups.codes[present], values[present]
    np.maximum.at(high, codes, data)
    np.minimum.at(low, codes, data)
    return ~(high > low)


def _pearson(x: np.ndarray, y: np.ndarray, present: np.ndarray, groups: Groups) -> np.ndarray:
    """Pearson's r within every group over the present replies: each side centred within its groups and
    scaled by a power of two first (stats/centred.py), so that r is exact for values of any finite scale."""
    codes = groups.codes[present]
    centred_x = centred_within_groups(x[present], codes, groups.count)
    centred_y = centred_within_groups(y[present], codes, groups.count)
    return group_pearson(centred_x, centred_y, codes, groups.count)


def _kendall(human: np.ndarray, metric: np.ndarray, present: np.ndarray, groups: Groups) -> np.ndarray:
    """Kendall's tau-b within every group: (C - D) / sqrt((N - T_h)(N - T_m)) from enumerated pairs for
    small groups, scipy for large ones."""
    sizes = groups.sizes(present)
    result = np.full(groups.count, np.nan)
    small = present & (sizes[groups.codes] <= SMALL_GROUP)
    pairs = within_group_pairs(groups, small)
    if pairs.count:
        dh = np.sign(human[pairs.first] - human[pairs.second])
        dm = np.sign(metric[pairs.first] - metric[pairs.second])
        total = np.bincount(pairs.group, minlength=groups.count).astype(np.float64)
        score = np.bincount(pairs.group, dh * dm, groups.count)
        tied_h = np.bincount(pairs.group, (dh == 0).astype(np.float64), groups.count)
        tied_m = np.bincount(pairs.group, (dm == 0).astype(np.float64), groups.count)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = score / np.sqrt((total - tied_h) * (total - tied_m))
        has_pairs = total > 0
        result[has_pairs] = tau[has_pairs]
    for group in np.flatnonzero(sizes > SMALL_GROUP):
        members = present & (groups.codes == group)
        statistic = scipy_stats.kendalltau(human[members], metric[members]).statistic
        result[group] = float(statistic)
    return result


def _bootstrap(
    tables: dict[Coefficient, list[GroupCorrelations]], count: int, resamples: int, seed: int
) -> dict[Coefficient, np.ndarray]:
    """Per coefficient, (metrics x resamples): the mean of the drawn groups' coefficients, each weighted by how
    often it was drawn; NaN where a resample drew no usable group. Every coefficient sees the same resamples,
    drawn once, and its own product (the same as when it is bootstrapped alone)."""
    if resamples <= 0:
        return {}
    sums = {
        coefficient: (
            np.stack([np.where(table.used, table.values, 0.0) for table in per_group], axis=1),
            np.stack([table.used for table in per_group], axis=1).astype(np.float64),
        )
        for coefficient, per_group in tables.items()
        if per_group
    }
    draws = {
        coefficient: np.full((values.shape[1], resamples), np.nan)
        for coefficient, (values, _) in sums.items()
    }
    # The coefficients usually use the same groups (a group's reasons do not depend on the coefficient): the
    # drawn number of used groups is then one product for all of them.
    distinct: list[np.ndarray] = []
    used_of: dict[Coefficient, int] = {}
    for coefficient, (_, used) in sums.items():
        index = next((i for i, seen in enumerate(distinct) if np.array_equal(seen, used)), len(distinct))
        if index == len(distinct):
            distinct.append(used)
        used_of[coefficient] = index
    done = 0
    for block in Resamples(n=count, count=resamples, seed=seed, keep=True).blocks():
        drawn_used = [block @ used for used in distinct]
        for coefficient, (values, _) in sums.items():
            with np.errstate(invalid="ignore", divide="ignore"):
                draws[coefficient][:, done : done + block.shape[0]] = (
                    (block @ values) / drawn_used[used_of[coefficient]]
                ).T
        done += block.shape[0]
    return draws

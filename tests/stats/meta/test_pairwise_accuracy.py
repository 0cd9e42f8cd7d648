"""Pairwise accuracy and tie calibration against mt-metrics-eval's test vectors (tau_optimization_test.py,
stats_test.py), counts done by hand, a plain-Python enumeration of pairs and thresholds, and brute-force
bootstraps."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pytest

from stats.bootstrap import Resamples, percentile_interval
from stats.meta.groups import Groups, within_group_pairs
from stats.meta.pairwise_accuracy import (
    FEWER_THAN_TWO_SYSTEMS,
    FIXED,
    NO_CONTEXT_PAIR,
    RECALIBRATED,
    PairwiseAccuracy,
    TieCalibration,
    TieCounts,
    agreement,
    calibrate_ties,
    reply_pairwise_accuracy,
    system_pairwise_accuracy,
)

NAN = math.nan


def _rows(
    human: Sequence[Sequence[float | None]], metric: Sequence[Sequence[float | None]]
) -> tuple[np.ndarray, np.ndarray, Groups]:
    """mt-metrics-eval's row matrices (None: missing) in the long form, one group per row."""
    h = np.array([NAN if v is None else v for row in human for v in row], dtype=float)
    m = np.array([NAN if v is None else v for row in metric for v in row], dtype=float)
    groups = Groups.of([row for row, values in enumerate(human) for _ in values])
    return h, m, groups


def _calibration(
    human: Sequence[Sequence[float | None]], metric: Sequence[Sequence[float | None]]
) -> tuple[PairwiseAccuracy, TieCalibration]:
    h, m, groups = _rows(human, metric)
    result = reply_pairwise_accuracy(h, m, groups, resamples=0)[0]
    pairs = within_group_pairs(groups, np.isfinite(h) & np.isfinite(m))
    table = calibrate_ties(h[pairs.first] - h[pairs.second], m[pairs.first] - m[pairs.second], pairs.group)
    return result, table


def test_tau_optimization_zero_threshold_is_best() -> None:
    """tau_optimization_test.py: metric [0, 2, 6, 8], human [1, 2, 3, 4]."""
    result, table = _calibration([[1, 2, 3, 4]], [[0, 2, 6, 8]])
    assert table.thresholds.tolist() == [0, 2, 4, 6, 8]
    assert table.accuracies.tolist() == pytest.approx([6 / 6, 4 / 6, 3 / 6, 1 / 6, 0 / 6], abs=1e-15)
    assert (table.epsilon, table.accuracy) == (0, 1.0)
    assert (result.epsilon, result.value) == (0, 1.0)


def test_tau_optimization_nonzero_threshold_is_best() -> None:
    """tau_optimization_test.py: human [1, 1, 1, 4]: best epsilon 4 with acc_eq 4/6."""
    result, table = _calibration([[1, 1, 1, 4]], [[0, 2, 6, 8]])
    assert table.thresholds.tolist() == [0, 2, 4, 6, 8]
    assert table.accuracies.tolist() == pytest.approx([3 / 6, 3 / 6, 4 / 6, 4 / 6, 3 / 6], abs=1e-15)
    assert table.epsilon == 4
    assert result.value == pytest.approx(4 / 6, abs=1e-15)


def test_tau_optimization_regression_example_with_missing_cells() -> None:
    """tau_optimization_test.py, test_regression_example: 5 x 5 matrices with None, averaged over rows."""
    metric: list[list[float | None]] = [
        [0, 5, 2, 3, 2],
        [None, 2, 1, 5, 3],
        [9, 1, 5, 3, 8],
        [9, 3, 4, 4, 1],
        [None, None, None, None, None],
    ]
    human: list[list[float | None]] = [
        [1, 5, 2, 1, 1],
        [4, 2, 2, 1, 4],
        [5, 9, 2, 8, 7],
        [7, 6, None, 3, 2],
        [None, None, None, None, None],
    ]
    result, table = _calibration(human, metric)
    assert table.thresholds.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    expected = [
        0.4666666666666667,
        0.4916666666666668,
        0.38333333333333347,
        0.29166666666666674,
        0.2666666666666667,
        0.2,
        0.15833333333333335,
        0.15833333333333335,
        0.1166666666666667,
    ]
    assert table.accuracies.tolist() == pytest.approx(expected, abs=1e-12)
    assert table.epsilon == 1
    assert result.value == pytest.approx(0.4916666666666668, abs=1e-12)
    assert result.groups == 4  # the all-None row has no pair


def test_stats_test_kendall_variants_acc23() -> None:
    """stats_test.py: gold [1, 2, 2, 3, 4], metric [2, 1, 1.5, 5, 3]: acc23 0.6, with epsilon 2 0.4, and
    KendallWithTiesOpt 0.7 (epsilon 0.5, worked out by hand: C 6, D 2, T_m 1, T_hm 1)."""
    one = Groups.single(5)
    human, metric = np.array([1.0, 2, 2, 3, 4]), np.array([2.0, 1, 1.5, 5, 3])
    fixed = reply_pairwise_accuracy(human, metric, one, tie_calibration=False, resamples=0)[0]
    assert fixed.value == pytest.approx(0.6)
    assert fixed.counts == TieCounts(concordant=6, discordant=3, ties_human=1, ties_metric=0, ties_both=0)
    wide = reply_pairwise_accuracy(human, metric, one, tie_calibration=False, epsilon=2.0, resamples=0)[0]
    assert wide.value == pytest.approx(0.4)
    best = reply_pairwise_accuracy(human, metric, one, resamples=0)[0]
    assert best.value == pytest.approx(0.7)
    assert best.epsilon == 0.5
    assert best.counts == TieCounts(concordant=6, discordant=2, ties_human=0, ties_metric=1, ties_both=1)
    assert best.accuracy_at_zero == pytest.approx(0.6)


def test_stats_test_kendall_variants_23_counts() -> None:
    """stats_test.py testKendallVariants_23 / ...WithPositiveEpsilon: gold [1,1,1,2,2,3,4], metric
    [1,1,2,2,4,3,3]. At epsilon 0: C 13, D 2, T_h 3, T_m 2, T_hm 1, acc = 14/21 (tau_23 = 7/21). At epsilon 1
    (counted pair by pair by hand): C 7, D 0, T_h 1, T_m 10, T_hm 3: tau_23 = -1/21 as published, acc = 10/21."""
    one = Groups.single(7)
    human, metric = np.array([1.0, 1, 1, 2, 2, 3, 4]), np.array([1.0, 1, 2, 2, 4, 3, 3])
    zero = reply_pairwise_accuracy(human, metric, one, tie_calibration=False, resamples=0)[0]
    assert zero.counts == TieCounts(13, 2, 3, 2, 1)
    assert zero.value == pytest.approx(14 / 21)
    one_wide = reply_pairwise_accuracy(human, metric, one, tie_calibration=False, epsilon=1.0, resamples=0)[0]
    counts = one_wide.counts
    assert counts == TieCounts(7, 0, 1, 10, 3)
    assert counts is not None
    tau_23 = (
        counts.concordant + counts.ties_both - counts.discordant - counts.ties_human - counts.ties_metric
    ) / 21
    assert tau_23 == pytest.approx(-1 / 21)
    assert one_wide.value == pytest.approx(10 / 21)


def test_stats_test_agreement_is_accuracy_at_zero() -> None:
    """stats_test.py testAgreement: gold [1, 2, 3, 3, 4], metric [1, 1, 2, 1, 2]: 5 of 10 pairs agree."""
    result = reply_pairwise_accuracy(
        np.array([1.0, 2, 3, 3, 4]),
        np.array([1.0, 1, 2, 1, 2]),
        Groups.single(5),
        tie_calibration=False,
        resamples=0,
    )[0]
    assert result.value == pytest.approx(0.5)
    assert result.pairs == 10


def _plain_accuracy(pairs: list[tuple[float, float, int]], epsilon: float) -> float:
    """acc_eq by enumeration: (human diff, metric diff, group) per pair; averaged per group, then over groups."""
    by_group: dict[int, list[int]] = {}
    for dh, dm, group in pairs:
        agree = dh == 0 if abs(dm) <= epsilon else (dh > 0 and dm > 0) or (dh < 0 and dm < 0)
        by_group.setdefault(group, []).append(int(agree))
    return sum(sum(v) / len(v) for v in by_group.values()) / len(by_group)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_calibration_equals_a_plain_search_over_every_threshold(seed: int) -> None:
    rng = np.random.default_rng(seed)
    contexts = Groups.of(list(np.repeat(np.arange(30), rng.integers(1, 6, 30))))
    n = contexts.n
    human = rng.integers(1, 4, n).astype(float)
    metric = np.where(rng.random(n) < 0.4, 0.0, np.round(rng.random(n), 1))  # exact zeros and ties
    result = reply_pairwise_accuracy(human, metric, contexts, resamples=0)[0]
    pairs = [
        (human[i] - human[j], metric[i] - metric[j], int(contexts.codes[i]))
        for i, j in itertools.combinations(range(n), 2)
        if contexts.codes[i] == contexts.codes[j]
    ]
    candidates = sorted({0.0} | {abs(dm) for _, dm, _ in pairs})
    accuracies = [_plain_accuracy(pairs, eps) for eps in candidates]
    best = max(accuracies)
    first_best = candidates[next(i for i, a in enumerate(accuracies) if a >= best - 1e-12)]
    assert result.value == pytest.approx(best, abs=1e-12)
    assert result.epsilon == first_best
    assert result.pairs == len(pairs)


def test_system_level_accuracy_by_hand() -> None:
    """Three systems, human means 1, 2, 3; metric means 0.1, 0.3, 0.2: pairs (1,2) agree, (1,3) agree, (2,3)
    disagree: Kocmi's accuracy 2/3."""
    systems = Groups.of(["a", "a", "b", "b", "c", "c"])
    human = np.array([1.0, 1, 2, 2, 3, 3])
    metric = np.array([0.1, 0.1, 0.2, 0.4, 0.1, 0.3])
    result = system_pairwise_accuracy(human, metric, systems, resamples=0)[0]
    assert result.value == pytest.approx(2 / 3)
    assert result.systems == 3
    assert result.pairs == 3


def test_system_level_accuracy_with_tie_calibration_counts_human_ties() -> None:
    """Human means 1, 1, 2 (a tie); metric means 0.50, 0.51, 0.9: at epsilon 0 the tied pair disagrees (2/3);
    a tie threshold of 0.01 ties it in both (3/3)."""
    systems = Groups.of(["a", "b", "c"])
    result = system_pairwise_accuracy(
        np.array([1.0, 1, 2]), np.array([0.50, 0.51, 0.9]), systems, tie_calibration=True, resamples=0
    )[0]
    assert result.accuracy_at_zero == pytest.approx(2 / 3)
    assert result.value == pytest.approx(1.0)
    assert result.epsilon == pytest.approx(0.01)


def test_notes_when_accuracy_is_not_computable() -> None:
    one_system = system_pairwise_accuracy(np.array([1.0, 2]), np.array([0.1, 0.2]), Groups.of(["a", "a"]))[0]
    assert one_system.value is None
    assert one_system.note == FEWER_THAN_TWO_SYSTEMS
    lonely = reply_pairwise_accuracy(
        np.array([1.0, 2, 3]), np.array([0.1, 0.2, 0.3]), Groups.of(["x", "y", "z"])
    )[0]
    assert lonely.value is None
    assert lonely.note == NO_CONTEXT_PAIR
    missing = reply_pairwise_accuracy(
        np.array([1.0, 2, 3, 4]), np.array([0.1, NAN, 0.3, NAN]), Groups.of(["x", "x", "y", "y"])
    )[0]
    assert missing.note == NO_CONTEXT_PAIR


@pytest.mark.parametrize("recalibrate", [True, False])
def test_the_reply_level_interval_is_the_bootstrap_over_contexts(
    recalibrate: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each resample recomputed by brute force from the drawn contexts (and, when recalibrating, by a plain
    search over that resample's thresholds)."""
    import stats.meta.pairwise_accuracy as module

    monkeypatch.setattr(module, "RECALIBRATE_CELLS", 10**9 if recalibrate else 0)
    rng = np.random.default_rng(4)
    contexts = Groups.of(list(np.repeat(np.arange(12), 4)))
    human = rng.integers(1, 4, contexts.n).astype(float)
    metric = np.round(human * 0.2 + rng.normal(0, 0.3, contexts.n), 1)
    result = reply_pairwise_accuracy(human, metric, contexts, resamples=60, seed=3)[0]
    assert result.ci_method == (RECALIBRATED if recalibrate else FIXED)
    by_context: dict[int, list[tuple[float, float]]] = {}
    for i, j in itertools.combinations(range(contexts.n), 2):
        if contexts.codes[i] == contexts.codes[j]:
            by_context.setdefault(int(contexts.codes[i]), []).append(
                (human[i] - human[j], metric[i] - metric[j])
            )
    draws = []
    for drawn in Resamples(n=contexts.count, count=60, seed=3).indices():
        pairs = [(dh, dm, copy) for copy, c in enumerate(drawn) for dh, dm in by_context[int(c)]]
        if recalibrate:
            candidates = sorted({0.0} | {abs(dm) for _, dm, _ in pairs})
            draws.append(max(_plain_accuracy(pairs, eps) for eps in candidates))
        else:
            assert result.epsilon is not None
            draws.append(_plain_accuracy(pairs, result.epsilon))
    expected = percentile_interval(np.array(draws))
    assert expected is not None
    assert result.ci is not None
    assert result.ci == pytest.approx(expected, abs=1e-12)


def test_the_system_level_interval_resamples_contexts() -> None:
    rng = np.random.default_rng(9)
    contexts = Groups.of(list(np.repeat(np.arange(25), 4)))
    systems = Groups.of([f"s{i % 4}" for i in range(100)])
    human = rng.normal(size=100) + 0.3 * (systems.codes == 0)
    metric = human + rng.normal(0, 1, 100)
    result = system_pairwise_accuracy(human, metric, systems, contexts=contexts, resamples=50, seed=2)[0]
    draws = []
    for drawn in Resamples(n=contexts.count, count=50, seed=2).indices():
        rows = np.concatenate([np.flatnonzero(contexts.codes == c) for c in drawn])
        h = np.array([human[rows][systems.codes[rows] == s].mean() for s in range(4)])
        m = np.array([metric[rows][systems.codes[rows] == s].mean() for s in range(4)])
        agree = [np.sign(h[i] - h[j]) == np.sign(m[i] - m[j]) for i, j in itertools.combinations(range(4), 2)]
        draws.append(float(np.mean(agree)))
    expected = percentile_interval(np.array(draws))
    assert expected is not None
    assert result.ci == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_calibration_with_the_tables_groups_and_order_is_the_same(seed: int) -> None:
    """A metric's pairs keep their groups' index and their order by |metric difference| for the calibration,
    the accuracies and the bootstrap: the calibration given them equals the one that finds them itself, on
    contexts of 1 to 5 replies with tied human scores and a metric with many ties."""
    from stats.meta.pairwise_accuracy import _PairTable

    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=80)
    context = np.repeat(np.arange(sizes.size), sizes)
    human = rng.integers(1, 4, context.size).astype(np.float64)
    metric = np.round(rng.normal(size=context.size), 1)
    groups = Groups.of(list(context))
    table = _PairTable.of(human, metric, within_group_pairs(groups))
    alone = calibrate_ties(table.human_diff, table.metric_diff, table.pairs.group)
    given = table.calibration()
    assert given.epsilon == alone.epsilon
    assert given.accuracy == alone.accuracy
    np.testing.assert_array_equal(given.thresholds, alone.thresholds)
    np.testing.assert_array_equal(given.accuracies, alone.accuracies)
    assert int(table.dense.max()) + 1 == np.unique(table.pairs.group).size
    agree = agreement(table.human_diff, table.metric_diff, alone.epsilon)
    by_loop = [agree[table.pairs.group == g].mean() for g in np.unique(table.pairs.group)]
    assert table.accuracy(alone.epsilon) == pytest.approx(float(np.mean(by_loop)), abs=1e-15)

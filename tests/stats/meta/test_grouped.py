"""Grouped correlations against mt-metrics-eval's published test vectors, hand-computed cases, scipy group by
group, and a brute-force bootstrap over groups."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.bootstrap import Resamples, percentile_interval
from stats.meta.grouped import (
    HUMAN_CONSTANT,
    METRIC_CONSTANT,
    REASONS,
    TOO_FEW,
    Coefficient,
    group_correlations,
    group_ranks,
    grouped_coefficients,
    grouped_correlations,
)
from stats.meta.groups import Groups, pair_count, within_group_pairs


def _mtme_layout(num_sys: int, size: int) -> tuple[Groups, Groups]:
    """mt-metrics-eval packs a systems x items matrix row by row: reply i is system i // items, item i % items."""
    items = size // num_sys
    return Groups.of([i // items for i in range(size)]), Groups.of([i % items for i in range(size)])


def _value(
    human: Sequence[float], metric: Sequence[float], groups: Groups, coefficient: Coefficient
) -> float | None:
    return grouped_correlations(
        np.array(human, dtype=float),
        np.array(metric, dtype=float),
        groups,
        coefficient=coefficient,
        resamples=0,
    )[0].value


# mt-metrics-eval stats_test.py, CorrelationTest: Correlation(2, [1..6], [2, 1, 4, 3, 3, 7]).
GOLD, METRIC = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 3, 7]


@pytest.mark.parametrize(
    ("coefficient", "none", "by_system", "by_item"),
    [("pearson", 0.776, 0.760, 1.0), ("kendall", 0.552, 0.575, 1.0)],
)
def test_mt_metrics_eval_correlation_vectors(
    coefficient: Coefficient, none: float, by_system: float, by_item: float
) -> None:
    systems, items = _mtme_layout(2, 6)
    assert _value(GOLD, METRIC, Groups.single(6), coefficient) == pytest.approx(none, abs=5e-4)
    assert _value(GOLD, METRIC, systems, coefficient) == pytest.approx(by_system, abs=5e-4)
    assert _value(GOLD, METRIC, items, coefficient) == pytest.approx(by_item, abs=5e-4)


def test_mt_metrics_eval_item_average_with_a_missing_human_score() -> None:
    """stats_test.py, WilliamsSigDiffTest.testSigDiffWithAvgAndNones: gold [1, None, 3, 4, 5, 6] over 3 systems,
    item-averaged Pearson of metric1 0.982 and of metric2 0.933 (item 2's metric1 is constant: dropped)."""
    gold = [1, math.nan, 3, 4, 5, 6]
    _, items = _mtme_layout(3, 6)
    metric1 = grouped_correlations(np.array(gold), np.array([1.0, 2, 3, 3, 7, 3]), items, resamples=0)[0]
    metric2 = grouped_correlations(np.array(gold), np.array([2.0, 1, 2, 6, 8, 8]), items, resamples=0)[0]
    assert metric1.value == pytest.approx(0.982, abs=5e-4)
    assert metric1.groups == 1
    assert metric1.left_out == {TOO_FEW: 0, HUMAN_CONSTANT: 0, METRIC_CONSTANT: 1}
    assert metric2.value == pytest.approx(0.933, abs=5e-4)
    assert metric2.groups == 2


def test_mt_metrics_eval_average_by_item_with_missing_entries() -> None:
    """AverageCorrelationTest.testAverageByItemWithMissingEntries: items (1, 4)/(2, 3) and (3, 6)/(8, 6); the
    middle item has one human score left. Pearson of two points is +1 and -1: the mean is exactly 0."""
    _, items = _mtme_layout(2, 6)
    result = grouped_correlations(
        np.array([1, math.nan, 3, 4, 5, 6]), np.array([2.0, 1, 8, 3, 5, 6]), items, resamples=0
    )[0]
    assert result.value == pytest.approx(0.0, abs=1e-12)
    assert result.groups == 2
    assert result.left_out[TOO_FEW] == 1


def test_mt_metrics_eval_nan_handling_drops_the_constant_system() -> None:
    """AverageCorrelationTest.testNaNHandling: the first system's metric is constant, the second correlates
    perfectly: 1.0 (NaNs removed, not replaced by zeros)."""
    systems, _ = _mtme_layout(2, 6)
    result = grouped_correlations(np.arange(1.0, 7.0), np.array([2.0, 2, 2, 4, 5, 6]), systems, resamples=0)[
        0
    ]
    assert result.value == pytest.approx(1.0)
    assert result.left_out[METRIC_CONSTANT] == 1


def test_a_hand_computed_case() -> None:
    """Two contexts of three replies, worked out by hand. Context a: human (1, 2, 3), metric (1, 3, 2): Pearson
    0.5, Spearman 0.5, Kendall 1/3. Context b: human (2, 2, 4), metric (0, 1, 5): centred human (-2/3, -2/3,
    4/3), centred metric (-2, -1, 3): sxy = 4/3 + 2/3 + 4 = 6, sxx = 24/9, syy = 14, r = 6 / sqrt(24/9 * 14)."""
    groups = Groups.of(["a", "a", "a", "b", "b", "b"])
    human = [1.0, 2, 3, 2, 2, 4]
    metric = [1.0, 3, 2, 0, 1, 5]
    r_b = 6 / math.sqrt(24 / 9 * 14)
    assert _value(human, metric, groups, "pearson") == pytest.approx((0.5 + r_b) / 2, abs=1e-14)
    # Spearman b: human ranks (1.5, 1.5, 3), metric ranks (1, 2, 3): centred (-.5, -.5, 1) and (-1, 0, 1):
    # sxy = 1.5, sxx = 1.5, syy = 2: rho = 1.5 / sqrt(3) = 0.8660254.
    assert _value(human, metric, groups, "spearman") == pytest.approx(
        (0.5 + 1.5 / math.sqrt(3)) / 2, abs=1e-14
    )
    # Kendall b: pairs (1,2) tied in human, (1,3) and (2,3) concordant: (2 - 0) / sqrt((3 - 1)(3 - 0)).
    assert _value(human, metric, groups, "kendall") == pytest.approx(
        (1 / 3 + 2 / math.sqrt(6)) / 2, abs=1e-14
    )


def _study(seed: int, contexts: int, replies: int) -> tuple[np.ndarray, np.ndarray, Groups, Groups]:
    rng = np.random.default_rng(seed)
    n = contexts * replies
    truth = rng.normal(size=n)
    human = np.round(truth + rng.normal(0, 0.7, n))  # integer scores: many ties
    metrics = np.stack(
        [
            truth + rng.normal(0, 1, n),
            np.round(truth + rng.normal(0, 1, n), 0),  # ties
            np.where(rng.random(n) < 0.6, 0.0, rng.random(n)),  # mostly zeros, like sentence BLEU
        ],
        axis=1,
    )
    metrics[rng.choice(n, n // 8, replace=False), 0] = np.nan
    human[rng.choice(n, n // 20, replace=False)] = np.nan
    ctx = Groups.of(list(np.repeat(np.arange(contexts), replies)))
    sys_ = Groups.of([f"s{i % replies}" for i in range(n)])
    return human, metrics, ctx, sys_


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
@pytest.mark.parametrize("grouping", ["context", "system"])
def test_every_group_equals_scipy(coefficient: Coefficient, grouping: str) -> None:
    human, metrics, contexts, systems = _study(3, 60, 5)
    groups = contexts if grouping == "context" else systems
    function = {
        "pearson": scipy_stats.pearsonr,
        "spearman": scipy_stats.spearmanr,
        "kendall": scipy_stats.kendalltau,
    }[coefficient]
    results = grouped_correlations(human, metrics, groups, coefficient=coefficient, resamples=0)
    for column, result in enumerate(results):
        values, reasons = [], {TOO_FEW: 0, HUMAN_CONSTANT: 0, METRIC_CONSTANT: 0}
        for group in range(groups.count):
            keep = (groups.codes == group) & np.isfinite(human) & np.isfinite(metrics[:, column])
            x, y = human[keep], metrics[keep, column]
            if x.size < 2:
                reasons[TOO_FEW] += 1
            elif np.all(x == x[0]):
                reasons[HUMAN_CONSTANT] += 1
            elif np.all(y == y[0]):
                reasons[METRIC_CONSTANT] += 1
            else:
                values.append(float(function(x, y)[0]))
        assert result.groups == len(values)
        assert result.left_out == reasons
        assert result.groups + sum(result.left_out.values()) == groups.count
        assert result.value == pytest.approx(float(np.mean(values)), abs=1e-12)


def test_group_ranks_equal_rankdata_per_group() -> None:
    rng = np.random.default_rng(5)
    groups = Groups.of(list(rng.integers(0, 7, 200)))
    values = rng.integers(0, 4, 200).astype(float)
    present = rng.random(200) < 0.9
    ranks = group_ranks(values, present, groups)
    for group in range(groups.count):
        keep = (groups.codes == group) & present
        np.testing.assert_array_equal(ranks[keep], scipy_stats.rankdata(values[keep]))
    assert np.all(np.isnan(ranks[~present]))


def test_within_group_pairs_are_every_pair_once() -> None:
    rng = np.random.default_rng(6)
    groups = Groups.of(list(rng.integers(0, 9, 80)))
    present = rng.random(80) < 0.8
    pairs = within_group_pairs(groups, present)
    expected = {
        (i, j)
        for i in range(80)
        for j in range(i + 1, 80)
        if present[i] and present[j] and groups.codes[i] == groups.codes[j]
    }
    found = set(zip(pairs.first.tolist(), pairs.second.tolist(), strict=True))
    assert found == expected
    assert pairs.count == len(expected) == pair_count(groups, present)
    assert np.all(groups.codes[pairs.first] == pairs.group)


def test_the_interval_is_the_percentile_bootstrap_over_groups() -> None:
    """Every resample recomputed by brute force: the drawn groups' correlations (each as often as drawn)
    averaged, over the very draws of Resamples."""
    human, metrics, contexts, _ = _study(7, 40, 4)
    result = grouped_correlations(human, metrics, contexts, coefficient="spearman", resamples=200, seed=11)
    per_group = []
    for column in range(metrics.shape[1]):
        values = np.full(contexts.count, np.nan)
        for group in range(contexts.count):
            keep = (contexts.codes == group) & np.isfinite(human) & np.isfinite(metrics[:, column])
            x, y = human[keep], metrics[keep, column]
            if x.size >= 2 and not np.all(x == x[0]) and not np.all(y == y[0]):
                values[group] = scipy_stats.spearmanr(x, y)[0]
        per_group.append(values)
    for column, values in enumerate(per_group):
        draws = []
        for drawn in Resamples(n=contexts.count, count=200, seed=11).indices():
            chosen = values[drawn]
            chosen = chosen[np.isfinite(chosen)]
            draws.append(chosen.mean() if chosen.size else np.nan)
        expected = percentile_interval(np.array(draws))
        assert expected is not None
        assert result[column].ci is not None
        assert result[column].ci == pytest.approx(expected, abs=1e-12)


def test_several_coefficients_at_once_are_each_as_alone() -> None:
    """grouped_coefficients draws the resamples once for every coefficient: the same values and intervals as
    grouped_correlations of each coefficient on its own, to the last bit."""
    human, metrics, contexts, _ = _study(9, 40, 4)
    together = grouped_coefficients(human, metrics, contexts, resamples=150, seed=4)
    assert list(together) == ["pearson", "spearman", "kendall"]
    for coefficient, results in together.items():
        alone = grouped_correlations(human, metrics, contexts, coefficient=coefficient, resamples=150, seed=4)
        assert results == alone
        assert all(result.ci is not None for result in results)


def test_notes_when_nothing_can_be_computed() -> None:
    groups = Groups.of(["a", "b", "c"])  # one reply per context
    result = grouped_correlations(np.array([1.0, 2, 3]), np.array([1.0, 2, 4]), groups)[0]
    assert result.value is None
    assert result.note.startswith("not computable")
    assert result.left_out[TOO_FEW] == 3
    assert result.ci is None


def test_grouping_none_is_the_flat_correlation_without_an_interval() -> None:
    human, metrics, _, _ = _study(8, 30, 3)
    keep = np.isfinite(human) & np.isfinite(metrics[:, 0])
    result = grouped_correlations(human, metrics, Groups.single(human.size))[0]
    assert result.value == pytest.approx(scipy_stats.pearsonr(human[keep], metrics[keep, 0])[0], abs=1e-13)
    assert result.ci is None


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_groups_all_too_small_are_left_out_as_the_general_path_leaves_them(coefficient: Coefficient) -> None:
    """Contexts of one reply (a system's replies by context), some without a human or metric score: the quick
    answer when no group has two replies is what the general path gives those groups beside a usable one."""
    rng = np.random.default_rng(7)
    n = 40
    human, metric = rng.normal(size=n), np.round(rng.normal(size=n), 1)
    human[[3, 9]] = np.nan
    metric[[4, 9, 17]] = np.nan
    alone = group_correlations(human, metric, Groups.of(list(range(n))), coefficient)
    assert set(alone.reasons) == {TOO_FEW}
    assert np.isnan(alone.values).all()
    # The same replies beside a group of three usable replies (general path).
    with_usable = group_correlations(
        np.r_[human, 1.0, 2.0, 3.0],
        np.r_[metric, 0.3, 0.1, 0.2],
        Groups.of([*range(n), n, n, n]),
        coefficient,
    )
    assert with_usable.reasons[:n] == alone.reasons
    assert alone.left_out == {reason: alone.reasons.count(reason) for reason in REASONS}
    assert with_usable.left_out == {reason: with_usable.reasons.count(reason) for reason in REASONS}
    np.testing.assert_array_equal(with_usable.values[:n], alone.values)
    assert with_usable.reasons[n] == ""


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_the_human_side_shared_across_metrics_changes_nothing(coefficient: Coefficient) -> None:
    """Several metrics, some with missing scores (other sets of present replies), a metric constant in a
    context, tied and constant human scores: every metric's per-group values and reasons with the human side
    shared across the metrics are those computed for the metric alone, to the bit."""
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 7, size=50)
    context = np.repeat(np.arange(sizes.size), sizes)
    n = context.size
    human = rng.integers(1, 4, n).astype(np.float64)
    human[rng.choice(n, 4, replace=False)] = np.nan
    metrics = np.stack([np.round(rng.normal(size=n), 1), rng.normal(size=n), rng.normal(size=n)], axis=1)
    metrics[rng.choice(n, 6, replace=False), 1] = np.nan
    metrics[context == 2, 2] = 0.25
    groups = Groups.of(list(context))
    shared: dict = {}
    for column in range(3):
        alone = group_correlations(human, metrics[:, column], groups, coefficient)
        with_shared = group_correlations(human, metrics[:, column], groups, coefficient, shared)
        assert with_shared.reasons == alone.reasons
        np.testing.assert_array_equal(with_shared.values, alone.values)
        # the counts by reason are those of the reasons (the metric constant in context 2 is among them)
        assert alone.left_out == {reason: alone.reasons.count(reason) for reason in REASONS}
        assert with_shared.left_out == alone.left_out
    assert len(shared) == 2  # two sets of present replies

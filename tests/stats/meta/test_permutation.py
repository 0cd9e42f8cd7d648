"""The permutation tests: observed differences against mt-metrics-eval's PermutationSigDiffTest, and every
swapped statistic against a plain loop that swaps the scores itself and recomputes with scipy, on the very
same masks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.meta.groups import Groups, within_group_pairs
from stats.meta.permutation import (
    EarlyStop,
    Grouping,
    Layout,
    Scheme,
    Statistic,
    StatisticName,
    permutation_tests,
    swap_masks,
)
from tests.stats.meta.cluster_inputs import permutation_p_values

# mt-metrics-eval stats_test.py, PermutationSigDiffTest: 4 systems x 2 items, packed by system.
GOLD = np.array([1.0, 2, 3, 4, 5, 5, 7, 8])
METRIC1 = np.array([1.0, 2, 3, 3, 7, 3, 5, 5])
METRIC2 = np.array([2.0, 1, 2, 6, 8, 8, 7, 6])
MTME_LAYOUT = Layout.of([i % 2 for i in range(8)], [i // 2 for i in range(8)])


def _mtme_average(gold: np.ndarray, metric: np.ndarray, rows: list[np.ndarray]) -> float:
    """mt-metrics-eval's AverageCorrelation(pearson): NaN correlations (a constant side) dropped."""
    values = []
    for row in rows:
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (
                np.corrcoef(gold[row], metric[row])[0, 1]
                if np.ptp(gold[row]) and np.ptp(metric[row])
                else math.nan
            )
        if not math.isnan(r):
            values.append(r)
    return float(np.mean(values))


@pytest.mark.parametrize("grouping", ["none", "system", "context"])
def test_observed_delta_is_mt_metrics_eval_delta(grouping: Grouping) -> None:
    """PermutationSigDiffTest: delta = corr(metric2) - corr(metric1), flat ('none'), by system ('sys') and by
    item ('item'), NaN correlations dropped."""
    rows = {
        "none": [np.arange(8)],
        "system": [np.array([2 * s, 2 * s + 1]) for s in range(4)],
        "context": [np.arange(0, 8, 2), np.arange(1, 8, 2)],
    }[grouping]
    expected = _mtme_average(GOLD, METRIC2, rows) - _mtme_average(GOLD, METRIC1, rows)
    result = permutation_tests(
        GOLD,
        np.stack([METRIC1, METRIC2], axis=1),
        MTME_LAYOUT,
        Statistic("pearson", grouping),
        [(1, 0)],
        permutations=100,
    )[0]
    assert result.delta == pytest.approx(expected, abs=1e-12)
    assert result.p_value is not None
    assert 0 < result.p_value <= 1


def test_observed_delta_flat_pearson_is_scipy() -> None:
    result = permutation_tests(
        GOLD,
        np.stack([METRIC1, METRIC2], axis=1),
        MTME_LAYOUT,
        Statistic("pearson"),
        [(1, 0)],
        permutations=50,
    )[0]
    expected = scipy_stats.pearsonr(METRIC2, GOLD)[0] - scipy_stats.pearsonr(METRIC1, GOLD)[0]
    assert result.delta == pytest.approx(expected, abs=1e-12)


def _study(
    seed: int = 0, contexts: int = 30, systems: int = 4, degenerate: bool = False
) -> tuple[np.ndarray, np.ndarray, Layout]:
    """``degenerate``: the human scores of two contexts are constant, and so are the first metric's in a
    third, so that some groups' correlations are undefined in some permutations and not in others."""
    rng = np.random.default_rng(seed)
    n = contexts * systems
    context = np.repeat(np.arange(contexts), systems)
    system = np.tile(np.arange(systems), contexts)
    truth = rng.normal(size=n) + 0.4 * system
    human = np.round(truth + rng.normal(0, 0.6, n))
    metrics = np.stack([truth + rng.normal(0, s, n) for s in (0.8, 1.0, 1.6)], axis=1)
    metrics[rng.choice(n, 6, replace=False), 1] = np.nan  # missing cells
    if degenerate:
        human[: 2 * systems] = 3.0
        metrics[2 * systems : 3 * systems, 0] = 0.5
    return human, metrics, Layout.of(list(context), list(system))


def _ranked_by_group(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    ranks = np.empty_like(values)
    for group in np.unique(codes):
        ranks[codes == group] = scipy_stats.rankdata(values[codes == group])
    return ranks


def _z(values: np.ndarray) -> np.ndarray:
    return (values - values.mean()) / values.std()


def _plain_correlation(human: np.ndarray, metric: np.ndarray, codes: np.ndarray) -> float:
    """Pearson's r within each group (the textbook formula), averaged over the groups where it is defined."""
    values = []
    for group in np.unique(codes):
        x, y = human[codes == group], metric[codes == group]
        if x.size >= 2 and np.ptp(x) > 0 and np.ptp(y) > 1e-9:
            dx, dy = x - x.mean(), y - y.mean()
            values.append(float(dx @ dy) / math.sqrt(float(dx @ dx) * float(dy @ dy)))
    return float(np.mean(values)) if values else math.nan


@pytest.mark.parametrize("name", ["pearson", "spearman"])
@pytest.mark.parametrize("grouping", ["none", "context", "system"])
@pytest.mark.parametrize("scheme", ["both", "inputs"])
@pytest.mark.parametrize("degenerate", [False, True])
def test_swapped_correlations_equal_a_plain_loop(
    name: StatisticName, grouping: Grouping, scheme: Scheme, degenerate: bool
) -> None:
    """Within contexts the statistic is gathered from tables of swap patterns (stats/meta/swap_patterns.py),
    elsewhere computed from swapped sums: both against the plain loop, with groups that drop out or not."""
    human, metrics, layout = _study(contexts=16, degenerate=degenerate)
    first, second, permutations, seed = 0, 1, 120, 4
    result = permutation_tests(
        human,
        metrics,
        layout,
        Statistic(name, grouping),
        [(first, second)],
        scheme=scheme,
        permutations=permutations,
        seed=seed,
        early_stop=None,
    )[0]
    keep = np.isfinite(human) & np.isfinite(metrics[:, first]) & np.isfinite(metrics[:, second])
    codes_all = {
        "none": np.zeros(layout.n, int),
        "context": layout.contexts.codes,
        "system": layout.systems.codes,
    }[grouping]
    codes = codes_all[keep]
    h, a, b = human[keep], metrics[keep, first], metrics[keep, second]
    if name == "spearman":
        h, a, b = _ranked_by_group(h, codes), _ranked_by_group(a, codes), _ranked_by_group(b, codes)
    a, b = _z(a), _z(b)
    units = np.arange(layout.n)[keep] if scheme == "both" else layout.contexts.codes[keep]
    unit_count = layout.n if scheme == "both" else layout.contexts.count
    observed = _plain_correlation(h, a, codes) - _plain_correlation(h, b, codes)
    masks = swap_masks(np.random.default_rng(seed), permutations, unit_count)
    greater = 0
    for row in masks:
        swap = row[units] == 1
        delta = _plain_correlation(h, np.where(swap, b, a), codes) - _plain_correlation(
            h, np.where(swap, a, b), codes
        )
        greater += delta >= observed - 1e-12
    assert result.delta == pytest.approx(observed, abs=1e-12)
    assert result.permutations == permutations
    assert result.p_value == pytest.approx((greater + 1) / (permutations + 1), abs=1e-15)


def _plain_best_accuracy(human_diff: np.ndarray, metric_diff: np.ndarray, calibrate: bool) -> float:
    candidates = sorted({0.0} | set(np.abs(metric_diff).tolist())) if calibrate else [0.0]
    best = -1.0
    for eps in candidates:
        agree = [
            (dh == 0) if abs(dm) <= eps else (dh * dm > 0)
            for dh, dm in zip(human_diff, metric_diff, strict=True)
        ]
        best = max(best, float(np.mean(agree)))
    return best


@pytest.mark.parametrize("calibrate", [False, True])
@pytest.mark.parametrize("scheme", ["both", "inputs"])
def test_swapped_system_accuracy_equals_a_plain_loop(calibrate: bool, scheme: Scheme) -> None:
    human, metrics, layout = _study(seed=2, systems=5)
    first, second, permutations, seed = 0, 2, 120, 9
    result = permutation_tests(
        human,
        metrics,
        layout,
        Statistic("system_accuracy", tie_calibration=calibrate),
        [(first, second)],
        scheme=scheme,
        permutations=permutations,
        seed=seed,
        early_stop=None,
    )[0]
    keep = np.isfinite(human) & np.isfinite(metrics[:, first]) & np.isfinite(metrics[:, second])
    systems = layout.systems.codes[keep]
    h, a, b = human[keep], _z(metrics[keep, first]), _z(metrics[keep, second])
    pairs = list(itertools.combinations(range(5), 2))

    def accuracy(metric: np.ndarray) -> float:
        hm = [h[systems == s].mean() for s in range(5)]
        mm = [metric[systems == s].mean() for s in range(5)]
        return _plain_best_accuracy(
            np.array([hm[i] - hm[j] for i, j in pairs]),
            np.array([mm[i] - mm[j] for i, j in pairs]),
            calibrate,
        )

    observed = accuracy(a) - accuracy(b)
    units = np.arange(layout.n)[keep] if scheme == "both" else layout.contexts.codes[keep]
    unit_count = layout.n if scheme == "both" else layout.contexts.count
    greater = 0
    for row in swap_masks(np.random.default_rng(seed), permutations, unit_count):
        swap = row[units] == 1
        greater += accuracy(np.where(swap, b, a)) - accuracy(np.where(swap, a, b)) >= observed - 1e-12
    assert result.delta == pytest.approx(observed, abs=1e-12)
    assert result.p_value == pytest.approx((greater + 1) / (permutations + 1), abs=1e-15)


def test_the_pairs_test_of_reply_accuracy_equals_a_plain_loop() -> None:
    """mt-metrics-eval's PairwisePermutationSigDiff: each metric at its own calibrated epsilon, the outcome of
    each pair of replies swapped between the two metrics."""
    human, metrics, layout = _study(seed=5)
    first, second, permutations, seed = 0, 1, 200, 1
    result = permutation_tests(
        human,
        metrics,
        layout,
        Statistic("reply_accuracy"),
        [(first, second)],
        permutations=permutations,
        seed=seed,
        early_stop=None,
    )[0]
    keep = np.isfinite(human) & np.isfinite(metrics[:, first]) & np.isfinite(metrics[:, second])
    pairs = within_group_pairs(layout.contexts, keep)
    dh = human[pairs.first] - human[pairs.second]

    def outcomes(column: int) -> np.ndarray:
        dm = metrics[pairs.first, column] - metrics[pairs.second, column]
        best_eps, best = 0.0, -1.0
        for eps in sorted({0.0} | set(np.abs(dm).tolist())):
            value = _grouped_mean(np.where(np.abs(dm) <= eps, dh == 0, dh * dm > 0), pairs.group)
            if value > best + 1e-12:
                best_eps, best = eps, value
        return np.where(np.abs(dm) <= best_eps, dh == 0, dh * dm > 0).astype(float)

    oa, ob = outcomes(first), outcomes(second)
    observed = _grouped_mean(oa, pairs.group) - _grouped_mean(ob, pairs.group)
    greater = 0
    for row in swap_masks(np.random.default_rng(seed), permutations, pairs.count):
        swap = row == 1
        delta = _grouped_mean(np.where(swap, ob, oa), pairs.group) - _grouped_mean(
            np.where(swap, oa, ob), pairs.group
        )
        greater += delta >= observed - 1e-12
    assert result.delta == pytest.approx(observed, abs=1e-12)
    assert result.p_value == pytest.approx((greater + 1) / (permutations + 1), abs=1e-15)


def _grouped_mean(values: np.ndarray, groups: np.ndarray) -> float:
    return float(np.mean([values[groups == g].mean() for g in np.unique(groups)]))


def test_a_metric_against_itself_is_never_significant() -> None:
    human, metrics, layout = _study(seed=3)
    twin = np.stack([metrics[:, 0], metrics[:, 0]], axis=1)
    for statistic in (
        Statistic("pearson", "context"),
        Statistic("reply_accuracy"),
        Statistic("system_accuracy"),
    ):
        result = permutation_tests(
            human, twin, layout, statistic, [(0, 1)], permutations=100, early_stop=None
        )[0]
        assert result.delta == pytest.approx(0.0, abs=1e-12)
        assert result.p_value == pytest.approx(1.0)


def test_a_much_better_metric_is_significant_and_the_other_direction_is_not() -> None:
    rng = np.random.default_rng(8)
    n = 400
    truth = rng.normal(size=n)
    human = truth + rng.normal(0, 0.3, n)
    metrics = np.stack([truth + rng.normal(0, 0.3, n), rng.normal(size=n)], axis=1)
    layout = Layout.of(list(range(n)), ["s"] * n)
    better, worse = permutation_tests(human, metrics, layout, Statistic(), [(0, 1), (1, 0)], early_stop=None)
    assert better.p_value is not None
    assert better.p_value < 0.01
    assert worse.p_value is not None
    assert worse.p_value > 0.99
    assert better.p_two_sided == pytest.approx(worse.p_two_sided)


def test_early_stopping_stops_at_block_ends() -> None:
    human, metrics, layout = _study(seed=6)
    clear = np.stack([human + 0.01 * metrics[:, 0], metrics[:, 2]], axis=1)
    result = permutation_tests(human, clear, layout, Statistic(), [(0, 1)], early_stop=EarlyStop(block=100))[
        0
    ]
    assert result.permutations == 100  # p < 0.02 after the first block
    full = permutation_tests(human, clear, layout, Statistic(), [(0, 1)], early_stop=None)[0]
    assert full.permutations == 1000


def test_a_pair_tested_alone_or_with_others_gets_the_same_p_value() -> None:
    human, metrics, layout = _study(seed=7)
    together = permutation_tests(
        human, metrics, layout, Statistic("pearson", "context"), [(0, 1), (0, 2), (1, 2)]
    )
    alone = permutation_tests(human, metrics, layout, Statistic("pearson", "context"), [(0, 2)])[0]
    assert together[1] == alone
    lazy = permutation_p_values(human, metrics, layout, Statistic("pearson", "context"))
    assert lazy(0, 2) == alone


@pytest.mark.parametrize(
    "statistic",
    [
        Statistic("pearson", "context"),
        Statistic("spearman", "none"),
        Statistic("pearson", "system"),
        Statistic("system_accuracy"),
        Statistic("reply_accuracy"),
    ],
)
@pytest.mark.parametrize("scheme", ["both", "inputs"])
def test_a_pair_and_its_reverse_run_together_as_they_run_apart(statistic: Statistic, scheme: Scheme) -> None:
    """Both directions are counted in one run (the reverse's differences are the negated ones on the same
    masks), each with its own early stop: the same results as separate runs, pair by pair."""
    human, metrics, layout = _study(seed=9, degenerate=True)
    pairs = [(0, 1), (2, 0), (1, 0), (0, 2), (1, 2)]
    together = permutation_tests(human, metrics, layout, statistic, pairs, scheme=scheme, seed=3)
    for pair, result in zip(pairs, together, strict=True):
        alone = permutation_tests(human, metrics, layout, statistic, [pair], scheme=scheme, seed=3)[0]
        assert (result.first, result.second) == pair
        assert result == alone
    assert together[0].delta == -together[2].delta  # type: ignore[operator]


def test_notes_when_a_test_cannot_be_run() -> None:
    human = np.array([1.0, 2, 3, 4])
    metrics = np.array([[0.1, 0.3], [0.2, 0.1], [0.4, 0.2], [0.3, 0.4]])
    one_system = Layout.of(["c1", "c2", "c3", "c4"], ["s"] * 4)
    result = permutation_tests(human, metrics, one_system, Statistic("system_accuracy"), [(0, 1)])[0]
    assert result.p_value is None
    assert "fewer than 2 systems" in result.note
    no_pairs = permutation_tests(human, metrics, one_system, Statistic("reply_accuracy"), [(0, 1)])[0]
    assert no_pairs.p_value is None
    assert "no context" in no_pairs.note
    singletons = permutation_tests(human, metrics, one_system, Statistic("pearson", "context"), [(0, 1)])[0]
    assert singletons.p_value is None
    assert singletons.note.startswith("not computable")


def test_groups_layout_checks_its_inputs() -> None:
    with pytest.raises(ValueError, match="one of each per reply"):
        Layout.of(["c1"], ["s1", "s2"])
    with pytest.raises(ValueError, match="no permutation test"):
        Statistic("kendall")  # type: ignore[arg-type]
    assert Groups.of(["b", "a", "b"]).names == ("b", "a")


@pytest.mark.parametrize("scheme", ["both", "inputs"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pattern_deltas_are_the_four_column_gather_to_the_bit(scheme: Scheme, seed: int) -> None:
    """Where some group's r is undefined in some pattern, a permutation's statistic sums the r of both metrics
    and counts the defined groups from two gathers (float r, int8 flags): against the one gather of all four
    columns as floats that it replaced, bit for bit, on contexts of 1 to 5 replies with ties, constant human
    scores, a constant metric and missing scores."""
    from stats.meta.permutation.correlation_plan import CorrelationPlan, PatternTable
    from stats.meta.permutation.plan import Block
    from stats.meta.permutation.tester import plan_for

    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=60)
    context = np.repeat(np.arange(sizes.size), sizes)
    n = context.size
    system = np.concatenate([np.arange(size) for size in sizes])
    human = rng.integers(1, 4, n).astype(np.float64)
    metrics = np.stack([np.round(rng.normal(size=n), 1), rng.normal(size=n), rng.normal(size=n)], axis=1)
    metrics[context == 3, 0] = 0.5
    metrics[rng.choice(n, 5, replace=False), 2] = np.nan
    layout = Layout.of(list(context), list(system))
    for first, second in itertools.combinations(range(3), 2):
        present = np.isfinite(human) & np.isfinite(metrics[:, first]) & np.isfinite(metrics[:, second])
        plan = plan_for(human, metrics, present, layout, Statistic("pearson", "context"), scheme)
        assert isinstance(plan, CorrelationPlan)
        assert plan.patterns is not None
        table = plan.pair(first, second)
        assert isinstance(table, PatternTable)
        assert table.tables is not None
        assert table.defined is not None
        four = np.stack(
            [table.tables[:, 0], table.defined[:, 0], table.tables[:, 1], table.defined[:, 1]], axis=1
        ).astype(np.float64)
        blocks = plan.mask_blocks(seed, 40)
        for index in range(3):
            block = Block(plan, blocks, (seed, 40, index), 40)
            cells = plan.patterns.cells(blocks.bits(index, 40))
            r_a, used_a, r_b, used_b = np.take(four, cells, axis=0).sum(axis=0).T
            with np.errstate(invalid="ignore", divide="ignore"):
                expected = np.where(used_a > 0, r_a / used_a, np.nan) - np.where(
                    used_b > 0, r_b / used_b, np.nan
                )
            np.testing.assert_array_equal(plan.deltas(table, block), expected)


@pytest.mark.parametrize("grouping", ["none", "context", "system"])
def test_a_pair_without_a_reply_both_metrics_scored_gets_a_note(grouping: Grouping) -> None:
    """No reply scored by both metrics: the plan's sums are empty (integer) arrays, and the test says why."""
    human, metrics, layout = _study(contexts=6)
    metrics[: metrics.shape[0] // 2, 0] = np.nan
    metrics[metrics.shape[0] // 2 :, 1] = np.nan
    result = permutation_tests(
        human, metrics, layout, Statistic("pearson", grouping), [(0, 1)], permutations=20, early_stop=None
    )[0]
    assert result.p_value is None
    assert result.note.startswith("not computable")

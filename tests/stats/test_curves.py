"""The quantile plot's groups and the number-of-references curve."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.curves import quantile_means, reference_count_curve


def test_quantile_groups_are_equal_sized_and_ordered_by_human_score() -> None:
    human = np.array([5, 1, 4, 2, 3, 3, 1, 5, 2, 4], dtype=float)
    metric = human * 10 + np.arange(10)
    metric[3] = np.nan  # left out
    groups = quantile_means(human, metric)
    assert [g.items for g in groups] == [2, 2, 2, 2, 1]
    kept = np.isfinite(metric)
    order = np.argsort(human[kept], kind="stable")
    parts = np.array_split(order, 5)
    for group, part in zip(groups, parts, strict=True):
        assert group.human_mean == pytest.approx(human[kept][part].mean())
        assert group.metric_mean == pytest.approx(metric[kept][part].mean())
    assert [g.human_mean for g in groups] == sorted(g.human_mean for g in groups)


def test_with_all_references_the_curve_is_the_multi_reference_correlation() -> None:
    rng = np.random.default_rng(0)
    human = rng.normal(size=200)
    per_reference = 0.3 * human[:, None] + rng.normal(size=(200, 4))
    curve = reference_count_curve(human, per_reference, draws=20, seed=1)
    assert [point.references for point in curve] == [1, 2, 3, 4]
    best = per_reference.max(axis=1)
    assert curve[-1].pearson_mean == pytest.approx(scipy_stats.pearsonr(human, best).statistic)
    assert curve[-1].spearman_mean == pytest.approx(scipy_stats.spearmanr(human, best).statistic)
    assert curve[-1].pearson_sd == pytest.approx(0.0, abs=1e-12)
    # More references, closer to the max: correlation rises here because each reference is noisy.
    means = [point.pearson_mean or 0.0 for point in curve]
    assert means == sorted(means)


def test_one_reference_is_the_average_of_single_reference_correlations() -> None:
    rng = np.random.default_rng(2)
    human = rng.normal(size=300)
    per_reference = 0.3 * human[:, None] + rng.normal(size=(300, 3))
    curve = reference_count_curve(human, per_reference, draws=400, seed=3)
    singles = [scipy_stats.pearsonr(human, per_reference[:, j]).statistic for j in range(3)]
    # Each draw mixes references per reply, so its correlation is close to (not equal to) the average.
    assert curve[0].pearson_mean == pytest.approx(np.mean(singles), abs=0.03)


def test_contexts_with_fewer_references_use_all_they_have() -> None:
    human = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    per_reference = np.array([[1.0, np.nan], [2.0, 0.0], [3.0, np.nan], [5.0, 4.0], [np.nan, np.nan]])
    curve = reference_count_curve(human, per_reference, draws=10)
    assert curve[1].items == 2  # replies with two references
    assert curve[1].pearson_mean == pytest.approx(scipy_stats.pearsonr(human[:4], [1, 2, 3, 5]).statistic)

"""The shared paired bootstrap against scipy on the very same resamples, and its intervals and p-values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.bootstrap import (
    Resamples,
    bootstrap_correlations,
    paired_difference_p,
    percentile_interval,
)


def _study(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Human means of three 0-2 ratings (heavy ties) and four metrics: continuous, rounded (ties), a
    mostly-zero one like sentence BLEU, and one with missing values."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 3, size=n) + rng.choice([0.0, 1 / 3, 2 / 3], size=n)
    continuous = 0.3 * human + rng.normal(0.0, 1.0, size=n)
    rounded = np.round(0.5 * human + rng.normal(0.0, 0.5, size=n), 1)
    sparse = np.where(rng.random(n) < 0.7, 0.0, rng.random(n))
    missing = 0.2 * human + rng.normal(0.0, 0.5, size=n)
    missing[rng.choice(n, size=n // 10, replace=False)] = np.nan
    return human, np.stack([continuous, rounded, sparse, missing], axis=1)


@pytest.mark.parametrize(("seed", "n"), [(0, 12), (1, 80), (2, 400)])
def test_every_resample_equals_scipy_on_the_drawn_items(seed: int, n: int) -> None:
    human, metrics = _study(seed, n)
    resamples = Resamples(n=n, count=40, seed=seed)
    draws = bootstrap_correlations(human, metrics, resamples)
    checked = 0
    for b, idx in enumerate(resamples.indices()):
        for column in range(metrics.shape[1]):
            x, y = human[idx], metrics[idx, column]
            keep = np.isfinite(y)
            x, y = x[keep], y[keep]
            if np.ptp(x) == 0 or np.ptp(y) == 0:
                assert np.isnan(draws.pearson[column, b])
                assert np.isnan(draws.spearman[column, b])
                continue
            assert draws.pearson[column, b] == pytest.approx(scipy_stats.pearsonr(x, y).statistic, abs=1e-10)
            assert draws.spearman[column, b] == pytest.approx(
                scipy_stats.spearmanr(x, y).statistic, abs=1e-10
            )
            checked += 1
    assert checked > 100


def test_blocks_cover_every_resample_once_and_counts_sum_to_n() -> None:
    resamples = Resamples(n=50_000, count=90, seed=5)
    assert resamples.block_size < 90  # several blocks
    blocks = list(resamples.blocks())
    assert sum(block.shape[0] for block in blocks) == 90
    for block in blocks:
        assert np.all(block.sum(axis=1) == 50_000)
    by_index = np.stack([np.bincount(idx, minlength=50_000) for idx in resamples.indices()])
    assert np.array_equal(np.concatenate(blocks), by_index)


def test_kept_counts_are_the_drawn_ones_and_only_whole_draws_are_kept() -> None:
    from stats import bootstrap

    bootstrap._KEPT_COUNTS.clear()
    once = Resamples(n=30_000, count=150, seed=9)  # drawn once (a reply bootstrap): not kept
    list(once.blocks())
    assert not bootstrap._KEPT_COUNTS
    resamples = Resamples(n=30_000, count=150, seed=9, keep=True)  # several blocks
    by_index = np.stack([np.bincount(idx, minlength=30_000) for idx in resamples.indices()])
    first_block = next(iter(resamples.blocks()))  # drawn in part: nothing kept
    assert not bootstrap._KEPT_COUNTS
    assert np.array_equal(first_block, by_index[: first_block.shape[0]])
    drawn = list(resamples.blocks())
    assert list(bootstrap._KEPT_COUNTS) == [(30_000, 150, 9)]
    again = list(resamples.blocks())  # read back from what was kept
    assert [block.dtype for block in again] == [np.float64] * len(drawn)
    assert np.array_equal(np.concatenate(drawn), by_index)
    assert np.array_equal(np.concatenate(again), by_index)
    again[0][:] = -1.0  # a consumer writing into its block changes nothing kept
    assert np.array_equal(np.concatenate(list(resamples.blocks())), by_index)
    assert np.array_equal(np.concatenate(list(once.blocks())), by_index)  # the same draws, kept or not
    list(Resamples(n=30_000, count=150, seed=11).blocks())
    assert list(bootstrap._KEPT_COUNTS) == [(30_000, 150, 9)]  # a draw not to keep evicts nothing
    other = Resamples(n=30_000, count=150, seed=10, keep=True)
    assert not np.array_equal(np.concatenate(list(other.blocks())), by_index)
    assert list(bootstrap._KEPT_COUNTS) == [(30_000, 150, 10)]  # only the last draw is kept


def test_the_same_seed_gives_the_same_draws_and_another_seed_others() -> None:
    human, metrics = _study(3, 60)
    first = bootstrap_correlations(human, metrics, Resamples(60, 30, seed=1))
    again = bootstrap_correlations(human, metrics, Resamples(60, 30, seed=1))
    other = bootstrap_correlations(human, metrics, Resamples(60, 30, seed=2))
    assert np.array_equal(first.pearson, again.pearson, equal_nan=True)
    assert not np.array_equal(first.pearson, other.pearson, equal_nan=True)


def test_percentile_interval_agrees_with_scipy_bootstrap_percentile_method() -> None:
    # scipy draws its own resamples; with many of them both intervals converge to the same quantiles.
    human, metrics = _study(4, 300)
    x, y = human, metrics[:, 0]
    draws = bootstrap_correlations(x, y[:, None], Resamples(300, 4000, seed=9))
    ours = percentile_interval(draws.pearson[0])
    reference = scipy_stats.bootstrap(
        (x, y),
        lambda a, b: scipy_stats.pearsonr(a, b).statistic,
        paired=True,
        vectorized=False,
        n_resamples=4000,
        method="percentile",
        random_state=np.random.default_rng(9),
    ).confidence_interval
    assert ours is not None
    assert ours[0] == pytest.approx(reference.low, abs=0.02)
    assert ours[1] == pytest.approx(reference.high, abs=0.02)
    point = scipy_stats.pearsonr(x, y).statistic
    assert ours[0] < point < ours[1]


def test_interval_is_none_when_most_resamples_are_undefined() -> None:
    draws = np.full(100, np.nan)
    draws[:50] = 0.3
    assert percentile_interval(draws) is None


def test_paired_difference_p_separates_a_better_metric_from_an_equal_one() -> None:
    rng = np.random.default_rng(6)
    n = 400
    human = rng.normal(size=n)
    good = human + rng.normal(0.0, 0.5, size=n)
    bad = human + rng.normal(0.0, 3.0, size=n)
    twin = good + rng.normal(0.0, 0.01, size=n)
    draws = bootstrap_correlations(human, np.stack([good, bad, twin], axis=1), Resamples(n, 1000, seed=1))
    better = paired_difference_p(draws.pearson[0], draws.pearson[1])
    same = paired_difference_p(draws.pearson[0], draws.pearson[2])
    assert better is not None
    assert same is not None
    assert better < 0.01
    assert same > 0.05
    assert better >= 2 / 1001  # never 0, with the +1 correction


def test_mismatched_shapes_and_non_finite_human_scores_are_refused() -> None:
    with pytest.raises(ValueError, match="items"):
        bootstrap_correlations(np.zeros(5), np.zeros((4, 2)), Resamples(5, 10))
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_correlations(np.zeros(5), np.zeros((5, 2)), Resamples(6, 10))
    with pytest.raises(ValueError, match="finite"):
        bootstrap_correlations(np.array([1.0, np.nan, 2.0]), np.zeros((3, 1)), Resamples(3, 10))


def test_full_sample_ranks_give_the_exact_interval_within_noise_and_say_so() -> None:
    human, metrics = _study(7, 1500)
    resamples = Resamples(1500, 400, seed=3)
    exact = bootstrap_correlations(human, metrics, resamples, spearman="exact")
    ranked = bootstrap_correlations(human, metrics, resamples, spearman="full-sample ranks")
    assert exact.spearman_method == "exact"
    assert ranked.spearman_method == "full-sample ranks"
    assert np.array_equal(exact.pearson, ranked.pearson, equal_nan=True)  # Pearson is exact either way
    for column in range(metrics.shape[1]):
        exact_interval = percentile_interval(exact.spearman[column])
        ranked_interval = percentile_interval(ranked.spearman[column])
        assert exact_interval is not None
        assert ranked_interval is not None
        assert ranked_interval == pytest.approx(exact_interval, abs=0.01)
        # resample by resample the two differ by noise of order 1/sqrt(n), not more
        difference = np.nanmax(np.abs(exact.spearman[column] - ranked.spearman[column]))
        assert 0 < difference < 0.03


def test_auto_re_ranks_small_studies_and_uses_full_sample_ranks_for_large_ones() -> None:
    human, metrics = _study(8, 50)
    assert bootstrap_correlations(human, metrics, Resamples(50, 20)).spearman_method == "exact"
    human, metrics = _study(8, 20_000)
    assert (
        bootstrap_correlations(human, metrics, Resamples(20_000, 400)).spearman_method == "full-sample ranks"
    )
    with pytest.raises(ValueError, match="spearman must be"):
        bootstrap_correlations(human, metrics, Resamples(20_000, 1), spearman="fast")

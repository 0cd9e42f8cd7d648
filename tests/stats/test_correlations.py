"""stats.correlations against scipy and against Fisher-z intervals worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.correlations import (
    HUMAN_CONSTANT,
    METRIC_CONSTANT,
    TOO_FEW_FOR_INTERVAL,
    TOO_FEW_ITEMS,
    CorrelationResult,
    fisher_z_interval,
    jitter,
    pearson_with_ci,
    spearman_with_ci,
)

Z_975 = 1.959963984540054  # the 97.5% quantile of N(0, 1)


def _sample(seed: int, n: int, noise: float) -> tuple[list[float], list[float]]:
    """Human scores on a 0-2 scale and a noisy metric that partly follows them (many ties, like real data)."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 3, size=n).astype(float) + rng.choice([0.0, 1 / 3, 2 / 3], size=n)
    metric = 0.2 * human + rng.normal(0.0, noise, size=n)
    return human.tolist(), metric.tolist()


@pytest.mark.parametrize(("seed", "n", "noise"), [(0, 10, 0.1), (1, 50, 0.3), (2, 500, 1.0), (3, 120, 5.0)])
def test_pearson_matches_scipy_including_its_fisher_interval(seed: int, n: int, noise: float) -> None:
    human, metric = _sample(seed, n, noise)
    ours = pearson_with_ci(human, metric)
    reference = scipy_stats.pearsonr(human, metric)
    interval = reference.confidence_interval(0.95)  # scipy's default method is Fisher's z
    assert ours.n == n
    assert ours.note == ""
    assert ours.coefficient == pytest.approx(reference.statistic, abs=1e-12)
    assert ours.p_value == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-300)
    assert ours.ci_low == pytest.approx(interval.low, abs=1e-12)
    assert ours.ci_high == pytest.approx(interval.high, abs=1e-12)


@pytest.mark.parametrize(("seed", "n", "noise"), [(0, 10, 0.1), (1, 50, 0.3), (2, 500, 1.0), (3, 120, 5.0)])
def test_spearman_matches_scipy_and_uses_the_bonett_wright_variance(seed: int, n: int, noise: float) -> None:
    human, metric = _sample(seed, n, noise)
    ours = spearman_with_ci(human, metric)
    reference = scipy_stats.spearmanr(human, metric)
    assert ours.coefficient == pytest.approx(reference.statistic, abs=1e-12)
    assert ours.p_value == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-300)
    half_width = Z_975 * math.sqrt(1.06 / (n - 3))
    z = math.atanh(reference.statistic)
    assert ours.ci_low == pytest.approx(math.tanh(z - half_width), abs=1e-12)
    assert ours.ci_high == pytest.approx(math.tanh(z + half_width), abs=1e-12)
    # The 1.06 factor makes Spearman's interval wider than Pearson's would be for the same coefficient.
    pearson_like = fisher_z_interval(reference.statistic, n)
    assert ours.ci_low is not None
    assert ours.ci_high is not None
    assert ours.ci_high - ours.ci_low > pearson_like[1] - pearson_like[0]


def test_fisher_interval_against_values_worked_by_hand() -> None:
    # r = 0.5, n = 28: z = artanh(0.5) = 0.549306, se = 1/sqrt(25) = 0.2, 1.959964 * 0.2 = 0.391993,
    # tanh(0.157313) = 0.156028, tanh(0.941299) = 0.735818.
    low, high = fisher_z_interval(0.5, 28)
    assert low == pytest.approx(0.156028, abs=1e-6)
    assert high == pytest.approx(0.735818, abs=1e-6)
    # Bonett-Wright: se = sqrt(1.06/25) = 0.205913, half width 0.403581 -> tanh(0.145725), tanh(0.952887).
    low, high = fisher_z_interval(0.5, 28, variance_factor=1.06)
    assert low == pytest.approx(0.144702, abs=1e-6)
    assert high == pytest.approx(0.741087, abs=1e-6)
    # r = -0.3, n = 103: se = 0.1, half width 0.195996 around z = -0.309520.
    low, high = fisher_z_interval(-0.3, 103)
    assert low == pytest.approx(-0.466444, abs=1e-6)
    assert high == pytest.approx(-0.113038, abs=1e-6)


def test_a_wider_confidence_gives_a_wider_interval() -> None:
    human, metric = _sample(5, 40, 0.5)
    narrow = pearson_with_ci(human, metric, confidence=0.90)
    wide = pearson_with_ci(human, metric, confidence=0.99)
    assert narrow.ci_low is not None
    assert wide.ci_low is not None
    assert narrow.ci_high is not None
    assert wide.ci_high is not None
    assert wide.ci_low < narrow.ci_low < narrow.ci_high < wide.ci_high


@pytest.mark.parametrize("function", [pearson_with_ci, spearman_with_ci])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_fewer_than_three_items_give_null_statistics_with_a_reason(function, n: int) -> None:
    result = function([1.0, 2.0][:n], [0.3, 0.1][:n])
    assert result == CorrelationResult(None, None, None, None, n, TOO_FEW_ITEMS)


@pytest.mark.parametrize("function", [pearson_with_ci, spearman_with_ci])
def test_constant_inputs_give_null_statistics_and_say_which_side(function) -> None:
    constant_metric = function([0.0, 1.0, 2.0, 1.0], [0.5, 0.5, 0.5, 0.5])
    assert constant_metric == CorrelationResult(None, None, None, None, 4, METRIC_CONSTANT)
    constant_human = function([1.0, 1.0, 1.0, 1.0], [0.1, 0.4, 0.2, 0.3])
    assert constant_human == CorrelationResult(None, None, None, None, 4, HUMAN_CONSTANT)


@pytest.mark.parametrize("function", [pearson_with_ci, spearman_with_ci])
def test_three_items_have_a_coefficient_but_no_interval(function) -> None:
    result = function([0.0, 1.0, 2.0], [0.1, 0.3, 0.2])
    assert result.coefficient is not None
    assert result.p_value is not None
    assert (result.ci_low, result.ci_high) == (None, None)
    assert result.note == TOO_FEW_FOR_INTERVAL


@pytest.mark.parametrize("function", [pearson_with_ci, spearman_with_ci])
def test_a_perfect_correlation_has_a_finite_collapsed_interval(function) -> None:
    result = function([0.0, 1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 5.0, 7.0, 9.0])
    assert result.coefficient == pytest.approx(1.0)
    assert result.ci_low == pytest.approx(1.0)
    assert result.ci_high == pytest.approx(1.0)
    assert result.p_value is not None
    assert result.p_value < 1e-6
    assert all(math.isfinite(v) for v in (result.coefficient, result.p_value, result.ci_low, result.ci_high))


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="paired"):
        pearson_with_ci([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        spearman_with_ci([1.0, 2.0, 3.0, float("nan")], [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="confidence"):
        pearson_with_ci([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0], confidence=95)
    with pytest.raises(ValueError, match="more than 3"):
        fisher_z_interval(0.5, 3)


def test_jitter_is_reproducible_gaussian_noise_of_the_requested_spread() -> None:
    values = [1.0] * 20_000
    first = jitter(values, sd=0.25, seed=7)
    assert first == jitter(values, sd=0.25, seed=7)
    assert first != jitter(values, sd=0.25, seed=8)
    noise = np.asarray(first) - 1.0
    assert abs(noise.mean()) < 0.01
    assert noise.std() == pytest.approx(0.25, rel=0.02)
    assert jitter([0.0, 1.0, 2.0], sd=0.0) == [0.0, 1.0, 2.0]
    assert jitter([], sd=0.25) == []


@pytest.mark.parametrize(("seed", "n", "noise"), [(0, 10, 0.1), (1, 50, 0.3), (2, 500, 1.0)])
def test_kendall_matches_scipy_tau_b_with_a_fisher_interval(seed: int, n: int, noise: float) -> None:
    from stats.correlations import kendall_with_ci

    human, metric = _sample(seed, n, noise)
    ours = kendall_with_ci(human, metric)
    reference = scipy_stats.kendalltau(human, metric)  # tau-b: the ties of human means are accounted for
    assert ours.coefficient == pytest.approx(reference.statistic, abs=1e-12)
    assert ours.p_value == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-300)
    half_width = Z_975 * math.sqrt(0.437 / (n - 4))
    z = math.atanh(reference.statistic)
    assert ours.ci_low == pytest.approx(math.tanh(z - half_width), abs=1e-12)
    assert ours.ci_high == pytest.approx(math.tanh(z + half_width), abs=1e-12)


def test_kendall_degenerate_inputs_give_reasons() -> None:
    from stats.correlations import kendall_with_ci

    assert kendall_with_ci([1, 2], [1, 2]).note == TOO_FEW_ITEMS
    assert kendall_with_ci([1, 2, 3], [1, 1, 1]).note == METRIC_CONSTANT
    assert kendall_with_ci([1, 2, 3, 4], [1, 2, 4, 3]).note == TOO_FEW_FOR_INTERVAL

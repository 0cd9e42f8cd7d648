"""Williams' test against published worked values and its behaviour under the null."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.comparisons import NOT_ENOUGH_ITEMS, williams_test


def test_matches_psych_r_test_worked_example() -> None:
    # R: psych::r.test(n = 103, r12 = .4, r13 = .5, r23 = .1) -> t = -0.89, p = 0.37 (two-sided)
    result = williams_test(0.4, 0.5, 0.1, 103)
    assert result.t == pytest.approx(-0.8913, abs=1e-4)
    assert result.p_value == pytest.approx(0.3749, abs=1e-4)


def test_matches_graham_and_baldwin_one_sided_example_doubled() -> None:
    # nlp-williams (Graham & Baldwin 2014): r12 .65, r13 .55, r23 .3, n 50 -> one-sided p 0.20929
    result = williams_test(0.65, 0.55, 0.3, 50)
    assert result.p_value == pytest.approx(2 * 0.20928617, abs=1e-6)
    assert result.t is not None
    assert result.t > 0


def test_symmetric_in_the_two_metrics() -> None:
    forward = williams_test(0.6, 0.3, 0.5, 200)
    backward = williams_test(0.3, 0.6, 0.5, 200)
    assert forward.t is not None
    assert backward.t is not None
    assert forward.t == pytest.approx(-backward.t)
    assert forward.p_value == pytest.approx(backward.p_value)


def test_highly_correlated_metrics_make_a_small_difference_significant() -> None:
    # The same difference in correlation is far more telling when the metrics agree with each other.
    close, apart = williams_test(0.50, 0.45, 0.95, 500).p_value, williams_test(0.50, 0.45, 0.10, 500).p_value
    assert close is not None
    assert apart is not None
    assert close < 0.01
    assert apart > 0.2


def test_p_values_are_roughly_uniform_under_the_null() -> None:
    rng = np.random.default_rng(0)
    p_values = []
    for _ in range(400):
        n = 60
        human = rng.normal(size=n)
        a = 0.5 * human + rng.normal(size=n)
        b = 0.5 * human + rng.normal(size=n)
        r12 = scipy_stats.pearsonr(human, a).statistic
        r13 = scipy_stats.pearsonr(human, b).statistic
        r23 = scipy_stats.pearsonr(a, b).statistic
        p_values.append(williams_test(r12, r13, r23, n).p_value)
    rejected = np.mean(np.array(p_values) < 0.05)
    assert 0.02 < rejected < 0.09


def test_degenerate_inputs_say_why() -> None:
    assert williams_test(0.4, 0.5, 0.1, 3).note == NOT_ENOUGH_ITEMS
    assert williams_test(None, 0.5, 0.1, 50).p_value is None
    assert williams_test(0.5, 0.5, 0.3, 50).p_value == 1.0
    assert "perfectly correlated" in williams_test(0.5, 0.4, 1.0, 50).note

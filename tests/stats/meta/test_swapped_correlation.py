"""The permutation tests' swapped correlations against the same statistic in 600-digit arithmetic (mpmath):
z-scores formed exactly, every swapped group's Pearson r from its values, on the very masks the test draws.
Values that doubles cannot z-score without losing them: a metric 1e-250 times smaller in some contexts, a
metric whose spread inside some contexts is 1e-9 of its level, and a third at 1e250."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from stats.meta.permutation import EQUAL, Layout, Statistic, permutation_tests, swap_masks

DIGITS = 600  # z-scores of values 1e-250 beside others of 1: 250 digits go to the offset
CONTEXTS, SYSTEMS = 12, 4


def _study() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    n = CONTEXTS * SYSTEMS
    context = np.repeat(np.arange(CONTEXTS), SYSTEMS)
    system = np.tile(np.arange(SYSTEMS), CONTEXTS)
    human = rng.integers(1, 6, n).astype(np.float64)
    human[context == 11] = 3.0  # constant human scores in one context
    tiny = rng.random(n) * np.where(context < 4, 1e-250, 1.0)
    level = 1e3 + rng.random(n) * np.where((context >= 4) & (context < 7), 1e-9, 1.0)
    level[context == 9] = 1e3  # constant in one context
    huge = (human + rng.normal(0, 1, n)) * 1e250
    return human, np.stack([tiny, level, huge], axis=1), context, system


def _z(values: np.ndarray) -> list[mpmath.mpf]:
    exact = [mpmath.mpf(float(v)) for v in values]
    mean = mpmath.fsum(exact) / len(exact)
    sd = mpmath.sqrt(mpmath.fsum((v - mean) ** 2 for v in exact) / len(exact))
    return [(v - mean) / sd for v in exact]


def _mean_r(human: np.ndarray, values: list[mpmath.mpf], codes: np.ndarray) -> mpmath.mpf:
    total, used = mpmath.mpf(0), 0
    for group in np.unique(codes):
        members = np.flatnonzero(codes == group)
        x = [mpmath.mpf(float(human[i])) for i in members]
        y = [values[i] for i in members]
        if len(set(x)) < 2 or len(set(y)) < 2:
            continue
        mx, my = mpmath.fsum(x) / len(x), mpmath.fsum(y) / len(y)
        sxy = mpmath.fsum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
        sxx = mpmath.fsum((a - mx) ** 2 for a in x)
        syy = mpmath.fsum((b - my) ** 2 for b in y)
        total += sxy / mpmath.sqrt(sxx * syy)
        used += 1
    return total / used


@pytest.mark.parametrize("grouping", ["none", "context", "system"])
@pytest.mark.parametrize("scheme", ["both", "inputs"])
def test_swapped_statistics_are_those_of_exact_arithmetic(grouping: str, scheme: str) -> None:
    with mpmath.workdps(DIGITS):
        _check(grouping, scheme)


def _check(grouping: str, scheme: str) -> None:
    human, metrics, context, system = _study()
    codes = {"none": np.zeros(human.size, dtype=np.int64), "context": context, "system": system}[grouping]
    permutations, seed = 40, 7
    pairs = [(0, 1), (1, 2), (2, 0)]
    results = permutation_tests(
        human, metrics, Layout.of(list(context), list(system)), Statistic("pearson", grouping),  # type: ignore[arg-type]
        pairs, scheme=scheme, permutations=permutations, seed=seed, early_stop=None,  # type: ignore[arg-type]
    )  # fmt: skip
    z = [_z(metrics[:, column]) for column in range(3)]
    units = np.arange(human.size) if scheme == "both" else context
    masks = swap_masks(
        np.random.default_rng(seed), permutations, human.size if scheme == "both" else CONTEXTS
    )
    for (first, second), result in zip(pairs, results, strict=True):
        observed = _mean_r(human, z[first], codes) - _mean_r(human, z[second], codes)
        assert result.delta == pytest.approx(float(observed), abs=1e-12)
        assert result.statistic_first == pytest.approx(float(_mean_r(human, z[first], codes)), abs=1e-12)
        greater = 0
        for row in masks:
            swap = row[units] == 1
            held_first = [z[second][i] if swap[i] else z[first][i] for i in range(human.size)]
            held_second = [z[first][i] if swap[i] else z[second][i] for i in range(human.size)]
            delta = _mean_r(human, held_first, codes) - _mean_r(human, held_second, codes)
            greater += delta >= observed - EQUAL
        assert result.p_value == pytest.approx((greater + 1) / (permutations + 1), abs=1e-15)

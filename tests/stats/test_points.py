"""compact: six significant digits, the same whether values repeat (formatted once each) or not; compact_or_none
the same, with None for None and NaN, whether given an array or a list."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from stats.figures.points import compact, compact_or_none


def _plain(values: list[float]) -> list[float]:
    return [float(f"{float(value):.6g}") for value in values]


def _same(first: list[float], second: list[float]) -> bool:
    return len(first) == len(second) and all(
        (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
        for a, b in zip(first, second, strict=True)
    )


@pytest.mark.parametrize(
    "values",
    [
        list(np.random.default_rng(1).integers(1, 6, (2000, 5)).mean(axis=1)),  # few distinct means, repeated
        [1 / 3, 1 / 3, 2 / 3, 2 / 3, 2 / 3, math.nan, math.nan, math.nan],
        [0.0, -0.0, 0.0, 0.0, 0.0],
        [math.inf, -math.inf, math.inf, math.inf, 123456789.0, 123456789.0],
        list(np.random.default_rng(2).normal(size=200) * 1e7),  # all distinct
        [],
    ],
)
def test_compact_is_the_plain_loop(values: list[float]) -> None:
    result = compact(values)
    assert _same(result, _plain(values))
    assert all(type(value) is float for value in result)
    assert _same(compact(np.array(values, dtype=np.float64)), _plain(values))


def _plain_or_none(values: Sequence[float | None]) -> list[float | None]:
    return [None if value is None or value != value else float(f"{float(value):.6g}") for value in values]


@pytest.mark.parametrize(
    "values",
    [
        [math.nan, 0.1, 0.1, -0.0, 0.0, math.nan, 0.2, 0.1, 0.1, 0.1],  # ties, NaNs, a negative zero
        list(np.round(np.random.default_rng(3).normal(size=300), 1)),  # few distinct values
        list(np.random.default_rng(4).normal(size=300)),  # all distinct
        [math.nan, math.nan],
        [math.inf, -math.inf, math.nan, 1e300, 1e300, 1e300],
        [],
    ],
)
def test_compact_or_none_of_an_array_is_the_plain_loop(values: list[float]) -> None:
    array = np.array(values, dtype=np.float64)
    for result in (compact_or_none(array), compact_or_none(list(values))):
        expected = _plain_or_none(values)
        assert [value is None for value in result] == [value is None for value in expected]
        kept = [value for value in result if value is not None]
        assert _same(kept, [value for value in expected if value is not None])
        assert all(type(value) is float for value in kept)
    assert compact_or_none([None, 1.0]) == [None, 1.0]


def _awkward_values() -> np.ndarray:
    """Every magnitude from subnormal to huge, both signs; values next to powers of ten, next to the halves
    where six digits round one way or the other, and at the ends of the six-digit range."""
    rng = np.random.default_rng(5)
    spread = 10.0 ** rng.uniform(-25, 25, 200_000) * rng.choice([-1.0, 1.0], 200_000)
    powers = 10.0 ** np.arange(-20, 23, dtype=np.float64)
    near_powers = np.concatenate([np.nextafter(powers, 0), powers, np.nextafter(powers, np.inf)])
    mantissas = rng.integers(100_000, 1_000_000, 20_000) + 0.5  # k.5 x 10^e: as near to a tie as doubles get
    halves = np.concatenate([mantissas * 10.0**e for e in range(-12, 8)])
    near_halves = np.concatenate([np.nextafter(halves, 0), halves, np.nextafter(halves, np.inf)])
    off = rng.choice([-1.0, 1.0], mantissas.size) * rng.uniform(1.0e-6, 3e-6, mantissas.size)  # just outside
    near_halves = np.concatenate([near_halves, *[(mantissas + off) * 10.0**e for e in range(-12, 8)]])
    edges = np.array([99_999.5, 999_999.5, 999_999.4999, 9_999_995.0, 0.1, 0.3, 2 / 3, 1e-15, 1e20, 5e-324])
    rounded = np.round(rng.normal(size=20_000), 1)  # metrics rounded to a decimal
    means = rng.integers(1, 6, (20_000, 5)).mean(axis=1)  # human means
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0])
    return np.concatenate([spread, near_powers, near_halves, -near_halves, edges, rounded, means, special])


def test_six_digits_is_the_string_formatting_to_the_bit() -> None:
    from stats.figures.points import six_digits

    values = _awkward_values()
    ours = six_digits(values)
    plain = np.array([float(f"{value:.6g}") for value in values.tolist()])
    same = (ours == plain) | (np.isnan(ours) & np.isnan(plain))
    assert same.all(), values[~same][:10]
    assert np.array_equal(np.signbit(ours), np.signbit(plain))

"""compact: six significant digits, the same whether values repeat (formatted once each) or not; compact_or_none
the same, with None for None and NaN, whether given an array or a list."""

from __future__ import annotations

import math

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


def _plain_or_none(values: list[float | None]) -> list[float | None]:
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

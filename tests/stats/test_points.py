"""compact: six significant digits, the same whether values repeat (formatted once each) or not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stats.figures.points import compact


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

"""The metric half's matrix and system means, vectorised, equal the loops they replaced exactly."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import fmean

import numpy as np

from stats.ratings_by_item import factorized
from stats.report.metrics import _system_level_row, metric_matrix
from stats.report.types import SignatureInputs


def _old_matrix(
    items: np.ndarray, signatures: Sequence[SignatureInputs], metric_values: Mapping[int, Mapping[int, float]]
) -> np.ndarray:
    values = np.full((items.size, len(signatures)), np.nan)
    position = {int(item): index for index, item in enumerate(items)}
    for column, signature in enumerate(signatures):
        for response_id, value in metric_values.get(signature.id, {}).items():
            row = position.get(response_id)
            if row is not None and math.isfinite(value):
                values[row, column] = value
    return values


def _old_means(
    x: np.ndarray, column: np.ndarray, systems: Sequence[str]
) -> list[tuple[str, float, float, int]]:
    by_system: dict[str, list[int]] = {}
    for row in np.flatnonzero(np.isfinite(column)):
        by_system.setdefault(systems[int(row)], []).append(int(row))
    names = sorted(by_system)
    return [
        (name, fmean(x[by_system[name]]), fmean(column[by_system[name]]), len(by_system[name]))
        for name in names
    ]


def _signature(i: int) -> SignatureInputs:
    return SignatureInputs(id=i, name=f"m{i}", text=f"m{i}|v", references="none", group="Other")


def test_matrix_equals_the_loop() -> None:
    rng = np.random.default_rng(0)
    items = np.sort(rng.choice(5000, 1200, replace=False))
    metric_values = {
        i: {
            int(r): float(v)
            for r, v in zip(rng.choice(5000, 900, replace=False), rng.normal(size=900), strict=True)
        }
        for i in range(4)
    }
    metric_values[1][int(items[0])] = math.nan
    metric_values[2][int(items[-1])] = math.inf
    metric_values[3] = {}
    signatures = [_signature(i) for i in range(5)]  # 4 has no values at all
    np.testing.assert_array_equal(
        metric_matrix(items, signatures, metric_values), _old_matrix(items, signatures, metric_values)
    )
    empty = np.array([], dtype=np.int64)
    assert metric_matrix(empty, signatures, metric_values).shape == (0, 5)


def test_system_means_equal_the_loop() -> None:
    rng = np.random.default_rng(1)
    n = 3000
    systems = [f"s{int(k)}" for k in rng.integers(0, 7, n)]
    x = rng.normal(size=n)
    column = rng.normal(size=n) * 1e3
    column[rng.random(n) < 0.2] = np.nan
    codes, names = factorized(systems)
    row = _system_level_row("q", _signature(0), x, column, codes, names)
    expected = _old_means(x, column, systems)
    assert [(s["system"], s["human_mean"], s["metric_mean"], s["n"]) for s in row["systems"]] == expected

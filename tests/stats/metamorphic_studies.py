"""Hypothesis strategies for the metamorphic tests (tests/stats/test_metamorphic*.py): small studies of contexts
x systems with ties, constant groups and degenerate columns, and the transformations a statistic must ignore.

Values lie on a grid of 1/64 with at most 19 significant bits, so that a product with a constant of
:func:`exact_constants` (an odd number below 32 times a power of two) and a shift of :func:`shifts` are
exact in doubles: ties stay ties and differences stay equal, and a rank or tie statistic must then be
unchanged to the bit. :func:`any_constants` (any mantissa) checks the coefficients that have no ties to keep.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Every test with these settings draws the same examples in every run (no flaky CI), and never times out.
METAMORPHIC = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
RELATIVE = 1e-9  # the tolerance of "invariant"
SMALLEST, LARGEST = 1e-200, 1e200


@dataclass(frozen=True)
class Study:
    """``contexts`` x ``systems`` replies (reply i: context i // systems, system i % systems), a 1-5 human
    score each and three metric columns: broad values, few values (ties, constant groups), and one that
    follows the human score."""

    human: np.ndarray
    metrics: np.ndarray
    context: np.ndarray
    system: np.ndarray

    @property
    def n(self) -> int:
        return int(self.human.size)

    def codes(self, grouping: str) -> np.ndarray:
        return {"context": self.context, "system": self.system, "none": np.zeros(self.n, dtype=np.int64)}[
            grouping
        ]

    def with_column(self, column: int, values: np.ndarray) -> Study:
        metrics = self.metrics.copy()
        metrics[:, column] = values
        return Study(self.human, metrics, self.context, self.system)


@st.composite
def studies(draw: st.DrawFn, contexts: tuple[int, int] = (3, 8), systems: tuple[int, int] = (2, 5)) -> Study:
    count = draw(st.integers(*contexts))
    width = draw(st.integers(*systems))
    n = count * width

    def column(low: int, high: int) -> np.ndarray:
        return np.array(draw(st.lists(st.integers(low, high), min_size=n, max_size=n)), dtype=np.float64)

    human = column(1, 5)
    broad = column(-4096, 4096) / 64.0
    few = column(-3, 3) / 4.0
    follows = human * 8.0 + column(-16, 16) / 8.0
    return Study(
        human=human,
        metrics=np.stack([broad, few, follows], axis=1),
        context=np.repeat(np.arange(count), width),
        system=np.tile(np.arange(width), count),
    )


def exact_constants() -> st.SearchStrategy[float]:
    """Positive constants from 1e-200 to 1e200 whose products with the grid's values are exact."""
    return st.builds(
        lambda odd, power: math.ldexp(float(odd), power),
        st.sampled_from([1, 3, 5, 7, 11, 13, 29, 31]),
        _exponents(-660, 660),
    ).filter(lambda value: SMALLEST <= value <= LARGEST)


def _exponents(low: int, high: int) -> st.SearchStrategy[int]:
    """Any exponent, the ends of the range (where sums of squares under- or overflow) as often as the rest."""
    return st.one_of(st.sampled_from([low, low + 40, high - 40, high]), st.integers(low, high))


def powers_of_two() -> st.SearchStrategy[float]:
    """Powers of two from 1e-200 to 1e200: every rounding scales with them (means, differences of means)."""
    return _exponents(-664, 664).map(lambda power: math.ldexp(1.0, power))


def any_constants() -> st.SearchStrategy[float]:
    """Positive constants from 1e-200 to 1e200 with any mantissa."""
    return st.builds(
        lambda mantissa, exponent: mantissa * 10.0**exponent,
        st.floats(1.0, 9.999999, allow_nan=False, allow_infinity=False),
        _exponents(-200, 199),
    )


def shifts() -> st.SearchStrategy[float]:
    """Shifts on the grid, up to 2^18 (so that a shifted value stays exact)."""
    return st.integers(-(2**24), 2**24).map(lambda steps: steps / 64.0)


def close(before: float | None, after: float | None, scale: float = 1.0, *, where: str = "") -> None:
    """``after`` is ``before`` times ``scale`` to :data:`RELATIVE` (both None, or both numbers)."""
    assert (before is None) == (after is None), f"{where}: {before} became {after}"
    if before is None or after is None:
        return
    expected = before * scale
    if math.isnan(expected):
        assert math.isnan(after), f"{where}: NaN became {after}"
        return
    assert math.isclose(after, expected, rel_tol=RELATIVE, abs_tol=1e-12 * abs(scale)), (
        f"{where}: {before!r} became {after!r} (expected {expected!r})"
    )

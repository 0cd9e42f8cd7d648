"""RUBER's hybrid scores (Tao et al., 2018, section 3.3): min-max normalisation (eq. 4), then four blends.

s~ = (s - min(s')) / (max(s') - min(s')) over the scored set s' (eq. 4), for s_R and s_U separately;
then RUBER = min, max, geometric mean sqrt(s~_R * s~_U) or arithmetic mean (s~_R + s~_U) / 2.

Because the normalisation is over the scored set, a blend depends on which items are scored together:
the raw s_R and s_U are what to store, the blends are recomputed from them.

Defined edge cases (never NaN):
- ``None`` (an item without a score, see :mod:`.scores`) stays ``None`` and takes no part in min/max;
  a blend is ``None`` where either component is.
- A single item, or scores that are all equal (max == min): every normalised score is 0.5. Eq. 4 is
  0/0 there; such a component carries no information about which item is better, and 0.5, the middle
  of the range, neither lifts nor sinks the other component systematically (1.0 would turn the max
  blend into a constant 1, 0.0 the min and geometric blends into a constant 0).
- Eq. 4 maps the minimum to 0 and the maximum to 1 (the paper's "(0, 1)" is closed in practice), so the
  geometric mean of an item that is worst on one component is 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

CONSTANT_NORMALISED = 0.5

RUBER_MIN = "min"
RUBER_MAX = "max"
RUBER_GMEAN = "gmean"
RUBER_AMEAN = "amean"
BLENDS: dict[str, Callable[[float, float], float]] = {
    RUBER_MIN: min,
    RUBER_MAX: max,
    RUBER_GMEAN: lambda r, u: math.sqrt(r * u),
    RUBER_AMEAN: lambda r, u: (r + u) / 2.0,
}


def min_max_normalise(values: Sequence[float | None]) -> list[float | None]:
    """Eq. 4 over the non-None ``values``; 0.5 for all when they are constant or there is one."""
    known = [float(value) for value in values if value is not None]
    for value in known:
        if not math.isfinite(value):
            raise ValueError(f"cannot normalise a non-finite score {value}")
    if not known:
        return [None] * len(values)
    low, high = min(known), max(known)
    if high == low:
        return [None if value is None else CONSTANT_NORMALISED for value in values]
    span = high - low
    # clamp: (value - low) / span can land a hair outside [0, 1] in floating point
    return [None if value is None else min(1.0, max(0.0, (value - low) / span)) for value in values]


def blend(
    referenced: Sequence[float | None], unreferenced: Sequence[float | None], method: str
) -> list[float | None]:
    """One blend (``"min"``, ``"max"``, ``"gmean"``, ``"amean"``) of raw s_R and s_U, item by item."""
    return ruber_blends(referenced, unreferenced, methods=(method,))[method]


def ruber_blends(
    referenced: Sequence[float | None],
    unreferenced: Sequence[float | None],
    *,
    methods: Sequence[str] = tuple(BLENDS),
) -> dict[str, list[float | None]]:
    """``{method: blended scores}`` from raw s_R and s_U of the same items (normalised here, eq. 4)."""
    if len(referenced) != len(unreferenced):
        raise ValueError(f"{len(referenced)} referenced scores but {len(unreferenced)} unreferenced")
    unknown = [method for method in methods if method not in BLENDS]
    if unknown:
        raise ValueError(f"unknown RUBER blend {unknown[0]!r}; known: {', '.join(BLENDS)}")
    s_r = min_max_normalise(referenced)
    s_u = min_max_normalise(unreferenced)
    return {
        method: [
            None if r is None or u is None else BLENDS[method](r, u) for r, u in zip(s_r, s_u, strict=True)
        ]
        for method in methods
    }

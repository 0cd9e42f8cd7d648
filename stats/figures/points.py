"""Shared conventions of the report's plot data: the jitter of RUBER's figures and compact numbers.

RUBER's Figures 4-5 (seed 000, section 4.3) add N(0, 0.25^2) noise to the discrete human scores so that
equal scores do not hide one another; the noise is seeded so that the cloud does not move between loads,
and it is for display only, never for statistics. Six significant digits are plenty on screen and keep
the JSON small. Pure Python and numpy: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

JITTER_SD = 0.25
JITTER_SEED = 20170211
HOVER_TEXT_LIMIT = 300  # characters of a reply shown on hover; the full text is on the study page


def compact(values: Iterable[float]) -> list[float]:
    """Each value to six significant digits. Where values repeat (human means over a few ratings), each distinct
    value is formatted once (a 100,000-reply study has a few dozen); a negative zero keeps the plain loop."""
    array = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=np.float64)
    distinct, inverse = np.unique(array, return_inverse=True)
    if 2 * distinct.size > array.size or np.any(np.signbit(array) & (array == 0)):
        return [float(f"{value:.6g}") for value in array.tolist()]
    rounded = np.array([float(f"{value:.6g}") for value in distinct.tolist()])
    return list(rounded[inverse.reshape(-1)].tolist())


def compact_or_none(values: Iterable[float | None]) -> list[float | None]:
    """Each value as :func:`compact` gives it, None for None and NaN. A float array goes through
    :func:`compact` (its distinct values formatted once), the rest value by value."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "f" and values.ndim == 1:
        present = ~np.isnan(values)
        if present.all():
            return list(compact(values))
        result: list[float | None] = [None] * values.size
        for position, value in zip(np.flatnonzero(present).tolist(), compact(values[present]), strict=True):
            result[position] = value
        return result
    return [None if value is None or value != value else float(f"{float(value):.6g}") for value in values]

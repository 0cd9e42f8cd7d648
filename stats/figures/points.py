"""Shared conventions of the report's plot data: the jitter of RUBER's figures and compact numbers.

RUBER's Figures 4-5 (Tao et al., 2018, section 4.3) add N(0, 0.25^2) noise to the discrete human scores so that
equal scores do not hide one another; the noise is seeded so that the cloud does not move between loads,
and it is for display only, never for statistics. Six significant digits are plenty on screen and keep
the JSON small (the rounding of ``f"{value:.6g}"``, computed with numpy: :func:`six_digits`). Pure Python and numpy: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

JITTER_SD = 0.25
JITTER_SEED = 20170211
HOVER_TEXT_LIMIT = 300  # characters of a reply shown on hover; the full text is on the study page


def compact(values: Iterable[float]) -> list[float]:
    """Each value to six significant digits: ``float(f"{value:.6g}")``, computed with numpy where that is
    exact (:func:`six_digits`)."""
    array = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=np.float64)
    return list(six_digits(array.reshape(-1)).tolist())


# 10^k for k = 0..22, each exact in float64 (the largest power of ten that is).
_POWERS = np.array([float(f"1e{k}") for k in range(23)])
_TIE = 1e-6  # how close to a half the scaled value may come before the string formatting decides


def six_digits(array: np.ndarray) -> np.ndarray:
    """``float(f"{v:.6g}")`` of every value, to the bit. With E the decimal exponent of |v|, the digits are
    m = round(|v| 10^(5-E)) and the result is m / 10^(E-5) (or m 10^(E-5)): m and the power of ten are exact
    doubles, so one correctly rounded division (product) gives the double nearest to the decimal m 10^(E-5),
    which is what parsing the formatted string gives. |v| 10^(5-E) itself is one rounding away from the
    exact product (1e-10 at most), so m is right wherever the scaled value is not within :data:`_TIE` of a
    half (or of the ends of [1e5, 1e6)); those values, zeros, infinities, NaN and magnitudes outside
    [1e-15, 1e20) are formatted as strings."""
    magnitude = np.abs(array)
    usable = np.isfinite(array) & (magnitude >= 1e-15) & (magnitude < 1e20)
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log10(np.where(usable, magnitude, 1.0))).astype(np.int64)
    shift = np.where(usable, 5 - exponent, 0)  # -14 .. 20
    up = shift >= 0
    power = _POWERS[np.abs(shift)]
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = np.where(up, magnitude * power, magnitude / power)
        digits = np.rint(scaled)
        half = np.abs(scaled - np.floor(scaled) - 0.5) > _TIE
        exact = usable & half & (scaled >= 1e5) & (scaled < 999_999.5)
        result: np.ndarray = np.copysign(np.where(up, digits / power, digits * power), array)
    for position in np.flatnonzero(~exact).tolist():
        result[position] = float(f"{float(array[position]):.6g}")
    return result


def compact_or_none(values: Iterable[float | None]) -> list[float | None]:
    """Each value as :func:`compact` gives it, None for None and NaN. A float array goes through
    :func:`compact` (its distinct values formatted once), the rest value by value."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "f" and values.ndim == 1:
        rounded: list[float | None] = list(six_digits(values.astype(np.float64)).tolist())
        for position in np.flatnonzero(np.isnan(values)).tolist():
            rounded[position] = None
        return rounded
    return [None if value is None or value != value else float(f"{float(value):.6g}") for value in values]

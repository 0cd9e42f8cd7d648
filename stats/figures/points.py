"""Shared conventions of the report's plot data: the jitter of RUBER's figures and compact numbers.

RUBER's Figures 4-5 (seed 000, section 4.3) add N(0, 0.25^2) noise to the discrete human scores so that
equal scores do not hide one another; the noise is seeded so that the cloud does not move between loads,
and it is for display only, never for statistics. Six significant digits are plenty on screen and keep
the JSON small. Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable

JITTER_SD = 0.25
JITTER_SEED = 20170211
HOVER_TEXT_LIMIT = 300  # characters of a reply shown on hover; the full text is on the study page


def compact(values: Iterable[float]) -> list[float]:
    return [float(f"{float(value):.6g}") for value in values]


def compact_or_none(values: Iterable[float | None]) -> list[float | None]:
    return [None if value is None or value != value else float(f"{float(value):.6g}") for value in values]

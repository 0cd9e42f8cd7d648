"""Rating scale presets: 0-2 as in RUBER (seed 000, section 4.1), 1-5 as in seeds 001 and 003."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScalePreset:
    minimum: int
    maximum: int
    labels: tuple[str, ...]


SCALE_PRESETS: dict[str, ScalePreset] = {
    "0-2": ScalePreset(0, 2, ("bad", "borderline", "good")),
    "1-5": ScalePreset(1, 5, ("very poor", "poor", "acceptable", "good", "very good")),
}
DEFAULT_QUESTION_NAME = "appropriateness"
DEFAULT_QUESTION_PROMPT = "How appropriate is the reply to the dialog context?"


def scale_preset(name: str) -> ScalePreset:
    try:
        return SCALE_PRESETS[name]
    except KeyError:
        known = ", ".join(SCALE_PRESETS)
        raise ValueError(f"unknown scale {name!r}; choose one of {known}") from None

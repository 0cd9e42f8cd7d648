"""Rating scale presets: 0-2 as in RUBER (seed 000, section 4.1), 1-5 as in seeds 001 and 003."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field


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


@dataclass(frozen=True)
class QuestionSpec:
    name: str
    scale_min: int
    scale_max: int
    labels: Sequence[str] = field(default_factory=tuple)
    prompt: str = ""


_QUESTION_LINE = re.compile(
    r"^(?P<name>[a-z0-9][a-z0-9_-]*)\s+(?P<min>-?\d+)\s*-\s*(?P<max>-?\d+)(?:\s+(?P<labels>.+))?$"
)


def question_specs_from_text(text: str) -> list[QuestionSpec]:
    """Questions written one per line as ``name min-max [label / label / ...]``, e.g.
    ``fluency 1-5 very poor / poor / fair / good / very good``; blank lines are skipped.

    Raises ValueError naming the line and what is wrong with it.
    """
    specs: list[QuestionSpec] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        match = _QUESTION_LINE.match(line)
        if match is None:
            raise ValueError(
                f"line {number}: {line!r} is not `name min-max [labels separated by /]` "
                "(a lowercase name of letters, digits, - or _)"
            )
        minimum, maximum = int(match["min"]), int(match["max"])
        if maximum <= minimum:
            raise ValueError(f"line {number}: the scale {minimum}-{maximum} must go from low to high")
        labels = tuple(label.strip() for label in (match["labels"] or "").split("/") if label.strip())
        if labels and len(labels) != maximum - minimum + 1:
            raise ValueError(
                f"line {number}: {len(labels)} labels for the {maximum - minimum + 1} points of {minimum}-{maximum}"
            )
        if any(spec.name == match["name"] for spec in specs):
            raise ValueError(f"line {number}: the question {match['name']!r} is named twice")
        specs.append(QuestionSpec(match["name"], minimum, maximum, labels))
    return specs

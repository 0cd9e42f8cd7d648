"""Rating scale presets: 0-2 as in RUBER (Tao et al., 2018, section 4.1), 1-5 as in Ghazarian et al. (2019) and Gupta et al. (2019); the rules
every question's scale follows (at most 11 ordinal points; wider ranges are sliders)."""

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
# An ordinal question gets one button and one key per point: 0-10 is the widest scale that still works
# (digits 0-9 plus the 10th key). Wider ranges, e.g. a continuous 0-100 rating, are sliders.
ORDINAL_MAX_POINTS = 11
SLIDER_MAX_POINTS = 1001
QUESTION_KINDS = ("ordinal", "slider")
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
    kind: str = "ordinal"


def scale_problem(
    minimum: int, maximum: int, kind: str = "ordinal", labels: Sequence[str] = ()
) -> str | None:
    """What is wrong with a question's scale, or None: low to high; an ordinal scale has at most
    ``ORDINAL_MAX_POINTS`` points and one label per point (or none); a slider labels its two ends (or not)."""
    if kind not in QUESTION_KINDS:
        return f"unknown question kind {kind!r}; choose {' or '.join(QUESTION_KINDS)}"
    if maximum <= minimum:
        return f"the scale {minimum}-{maximum} must go from low to high"
    points = maximum - minimum + 1
    if kind == "ordinal":
        if points > ORDINAL_MAX_POINTS:
            return (
                f"{minimum}-{maximum} has {points} points; an ordinal scale has at most {ORDINAL_MAX_POINTS} "
                "(one key each): use a slider question for wider ranges"
            )
        if labels and len(labels) != points:
            return f"{len(labels)} labels for the {points} points of {minimum}-{maximum}: give one per point, or none"
        return None
    if points > SLIDER_MAX_POINTS:
        return f"a slider goes over at most {SLIDER_MAX_POINTS} values; {minimum}-{maximum} has {points}"
    if labels and len(labels) != 2:
        return f"a slider takes two labels (its low and high ends), not {len(labels)}"
    return None


_QUESTION_LINE = re.compile(
    r"^(?P<name>[a-z0-9][a-z0-9_-]*)\s+(?P<min>-?\d+)\s*-\s*(?P<max>-?\d+)"
    r"(?:\s+(?P<kind>slider)\b)?(?:\s+(?P<labels>.+))?$"
)


def question_specs_from_text(text: str) -> list[QuestionSpec]:
    """Questions written one per line as ``name min-max [slider] [label / label / ...]``, e.g.
    ``fluency 1-5 very poor / poor / fair / good / very good`` or ``overall 0-100 slider bad / excellent``;
    blank lines are skipped.

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
                f"line {number}: {line!r} is not `name min-max [slider] [labels separated by /]` "
                "(a lowercase name of letters, digits, - or _)"
            )
        minimum, maximum = int(match["min"]), int(match["max"])
        kind = match["kind"] or "ordinal"
        labels = tuple(label.strip() for label in (match["labels"] or "").split("/") if label.strip())
        problem = scale_problem(minimum, maximum, kind, labels)
        if problem is not None:
            raise ValueError(f"line {number}: {problem}")
        if any(spec.name == match["name"] for spec in specs):
            raise ValueError(f"line {number}: the question {match['name']!r} is named twice")
        specs.append(QuestionSpec(match["name"], minimum, maximum, labels, kind=kind))
    return specs

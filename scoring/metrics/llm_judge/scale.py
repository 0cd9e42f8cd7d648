"""The labels a judge answers with for a question's scale, and the reading of their probabilities.

What the model is asked to answer with (its *labels*), for a question's scale of integer points:

- an ordinal scale whose points are all digits 0-9 (0-2 as in Tao et al., 2018; 1-5 as in Gupta et al.,
  2019): the points themselves, ``"0"``, ``"1"``, ``"2"``;
- an ordinal scale with a point that is not one digit (0-10, or a negative point): the letters ``"A"``,
  ``"B"``, ... from the lowest point up, each standing for its point, since a label must be one token for
  the next-token distribution to give its probability, and "10" or "-1" is two tokens in most tokenizers;
- a slider (say 0-100): the nine labels ``"1"`` .. ``"9"``, 1 at the slider's low end and 9 at its high
  end, read back linearly onto the slider's range (an expectation of 5 on a 0-100 slider is 50);
- a nominal scale, categories without an order (the pairwise judge's first reply better, second better,
  tie): the letters ``"A"``, ``"B"``, ... in the order of its categories.

The probability of a label is the sum of the next-token probabilities of every token that reads as the
label once spaces are stripped (``"3"`` and ``" 3"``), so a prompt that ends with or without a space reads
the same label. :func:`reading` turns those probabilities into the expectation over the labels' points
(G-EVAL's score, Liu et al., 2023), the point of the most likely label, and the mass on valid labels.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SLIDER_LABELS = tuple(str(digit) for digit in range(1, 10))
LETTERS = tuple("ABCDEFGHIJK")  # an ordinal scale has at most 11 points


@dataclass(frozen=True)
class JudgeScale:
    """A question's scale: integer points ``minimum``..``maximum``; ``point_labels`` the words of each point
    low to high (ordinal) or of the two ends (slider), possibly empty; ``slider`` for a wide range;
    ``nominal`` for categories without an order (one point each, its words in ``point_labels``)."""

    minimum: int
    maximum: int
    point_labels: tuple[str, ...] = ()
    slider: bool = False
    nominal: bool = False

    def __post_init__(self) -> None:
        if self.maximum <= self.minimum:
            raise ValueError(f"the scale {self.minimum}-{self.maximum} must go from low to high")
        if self.nominal and self.slider:
            raise ValueError("a nominal scale has categories, not a slider's range")
        if not self.slider and self.maximum - self.minimum + 1 > len(LETTERS):
            raise ValueError(
                f"an ordinal scale has at most {len(LETTERS)} points; {self.minimum}-{self.maximum} is a slider"
            )

    @property
    def labels(self) -> tuple[str, ...]:
        """What the judge answers with, lowest point first (the module docstring says which)."""
        if self.slider:
            return SLIDER_LABELS
        points = range(self.minimum, self.maximum + 1)
        if not self.nominal and all(0 <= point <= 9 for point in points):
            return tuple(str(point) for point in points)
        return LETTERS[: len(points)]

    @property
    def values(self) -> tuple[float, ...]:
        """The point of the scale each label stands for, in the question's own units."""
        count = len(self.labels)
        if self.slider:
            span = self.maximum - self.minimum
            return tuple(self.minimum + span * index / (count - 1) for index in range(count))
        return tuple(float(self.minimum + index) for index in range(count))

    @property
    def code(self) -> str:
        """The scale as a signature records it: ``0-2``, ``1-5``, ``0-100~`` for a slider, the labels for a
        nominal scale (``A/B/C``)."""
        if self.nominal:
            return "/".join(self.labels)
        return f"{self.minimum}-{self.maximum}{'~' if self.slider else ''}"

    def described(self) -> str:
        """The scale as a prompt's ``{scale}`` says it: ``0 (bad), 1 (borderline), 2 (good)``; a slider's
        ends carry their words (``1 (not at all) to 9 (completely)``)."""
        labels = self.labels
        if self.slider:
            low, high = (
                (self.point_labels[0], self.point_labels[-1]) if len(self.point_labels) >= 2 else ("", "")
            )
            return f"{_with_word(labels[0], low)} to {_with_word(labels[-1], high)}"
        words = self.point_labels if len(self.point_labels) == len(labels) else ("",) * len(labels)
        parts = [_with_word(label, word) for label, word in zip(labels, words, strict=True)]
        if labels[0] != str(self.minimum) and not self.nominal:  # letters: say which point each stands for
            parts = [f"{part} = {int(value)}" for part, value in zip(parts, self.values, strict=True)]
        return ", ".join(parts)


def _with_word(label: str, word: str) -> str:
    return f"{label} ({word})" if word else label


@dataclass(frozen=True)
class LabelReading:
    """What one answer distribution says: ``expected`` the probability-weighted mean of the labels' points
    (None when no probability fell on any label), ``likeliest`` the point of the most likely label, ``mass``
    the probability on valid labels (0 to 1), and ``probabilities`` per label, renormalised to sum to 1."""

    expected: float | None
    likeliest: float | None
    mass: float
    probabilities: tuple[float, ...]


def reading(scale_values: Sequence[float], label_probabilities: Sequence[float]) -> LabelReading:
    """The reading of one answer from the probability of each label (the scale's labels, in order)."""
    if len(scale_values) != len(label_probabilities):
        raise ValueError(f"{len(label_probabilities)} probabilities for {len(scale_values)} labels")
    mass = math.fsum(label_probabilities)
    if not mass > 0.0:
        return LabelReading(None, None, 0.0, tuple(0.0 for _ in scale_values))
    normalised = tuple(probability / mass for probability in label_probabilities)
    expected = math.fsum(value * weight for value, weight in zip(scale_values, normalised, strict=True))
    best = max(range(len(normalised)), key=lambda index: (normalised[index], -index))
    return LabelReading(expected, float(scale_values[best]), min(1.0, mass), normalised)


def label_probabilities(labels: Sequence[str], token_probabilities: Mapping[str, float]) -> list[float]:
    """Each label's probability from ``{token text: probability}``: the sum over the tokens that read as
    the label once the spaces around it are stripped (``"3"`` and ``" 3"``)."""
    totals = dict.fromkeys(labels, 0.0)
    for token, probability in token_probabilities.items():
        stripped = token.strip(" ")
        if stripped in totals:
            totals[stripped] += probability
    return [totals[label] for label in labels]

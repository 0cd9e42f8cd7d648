"""Validation rules of the reference-collection task (seed 003, appendix A), with no database access.

"We prevent workers from entering replies shorter than 2 characters, the exact same reply more than 1
time and show them a warning prompt if they enter their response too quickly consistently."
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

MIN_CHARACTERS = 2
# Faster than this many characters per second is faster than people type (a fast typist: ~8 chars/s).
MAX_CHARS_PER_SECOND = 15.0
MIN_SECONDS_PER_REPLY = 2.0
TOO_FAST_STREAK = 2  # "consistently": this many fast replies in a row earn the warning

_PUNCTUATION_OR_SPACE = re.compile(r"[\W_]+", re.UNICODE)


def normalise(text: str) -> str:
    """Case, accents' composition, punctuation and spacing do not make a reply different."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _PUNCTUATION_OR_SPACE.sub(" ", folded).strip()


def length_problem(text: str) -> str | None:
    if len(text.strip()) < MIN_CHARACTERS:
        return f"A reply needs at least {MIN_CHARACTERS} characters."
    return None


def repeat_problem(text: str, earlier: Sequence[str]) -> str | None:
    key = normalise(text)
    for previous in earlier:
        if normalise(previous) == key:
            return f"You already wrote this reply (“{previous}”); write a different one."
    return None


def is_too_fast(text: str, seconds: float | None) -> bool:
    """Written in less time than typing it takes (``seconds`` from the first key press to submit)."""
    if seconds is None:
        return False
    return seconds < max(MIN_SECONDS_PER_REPLY, len(text.strip()) / MAX_CHARS_PER_SECOND)

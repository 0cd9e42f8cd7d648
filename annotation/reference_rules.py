"""Validation rules of the reference-collection task (Gupta et al., 2019, appendix A), with no database access.

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
    """Case, accents' composition, punctuation, spacing and invisible characters do not make a reply
    different."""
    folded = visible_text(text).casefold()
    return _PUNCTUATION_OR_SPACE.sub(" ", folded).strip()


def visible_text(text: str) -> str:
    """``text`` as a reader sees it: NFKC-normalised, without format characters (Unicode category Cf:
    zero-width spaces and joiners, direction marks, soft hyphens, the BOM), other invisible controls, and
    surrounding white space. A reply made of zero-width spaces has no visible text at all."""
    normalised = unicodedata.normalize("NFKC", text)
    kept = (
        char
        for char in normalised
        if unicodedata.category(char) not in ("Cf", "Cc", "Cs", "Co", "Cn") or char in "\n\t"
    )
    return "".join(kept).strip()


def length_problem(text: str) -> str | None:
    """Counted on the visible characters (:func:`visible_text`), not on code points."""
    visible = visible_text(text)
    if not visible and text:
        return (
            f"A reply needs at least {MIN_CHARACTERS} characters; "
            "this one has only spaces or invisible characters."
        )
    if len(visible) < MIN_CHARACTERS:
        return f"A reply needs at least {MIN_CHARACTERS} characters."
    return None


def repeat_problem(text: str, earlier: Sequence[str]) -> str | None:
    key = normalise(text)
    for previous in earlier:
        if normalise(previous) == key:
            return f"You already wrote this reply (“{previous}”); write a different one."
    return None


# Fewer key presses than this share of the visible characters: the text did not come from the keyboard
# (pasted past the block, dropped, filled in by the browser, dictated). Typing makes at least one key press
# per character; autocorrect and input methods can save a few, never half.
MIN_KEYSTROKE_SHARE = 0.5


def typing_flags(text: str, *, pasted: bool, keystrokes: int | None) -> list[str]:
    """Flags on how a reference got into the box: "pasted" when the page says so or counted too few key
    presses for the visible text; "no-keystrokes" when the client sent no count (an API client that does
    not measure typing gets no benefit of the doubt)."""
    flags = []
    if keystrokes is None:
        flags.append("no-keystrokes")
    if pasted or (keystrokes is not None and keystrokes < MIN_KEYSTROKE_SHARE * len(visible_text(text))):
        flags.append("pasted")
    return flags


def is_too_fast(text: str, seconds: float | None) -> bool:
    """Written in less time than typing it takes (``seconds``: the server's time since the item was shown
    or the writer's previous reply was stored)."""
    if seconds is None:
        return False
    return seconds < max(MIN_SECONDS_PER_REPLY, len(visible_text(text)) / MAX_CHARS_PER_SECOND)

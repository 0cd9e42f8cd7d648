"""The format-independent shape every parser produces, and that the planner checks against a study.

A parser turns its files into :class:`ParsedImport`: contexts (with their references) and replies
(with ratings or imported mean ratings). It does no database work, so it can be tested on bytes alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ORIGINAL = "original"  # the corpus's own reply (annotation.models.ReferenceOrigin)
IMPORTED = "imported"  # a further reference that came with the data set


@dataclass(frozen=True)
class Source:
    """Where a record was read: the file's base name and its 1-based line."""

    file: str
    line: int | None


@dataclass(frozen=True)
class ReferenceRecord:
    text: str
    origin: str


@dataclass
class ContextRecord:
    """A dialog context as read from a file.

    With ``external_id`` the study's context of that id is reused when there is one; otherwise the
    context is created from ``turns`` (an empty ``turns`` means the file only refers to the id). Without
    an id, a context is reused when the study has one with exactly the same turn texts.
    ``turns_must_match``: a study context of the same id whose turns differ is an error, not a warning
    (a conversation id names one conversation, see conversations.py).
    """

    key: str
    source: Source
    external_id: str = ""
    turns: list[dict[str, Any]] = field(default_factory=list)
    references: list[ReferenceRecord] = field(default_factory=list)
    turns_must_match: bool = False

    def add_reference(self, text: str, origin: str) -> None:
        """Add a reference unless the context already has that exact text (the first origin wins)."""
        if text and all(reference.text != text for reference in self.references):
            self.references.append(ReferenceRecord(text=text, origin=origin))


@dataclass(frozen=True)
class RatingRecord:
    """One rater's integer score. ``question`` None: the question chosen for the import;
    ``annotator`` None: an anonymous imported annotator. ``field`` locates the value in messages.

    ``slot``: for an anonymous score, its position in the reply's list of scores (GRADE's
    ``HumanScores``, a generic rating list without ``annotators``). Anonymous scores in the same slot
    of one import share one anonymous annotator (identity unknown), so a 600-reply file with ten scores
    a reply makes ten annotators, not 6,000; without a slot a score gets an annotator of its own.
    """

    question: str | None
    annotator: str | None
    value: int
    field: str
    slot: int | None = None


@dataclass(frozen=True)
class MeanRatingRecord:
    """A mean of several raters' scores imported without the individual scores (multirefeval's MTurk
    means; ``mean_rating`` of the generic formats). ``raters``: how many raters it averages, if known."""

    question: str | None
    value: float
    raters: int | None
    field: str


@dataclass
class ReplyRecord:
    """A system's reply to a context (``context_key`` is a :attr:`ContextRecord.key`)."""

    source: Source
    context_key: str
    system: str
    text: str
    external_id: str = ""
    is_human: bool = False
    sample_index: int = 0
    ratings: list[RatingRecord] = field(default_factory=list)
    mean_ratings: list[MeanRatingRecord] = field(default_factory=list)


@dataclass
class ParsedImport:
    """Everything one import would add, in file order. ``anonymous_prefix`` names unnamed raters."""

    contexts: list[ContextRecord] = field(default_factory=list)
    replies: list[ReplyRecord] = field(default_factory=list)
    anonymous_prefix: str = "anon"

    def __post_init__(self) -> None:
        self._by_key: dict[str, ContextRecord] = {context.key: context for context in self.contexts}

    def context(self, key: str) -> ContextRecord | None:
        return self._by_key.get(key)

    def add_context(self, context: ContextRecord) -> ContextRecord:
        """Add ``context`` unless one with its key is already there; return the one kept."""
        kept = self._by_key.get(context.key)
        if kept is None:
            self.contexts.append(context)
            self._by_key[context.key] = context
            kept = context
        return kept


def alternating_turns(texts: list[str], extras: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Turns for plain utterances: speakers alternate A, B, A, ... (two-party chit-chat)."""
    turns = []
    for index, text in enumerate(texts):
        turn: dict[str, Any] = {"speaker": "AB"[index % 2], "text": text}
        if extras is not None and index < len(extras):
            turn.update(extras[index])
        turns.append(turn)
    return turns


def text_key(turns: list[dict[str, Any]]) -> str:
    """Identity of a context without an id: its exact turn texts."""
    return "texts:" + "\x1f".join(str(turn.get("text", "")) for turn in turns)


def id_key(external_id: str) -> str:
    return "id:" + external_id


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())

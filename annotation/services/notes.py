"""Annotators' comments and flags on the items they are shown, kept as :class:`ItemNote`.

A note is not an answer: it changes neither the annotator's queue nor the item's counts, and it can be
left on any item of the annotator's own queue, whatever its state (one just shown, one answered, one
skipped). What the note is attached to follows what the annotator saw:

* a reply to rate: that reply (and its context);
* a pair of replies to compare: both replies (``response`` and ``response_b``), so that with three or more
  systems the researcher sees which pair it was about;
* a system's replies to judge for diversity: the context and that system (``response`` empty), the
  researcher sees it on that system's replies to the conversation;
* a context to write references for: the context only (``response`` empty), the researcher sees it as a
  note on the conversation;
* an attention check the researcher made from a reply of the study: that reply, which is what was shown;
* a distractor check (a reply taken from an unrelated dialog): nothing is stored, since what was shown is
  not a reply of the study to that context, but the annotator is told the note was recorded, as for any
  item, so that a check never gives itself away.

Text is stored as typed (stripped) and escaped wherever it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from annotation.models import (
    Annotator,
    Assignment,
    AttentionCheck,
    FlagReason,
    ItemNote,
    NoteKind,
    WorkItem,
    WorkKind,
)

MAX_NOTE_CHARACTERS = 2000


class NoteInvalid(Exception):
    """A note that cannot be stored; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class NoteTarget:
    """What a note on an item is about: a context, and the reply shown when there was one (both replies of
    a pair)."""

    context_id: int
    response_id: int | None
    response_b_id: int | None = None
    system_id: int | None = None  # a diversity item: the system whose replies were shown


def note_target(item: WorkItem) -> NoteTarget | None:
    """The context (and reply) a note on ``item`` is attached to; None for a distractor check."""
    if item.kind == WorkKind.RATE:
        assert item.response is not None  # a rating item always has its reply
        return NoteTarget(context_id=item.response.context_id, response_id=item.response_id)
    if item.kind == WorkKind.CHECK:
        check = item.attention_check
        assert check is not None
        if check.origin == AttentionCheck.Origin.MARKED and check.source_response_id is not None:
            return NoteTarget(context_id=check.context_id, response_id=check.source_response_id)
        return None
    if item.kind == WorkKind.PAIR:
        assert item.response is not None  # a pair item has both replies, to the same context
        return NoteTarget(
            context_id=item.response.context_id,
            response_id=item.response_id,
            response_b_id=item.response_b_id,
        )
    if item.kind == WorkKind.DIVERSITY:
        assert item.context_id is not None  # a diversity item is one system's replies to one context
        return NoteTarget(context_id=item.context_id, response_id=None, system_id=item.system_id)
    if item.context_id is not None:
        return NoteTarget(context_id=item.context_id, response_id=None)
    return None


def validated_note(*, kind: str, reason: str, text: str) -> tuple[str, str, str]:
    """(kind, reason, text) checked and cleaned, or :class:`NoteInvalid` naming the field."""
    kind = (kind or "").strip()
    reason = (reason or "").strip()
    text = (text or "").replace("\r\n", "\n").strip()
    if kind not in NoteKind.values:
        raise NoteInvalid("kind", 'choose "comment" or "flag"')
    if len(text) > MAX_NOTE_CHARACTERS:
        raise NoteInvalid("text", f"at most {MAX_NOTE_CHARACTERS} characters (this one has {len(text)})")
    if kind == NoteKind.FLAG:
        if reason not in FlagReason.values:
            choices = ", ".join(f'"{value}"' for value in FlagReason.values)
            raise NoteInvalid("reason", f"choose why you flag this item: {choices}")
        return kind, reason, text
    if reason:
        raise NoteInvalid("reason", "a comment has no reason; flag the item to give one")
    if not text:
        raise NoteInvalid("text", "write a comment first")
    return kind, "", text


@transaction.atomic
def item_note_add(
    *, annotator: Annotator, assignment_id: int, kind: str, reason: str = "", text: str = ""
) -> ItemNote | None:
    """A comment or a flag by ``annotator`` on the item of one of their own assignments.

    Raises ``Assignment.DoesNotExist`` for an assignment that is not theirs (callers answer 404) and
    :class:`NoteInvalid` for bad input; returns None (nothing stored) for a distractor check."""
    kind, reason, text = validated_note(kind=kind, reason=reason, text=text)
    assignment = Assignment.objects.select_related("item", "item__response", "item__attention_check").get(
        pk=assignment_id, annotator=annotator
    )
    target = note_target(assignment.item)
    if target is None:
        return None
    return ItemNote.objects.create(
        annotator=annotator,
        response_id=target.response_id,
        response_b_id=target.response_b_id,
        context_id=target.context_id,
        system_id=target.system_id,
        kind=kind,
        reason=reason,
        text=text,
    )


__all__ = [
    "MAX_NOTE_CHARACTERS",
    "NoteInvalid",
    "NoteTarget",
    "item_note_add",
    "note_target",
    "validated_note",
]

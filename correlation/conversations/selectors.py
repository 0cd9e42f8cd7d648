"""Reads for the conversation pages: a study's replies grouped into conversations, scored turn by turn.

MaUde (Sinha et al., 2020, section 4.2) scores a conversation one reply at a time and takes the mean over its
replies as the dialog-level score. The ``conversations-jsonl`` import (annotation/importers/
conversations.py) stores turn ``i`` of conversation ``c`` as a context with external id ``"c#i"``
holding turns ``0 .. i-1`` and the system's reply, turn ``i``. This module reads those back:

* a *conversation* is one system's replies to the contexts ``"c#<i>"`` of one id ``c`` (normally one
  system per id; replies of another system to the same contexts make a second conversation of that id);
* its *turns* are the turns of its longest context plus its replies, in turn order; a turn's score is
  the chosen metric's score of the reply at that turn (None for the other speakers' turns, and for a
  reply the metric has not scored);
* its *dialog-level score* is the mean of its scored replies' scores (non-finite values count as
  missing), and the per-system table gives the mean and standard deviation of those means.

A metric is chosen by name. When several signatures of that name scored the study (e.g. two trained
MaUde models), the one with the most scores in the study is used (the newest on a tie) and shown.
Each read is a handful of queries whatever the number of conversations.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, QuerySet

from annotation.models import DialogContext, Response, Study
from scoring.models import MetricScore, MetricSignature

DEFAULT_METRIC = "maude"
TURN_ID = re.compile(r"^(?P<conversation>.+)#(?P<turn>\d+)$")
TURN_ID_SQL = r"^.+#[0-9]+$"  # the same pattern for the database (__regex works on SQLite and PostgreSQL)
BATCH = 500  # ids per query where a list of ids is sent


@dataclass(frozen=True)
class TurnScore:
    """One turn: ``is_reply`` marks the system's replies (the turns a metric scores)."""

    index: int
    speaker: str
    text: str
    is_reply: bool
    score: float | None = None


@dataclass(frozen=True)
class ConversationScores:
    """One system's side of one conversation under one metric."""

    conversation: str
    system: str
    turns: list[TurnScore]

    @property
    def replies(self) -> list[TurnScore]:
        return [turn for turn in self.turns if turn.is_reply]

    @property
    def scored(self) -> int:
        return sum(1 for turn in self.replies if turn.score is not None)

    @property
    def mean(self) -> float | None:
        """The dialog-level score: the mean over the scored replies (None when none is scored)."""
        scores = [turn.score for turn in self.replies if turn.score is not None]
        return statistics.fmean(scores) if scores else None


@dataclass(frozen=True)
class SystemDialogRow:
    """Per system: conversations, those with a dialog-level score, and the mean and sample standard
    deviation of the dialog-level scores (the sd needs two of them)."""

    system: str
    conversations: int
    scored: int
    mean: float | None
    sd: float | None


@dataclass(frozen=True)
class MetricChoice:
    """The metric name and the signature whose scores are read (None: the study has no such scores)."""

    name: str
    signature: MetricSignature | None


@dataclass(frozen=True)
class TurnRow:
    """A turn of :class:`ConversationDetail`: one score per metric (None where there is none)."""

    index: int
    speaker: str
    text: str
    is_reply: bool
    scores: list[float | None]


@dataclass(frozen=True)
class ConversationDetail:
    """One system's side of one conversation under several metrics: ``means[k]`` and ``scored[k]`` are
    the dialog-level score and the number of scored replies of ``metrics[k]``."""

    conversation: str
    system: str
    metrics: list[str]
    rows: list[TurnRow]
    means: list[float | None]
    scored: list[int]

    @property
    def replies(self) -> int:
        return sum(1 for row in self.rows if row.is_reply)

    @property
    def summaries(self) -> list[tuple[str, float | None, int]]:
        """(metric, dialog-level score, scored replies) per metric, for the page."""
        return list(zip(self.metrics, self.means, self.scored, strict=True))


@dataclass
class _Reply:
    turn: int
    context_id: int
    response_id: int
    text: str


@dataclass
class _Conversation:
    conversation: str
    system: str
    position: int
    replies: list[_Reply] = field(default_factory=list)


def parse_turn_id(external_id: str) -> tuple[str, int] | None:
    """``("conv-1", 3)`` for ``"conv-1#3"``; None for a context id that names no conversation turn."""
    match = TURN_ID.match(external_id)
    if match is None:
        return None
    return match.group("conversation"), int(match.group("turn"))


def study_has_conversations(*, study: Study) -> bool:
    """Whether any reply of the study answers a conversation-shaped context ("<conversation>#<turn>")."""
    return Response.objects.filter(context__study=study, context__external_id__regex=TURN_ID_SQL).exists()


def conversation_metric_names(*, study: Study) -> list[str]:
    """The names of the metrics that scored at least one conversation reply of the study, sorted."""
    names = (
        MetricScore.objects.filter(
            response__context__study=study, response__context__external_id__regex=TURN_ID_SQL
        )
        .values_list("signature__name", flat=True)
        .distinct()
    )
    return sorted(set(names))


def default_conversation_metric(names: Sequence[str]) -> str | None:
    """ "maude" when the study has MaUde scores, else the first metric with scores, else None."""
    if DEFAULT_METRIC in names:
        return DEFAULT_METRIC
    return names[0] if names else None


def metric_choice(*, study: Study, name: str) -> MetricChoice:
    """The signature of ``name`` with the most scores on the study's replies (the newest on a tie)."""
    row = (
        MetricScore.objects.filter(response__context__study=study, signature__name=name)
        .values("signature_id")
        .annotate(count=Count("id"))
        .order_by("-count", "-signature_id")
        .first()
    )
    signature = MetricSignature.objects.get(pk=row["signature_id"]) if row else None
    return MetricChoice(name=name, signature=signature)


def study_conversations(
    *, study: Study, metric: MetricChoice | None, conversation: str | None = None
) -> list[ConversationScores]:
    """Every conversation of the study (or those of id ``conversation``), in import order, each with
    its turns scored by ``metric`` (None: no metric, every score None)."""
    groups, turns = _conversations(study=study, conversation=conversation)
    scores = _scores(study, metric, conversation)
    return [_scored(group, turns.get(_longest_context(group), []), scores) for group in groups]


def conversation_details(
    *, study: Study, conversation: str, metrics: Sequence[MetricChoice]
) -> list[ConversationDetail]:
    """The conversations of id ``conversation`` (one per system that answered it), each turn with one
    score per metric of ``metrics`` (in that order); an empty list when the study has no such id."""
    groups, turns = _conversations(study=study, conversation=conversation)
    scores = [_scores(study, metric, conversation) for metric in metrics]
    details = []
    for group in groups:
        context_turns = turns.get(_longest_context(group), [])
        plain = _scored(group, context_turns, {})
        per_metric = [_scored(group, context_turns, metric_scores) for metric_scores in scores]
        details.append(
            ConversationDetail(
                conversation=group.conversation,
                system=group.system,
                metrics=[metric.name for metric in metrics],
                rows=[
                    TurnRow(
                        turn.index,
                        turn.speaker,
                        turn.text,
                        turn.is_reply,
                        [entry.turns[number].score for entry in per_metric],
                    )
                    for number, turn in enumerate(plain.turns)
                ],
                means=[entry.mean for entry in per_metric],
                scored=[entry.scored for entry in per_metric],
            )
        )
    return details


def system_dialog_table(conversations: Sequence[ConversationScores]) -> list[SystemDialogRow]:
    """One row per system, by name: its conversations and the mean and sd of their dialog-level scores."""
    by_system: dict[str, list[ConversationScores]] = {}
    for entry in conversations:
        by_system.setdefault(entry.system, []).append(entry)
    rows = []
    for system in sorted(by_system):
        means = [entry.mean for entry in by_system[system] if entry.mean is not None]
        rows.append(
            SystemDialogRow(
                system=system,
                conversations=len(by_system[system]),
                scored=len(means),
                mean=statistics.fmean(means) if means else None,
                sd=statistics.stdev(means) if len(means) >= 2 else None,
            )
        )
    return rows


def _conversations(
    *, study: Study, conversation: str | None
) -> tuple[list[_Conversation], dict[int, list[dict[str, Any]]]]:
    """The conversations (ordered by the position of their first context) and the turns of their
    longest contexts; three queries."""
    groups = _conversation_replies(study=study, conversation=conversation)
    return groups, _longest_context_turns(groups) if groups else {}


def _conversation_contexts(*, study: Study, conversation: str | None) -> QuerySet[DialogContext]:
    """The study's conversation-shaped contexts (those of one conversation id when given; the exact id
    is checked in Python, since ``startswith`` also matches "<id>#..." ids of longer conversations)."""
    contexts = DialogContext.objects.filter(study=study, external_id__regex=TURN_ID_SQL)
    if conversation is not None:
        contexts = contexts.filter(external_id__startswith=f"{conversation}#")
    return contexts


def _conversation_replies(*, study: Study, conversation: str | None) -> list[_Conversation]:
    """The replies to conversation-shaped contexts grouped by (conversation, system)."""
    contexts = _conversation_contexts(study=study, conversation=conversation)
    turn_of: dict[int, int] = {}
    conversation_of: dict[int, str] = {}
    position_of: dict[int, int] = {}
    for pk, external_id, position in contexts.values_list("pk", "external_id", "position"):
        parsed = parse_turn_id(external_id)
        if parsed is None or (conversation is not None and parsed[0] != conversation):
            continue
        conversation_of[pk], turn_of[pk] = parsed
        position_of[pk] = position
    if not conversation_of:
        return []
    groups: dict[tuple[str, str], _Conversation] = {}
    responses = (
        Response.objects.filter(context__in=contexts)
        .order_by("context_id", "sample_index", "id")
        .values_list("pk", "context_id", "system__name", "text")
    )
    for response_id, context_id, system, text in responses:
        if context_id not in conversation_of:
            continue
        key = (conversation_of[context_id], system)
        group = groups.setdefault(key, _Conversation(key[0], system, position_of[context_id]))
        group.position = min(group.position, position_of[context_id])
        if group.replies and group.replies[-1].context_id == context_id:
            continue  # another sample of the same system at the same turn: the first one is the turn
        group.replies.append(_Reply(turn_of[context_id], context_id, response_id, text))
    for group in groups.values():
        group.replies.sort(key=lambda reply: reply.turn)
    return sorted(groups.values(), key=lambda group: (group.position, group.conversation, group.system))


def _longest_context(group: _Conversation) -> int:
    return group.replies[-1].context_id


def _longest_context_turns(groups: Sequence[_Conversation]) -> dict[int, list[dict[str, Any]]]:
    """context id -> turns, for the longest context of every conversation only (the other contexts
    repeat their turns); batched, because SQLite limits the variables of one query."""
    wanted = sorted({_longest_context(group) for group in groups})
    turns: dict[int, list[dict[str, Any]]] = {}
    for start in range(0, len(wanted), BATCH):
        batch = wanted[start : start + BATCH]
        turns.update(DialogContext.objects.filter(pk__in=batch).values_list("pk", "turns"))
    return turns


def _scores(study: Study, metric: MetricChoice | None, conversation: str | None) -> dict[int, float]:
    """response id -> score of ``metric``'s signature on the replies to conversation contexts (one query);
    non-finite values count as missing."""
    if metric is None or metric.signature is None:
        return {}
    contexts = _conversation_contexts(study=study, conversation=conversation)
    rows = MetricScore.objects.filter(signature=metric.signature, response__context__in=contexts).values_list(
        "response_id", "value"
    )
    return {pk: float(value) for pk, value in rows if value is not None and math.isfinite(value)}


def _scored(
    group: _Conversation, context_turns: list[dict[str, Any]], scores: dict[int, float]
) -> ConversationScores:
    replies = {reply.turn: reply for reply in group.replies}
    last = max([len(context_turns) - 1, *replies])
    turns = []
    for index in range(last + 1):
        reply = replies.get(index)
        stored = context_turns[index] if index < len(context_turns) else None
        if reply is not None:
            speaker = str(stored["speaker"]) if stored and "speaker" in stored else ""
            turns.append(
                TurnScore(index, speaker, reply.text, is_reply=True, score=scores.get(reply.response_id))
            )
        elif stored is not None:
            turns.append(TurnScore(index, str(stored.get("speaker", "")), str(stored.get("text", "")), False))
    speaker = next((turn.speaker for turn in turns if turn.is_reply and turn.speaker), group.system)
    return ConversationScores(
        conversation=group.conversation,
        system=group.system,
        turns=[
            TurnScore(turn.index, speaker, turn.text, True, turn.score)
            if turn.is_reply and not turn.speaker
            else turn
            for turn in turns
        ],
    )

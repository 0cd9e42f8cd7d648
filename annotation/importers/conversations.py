"""The ``conversations-jsonl`` format: whole conversations, one JSON object per line (docs/conversations.md).

MaUde (Sinha et al., 2020, section 4.2) scores a conversation turn by turn: every turn of the bot is a reply to
everything said before it, and the dialog-level score is the mean over those replies. So each turn ``i``
of the ``bot`` speaker that has at least one earlier turn becomes one reply to score:

* a context with external id ``"<id>#<i>"`` whose turns are turns ``0 .. i-1`` (every speaker, the
  bot's own earlier turns included), and
* a reply of system ``system`` to that context, with turn ``i``'s text (and the same external id).

A conversation id names one conversation: ids are unique in an import, and a later import that gives an
id the study already holds with different turns is rejected (planning.py, ``turns_must_match``), so that
two conversations never share their contexts. Importing the same file twice is rejected as duplicate
replies, as with every format that adds replies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from annotation.importers.records import ContextRecord, ParsedImport, ReplyRecord, Source, id_key
from kernel.importing.json_lines import is_text, json_objects
from kernel.importing.limits import EXTERNAL_ID_MAX, SYSTEM_NAME_MAX
from kernel.importing.problems import ImportFile, ProblemLog

KNOWN_KEYS = {"id", "system", "bot", "turns"}
DEFAULT_BOT = "bot"
TURN_SEPARATOR = "#"  # "<conversation id>#<turn index>": correlation/conversations/selectors.py reads it back


@dataclass(frozen=True)
class Conversation:
    """One line, checked: its id, the system that plays the bot, the bot's speaker name and the turns."""

    source: Source
    id: str
    system: str
    bot: str
    turns: list[dict[str, Any]]


def turn_external_id(conversation: str, index: int) -> str:
    """The external id of the context (and reply) of turn ``index`` of ``conversation``."""
    return f"{conversation}{TURN_SEPARATOR}{index}"


def parse_conversations(files: Sequence[ImportFile], log: ProblemLog) -> ParsedImport:
    parsed = ParsedImport(anonymous_prefix="conversations-anon")
    first_seen: dict[str, Source] = {}
    for file in files:
        unknown_warned: set[str] = set()
        for line, record in json_objects(file, log):
            source = Source(file.basename, line)
            for key in sorted(set(record) - KNOWN_KEYS - unknown_warned):
                unknown_warned.add(key)
                log.warn(file.basename, line, key, "unknown key, ignored (this and later lines)")
            conversation = _conversation(source, record, first_seen, log)
            if conversation is not None:
                _add_replies(conversation, parsed, log)
    return parsed


def _conversation(
    source: Source, record: dict[str, Any], first_seen: dict[str, Source], log: ProblemLog
) -> Conversation | None:
    """The line as a :class:`Conversation`, or None after logging every problem it has."""
    before = len(log.problems)

    def problem(name: str, message: str) -> None:
        log.problem(source.file, source.line, name, message)

    conversation_id = _conversation_id(record.get("id"), problem)
    if conversation_id:
        seen = first_seen.get(conversation_id)
        if seen is not None:
            where = f"line {seen.line}" if seen.file == source.file else f"{seen.file}, line {seen.line}"
            problem("id", f"id {conversation_id!r} was already used on {where}")
        else:
            first_seen[conversation_id] = source
    system: Any = record.get("system")
    if "system" not in record:
        problem("system", "missing required key (the name of the system that plays the bot)")
    elif not is_text(system):
        problem("system", "must be a non-empty string")
    elif len(system.strip()) > SYSTEM_NAME_MAX:
        problem("system", f"longer than {SYSTEM_NAME_MAX} characters")
    bot: Any = record.get("bot", DEFAULT_BOT)
    if not is_text(bot):
        problem("bot", "must be a non-empty string (the speaker whose turns are scored)")
    turns = _turns(record.get("turns"), "turns" in record, problem)
    if turns and is_text(bot):
        speakers = list(dict.fromkeys(turn["speaker"] for turn in turns))
        if bot.strip() not in speakers:
            problem(
                "bot",
                f'the bot speaker "{bot.strip()}" never speaks in "turns" (speakers: {", ".join(speakers)}); '
                'set "bot" to the speaker whose turns are scored',
            )
    if conversation_id and turns:
        longest = turn_external_id(conversation_id, len(turns) - 1)
        if len(longest) > EXTERNAL_ID_MAX:
            problem("id", f'"<id>#<turn>" ids must fit in {EXTERNAL_ID_MAX} characters; shorten the id')
    if len(log.problems) > before or turns is None:
        return None
    return Conversation(source, conversation_id, system.strip(), bot.strip(), turns)


def _conversation_id(value: Any, problem: Any) -> str:
    if value is None:
        problem("id", "missing required key (a conversation id, unique in the file)")
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        problem("id", "must be a string or an integer")
        return ""
    text = str(value).strip()
    if not text:
        problem("id", "must not be empty")
    return text


def _turns(value: Any, present: bool, problem: Any) -> list[dict[str, Any]] | None:
    """The turns, speaker and text stripped (other keys kept); None after logging the first bad turn."""
    if not present:
        problem("turns", 'missing required key (a list of {"speaker", "text"} objects)')
        return None
    if not isinstance(value, list) or not value:
        problem("turns", 'must be a non-empty list of {"speaker", "text"} objects')
        return None
    turns = []
    for index, turn in enumerate(value):
        where = f"turns[{index}]"
        if not isinstance(turn, dict):
            problem(where, 'must be an object {"speaker": "...", "text": "..."}')
            return None
        for key in ("speaker", "text"):
            if not is_text(turn.get(key)):
                problem(f"{where}.{key}", "missing" if key not in turn else "must be a non-empty string")
                return None
        turns.append({**turn, "speaker": turn["speaker"].strip(), "text": turn["text"].strip()})
    return turns


def _add_replies(conversation: Conversation, parsed: ParsedImport, log: ProblemLog) -> None:
    """One context and one reply per bot turn after the first turn."""
    source = conversation.source
    added = 0
    for index, turn in enumerate(conversation.turns):
        if index == 0 or turn["speaker"] != conversation.bot:
            continue
        external_id = turn_external_id(conversation.id, index)
        context = parsed.add_context(
            ContextRecord(
                key=id_key(external_id),
                source=source,
                external_id=external_id,
                turns=[dict(earlier) for earlier in conversation.turns[:index]],
                turns_must_match=True,
            )
        )
        parsed.replies.append(
            ReplyRecord(
                source=source,
                context_key=context.key,
                system=conversation.system,
                text=turn["text"],
                external_id=external_id,
            )
        )
        added += 1
    if not added:
        log.warn(
            source.file,
            source.line,
            "turns",
            f'the bot speaker "{conversation.bot}" only speaks first; this conversation has no reply to score',
        )

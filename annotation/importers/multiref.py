"""multirefeval's multireftest.json (Gupta et al., SIGDIAL 2019; Gupta et al. (2019), section 3): DailyDialog test
dialogues with five references for every context.

For dialogue d and turn i that has ``responses``, the context is turns 0..i (external id ``"{d}_{i}"``,
as in the rating file's ``context_id``), ``responses[0]`` is the corpus's original reply and
``responses[1:]`` the four references collected by the authors (Gupta et al., 2019, section 3.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from annotation.importers.records import (
    IMPORTED,
    ORIGINAL,
    ContextRecord,
    ParsedImport,
    Source,
    alternating_turns,
    id_key,
)
from kernel.importing.json_lines import json_objects
from kernel.importing.limits import EXTERNAL_ID_MAX
from kernel.importing.problems import ImportFile, ProblemLog

TURN_LABELS = ("act", "emotion")


def parse_multiref(files: Sequence[ImportFile], log: ProblemLog) -> ParsedImport:
    parsed = ParsedImport(anonymous_prefix="multiref-anon")
    with_prefix = len(files) > 1
    for file in files:
        prefix = f"{PurePath(file.basename).stem}:" if with_prefix else ""
        for dialogue, (number, record) in enumerate(json_objects(file, log)):
            _add_dialogue(f"{prefix}{dialogue}", Source(file.basename, number), record, parsed, log)
    return parsed


def _add_dialogue(
    dialogue_id: str, source: Source, record: dict[str, Any], parsed: ParsedImport, log: ProblemLog
) -> None:
    turns = record.get("dialogue")
    if not isinstance(turns, list) or not turns:
        message = "missing" if turns is None else "must be a non-empty list of turns"
        log.problem(source.file, source.line, "dialogue", message)
        return
    texts: list[str] = []
    extras: list[dict[str, Any]] = []
    replies: list[list[str]] = []
    for index, turn in enumerate(turns):
        where = f"dialogue[{index}]"
        if not isinstance(turn, dict) or not isinstance(turn.get("text"), str) or not turn["text"].strip():
            log.problem(source.file, source.line, f"{where}.text", "every turn needs a non-empty text")
            return
        responses = turn.get("responses") or []
        if not isinstance(responses, list) or not all(isinstance(text, str) for text in responses):
            log.problem(source.file, source.line, f"{where}.responses", "must be a list of strings")
            return
        texts.append(turn["text"])
        extras.append({key: turn[key] for key in TURN_LABELS if key in turn})
        replies.append(responses)
    all_turns = alternating_turns(texts, extras)
    for index, responses in enumerate(replies):
        if not responses:
            continue
        external_id = f"{dialogue_id}_{index}"
        if len(external_id) > EXTERNAL_ID_MAX:
            log.problem(source.file, source.line, None, f"context id {external_id[:40]}... is too long")
            return
        context = ContextRecord(
            key=id_key(external_id), source=source, external_id=external_id, turns=all_turns[: index + 1]
        )
        for position, text in enumerate(responses):
            if not text.strip():
                log.warn(
                    source.file, source.line, f"dialogue[{index}].responses[{position}]", "empty; skipped"
                )
                continue
            context.add_reference(text, ORIGINAL if position == 0 else IMPORTED)
        parsed.add_context(context)

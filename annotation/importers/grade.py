"""GRADE's human judgements on DailyDialog (Huang et al., EMNLP 2020), one rated reply per JSON line.

Each line keeps the per-annotator 1-5 coherence scores (``HumanScores``, a string holding a JSON list)
but not who gave them. Score i of every line is a rating by the import's anonymous annotator of slot i
(identity unknown: nothing says position i is one person across lines, and reports never treat it as
one), so the 300 replies of the released file make 11 annotators, not one per score.
Contexts (two turns joined by "|||") are shared by the systems that answered them. The released file
rates one system's reply to one context twice (two items with distinct IDs); the second is stored as
sample 1 of that system for that context, with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotation.importers.records import (
    ORIGINAL,
    ContextRecord,
    ParsedImport,
    RatingRecord,
    ReplyRecord,
    Source,
    alternating_turns,
    text_key,
)
from kernel.importing.json_lines import integer_rating, is_text, json_objects, json_value
from kernel.importing.limits import EXTERNAL_ID_MAX, SYSTEM_NAME_MAX
from kernel.importing.problems import ImportFile, ProblemLog

REQUIRED_KEYS = ("ID", "DialogModel", "Context", "Response", "HumanScores")
TURN_SEPARATOR = "|||"


def parse_grade(files: Sequence[ImportFile], log: ProblemLog) -> ParsedImport:
    parsed = ParsedImport(anonymous_prefix="grade-anon")
    ids: dict[str, Source] = {}
    samples: dict[tuple[str, str, int], Source] = {}  # (system, context key, sample) -> item
    for file in files:
        for line, record in json_objects(file, log):
            _add_item(Source(file.basename, line), record, parsed, ids, samples, log)
    return parsed


def _add_item(
    source: Source,
    record: dict[str, Any],
    parsed: ParsedImport,
    ids: dict[str, Source],
    samples: dict[tuple[str, str, int], Source],
    log: ProblemLog,
) -> None:
    problems = len(log.problems)
    for key in REQUIRED_KEYS:
        if key not in record:
            log.problem(source.file, source.line, key, "missing required key")
    if len(log.problems) > problems:
        return
    item_id = str(record["ID"])
    system, response, context_text = record["DialogModel"], record["Response"], record["Context"]
    if not is_text(system) or len(system) > SYSTEM_NAME_MAX:
        log.problem(
            source.file, source.line, "DialogModel", f"must be a name of 1 to {SYSTEM_NAME_MAX} characters"
        )
    if not is_text(response):
        log.problem(source.file, source.line, "Response", "empty response")
    if not is_text(context_text):
        log.problem(source.file, source.line, "Context", "empty context")
    if len(item_id) > EXTERNAL_ID_MAX:
        log.problem(source.file, source.line, "ID", f"longer than {EXTERNAL_ID_MAX} characters")
    elif item_id in ids:
        log.problem(
            source.file, source.line, "ID", f"ID {item_id} was already used on line {ids[item_id].line}"
        )
    scores = _scores(source, record["HumanScores"], log)
    if len(log.problems) > problems or scores is None:
        return
    ids[item_id] = source

    texts = [turn.strip() for turn in context_text.split(TURN_SEPARATOR)]
    if not all(texts):
        log.problem(source.file, source.line, "Context", f'empty turn between "{TURN_SEPARATOR}" separators')
        return
    turns = alternating_turns(texts)
    context = parsed.add_context(ContextRecord(key=text_key(turns), source=source, turns=turns))
    if is_text(record.get("Reference")):
        context.add_reference(record["Reference"].strip(), ORIGINAL)
    sample_index = 0
    while (system, context.key, sample_index) in samples:
        sample_index += 1
    if sample_index:
        first = samples[(system, context.key, 0)]
        log.warn(
            source.file,
            source.line,
            "ID",
            f"item {item_id} rates another reply of {system} to the context of line {first.line}; "
            f"stored as sample {sample_index}",
        )
    samples[(system, context.key, sample_index)] = source
    parsed.replies.append(
        ReplyRecord(
            source=source,
            context_key=context.key,
            system=system,
            text=response.strip(),
            external_id=item_id,
            sample_index=sample_index,
            ratings=[
                RatingRecord(
                    question=None, annotator=None, value=value, field=f"HumanScores[{index}]", slot=index
                )
                for index, value in enumerate(scores)
            ],
        )
    )


def _scores(source: Source, raw: Any, log: ProblemLog) -> list[int] | None:
    """The per-annotator scores: HumanScores is a string holding a JSON list (a plain list is accepted)."""
    values = raw
    if isinstance(raw, str):
        values, problem = json_value(raw)  # None (with why) for invalid or too deeply nested JSON
        if problem is not None:
            values = None
    if not isinstance(values, list) or not values:
        log.problem(
            source.file, source.line, "HumanScores", "must hold a non-empty JSON list of integer scores"
        )
        return None
    scores = []
    for index, value in enumerate(values):
        score = integer_rating(value)
        if score is None:
            log.problem(
                source.file, source.line, f"HumanScores[{index}]", f"{value!r} is not an integer rating"
            )
        else:
            scores.append(score)
    return scores if len(scores) == len(values) else None

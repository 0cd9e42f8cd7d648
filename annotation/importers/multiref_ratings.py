"""multirefeval's mturk_rating_processed_output.csv (Gupta et al., 2019, section 5.1.1): 100 DailyDialog test
contexts x 5 systems, each reply with the mean of several MTurk appropriateness ratings on a 1-5 scale.

The per-rater scores were not released, so each row becomes one :class:`ImportedMeanRating`. Contexts are
found by ``context_id`` among those a ``multiref`` import created; a context not yet in the study is
built from the row's own ``context`` column (turns separated by "||||") with ``prevgt`` as its original
reference and ``all_references`` (TAB-separated) as further ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from annotation.importers.records import (
    IMPORTED,
    ORIGINAL,
    ContextRecord,
    MeanRatingRecord,
    ParsedImport,
    ReplyRecord,
    Source,
    alternating_turns,
    id_key,
)
from kernel.importing.csv_rows import csv_rows
from kernel.importing.limits import EXTERNAL_ID_MAX, SYSTEM_NAME_MAX
from kernel.importing.problems import ImportFile, ProblemLog

REQUIRED_COLUMNS = ("model", "context_id", "human_average_rating", "response")
TURN_SEPARATOR = "||||"
HUMAN_SYSTEM = "human"  # the row holds the corpus's own reply (Gupta et al., 2019, table 2 "Human")


def parse_multiref_ratings(files: Sequence[ImportFile], log: ProblemLog) -> ParsedImport:
    parsed = ParsedImport(anonymous_prefix="multiref-anon")
    for file in files:
        for line, _, row in csv_rows(file, REQUIRED_COLUMNS, log):
            _add_row(Source(file.basename, line), row, parsed, log)
    return parsed


def _add_row(source: Source, row: dict[str, str], parsed: ParsedImport, log: ProblemLog) -> None:
    problems = len(log.problems)
    model = row["model"].strip()
    context_id = row["context_id"].strip()
    response = row["response"].strip()
    if not model:
        log.problem(source.file, source.line, "model", "empty system name")
    elif len(model) > SYSTEM_NAME_MAX:
        log.problem(source.file, source.line, "model", f"longer than {SYSTEM_NAME_MAX} characters")
    if not context_id:
        log.problem(source.file, source.line, "context_id", "empty context id")
    elif len(context_id) > EXTERNAL_ID_MAX:
        log.problem(source.file, source.line, "context_id", f"longer than {EXTERNAL_ID_MAX} characters")
    if not response:
        log.problem(source.file, source.line, "response", "empty response")
    try:
        mean = float(row["human_average_rating"])
    except ValueError:
        mean = math.nan
    if not math.isfinite(mean):
        log.problem(
            source.file,
            source.line,
            "human_average_rating",
            f"{row['human_average_rating']!r} is not a number",
        )
    if len(log.problems) > problems:
        return

    turns = (
        [turn.strip() for turn in row.get("context", "").split(TURN_SEPARATOR)] if row.get("context") else []
    )
    if any(not turn for turn in turns):
        log.problem(source.file, source.line, "context", "empty turn")
        return
    context = ContextRecord(
        key=id_key(context_id),
        source=source,
        external_id=context_id,
        turns=alternating_turns(turns),
    )
    context.add_reference(row.get("prevgt", "").strip(), ORIGINAL)
    for text in row.get("all_references", "").split("\t"):
        context.add_reference(text.strip(), IMPORTED)
    kept = parsed.add_context(context)
    for reference in context.references if kept is not context else []:
        kept.add_reference(reference.text, reference.origin)
    if kept is not context and [turn["text"] for turn in kept.turns] != turns:
        if not kept.turns:  # an earlier row named the id only; this one says what the context is
            kept.turns = context.turns
        elif turns:
            log.warn(
                source.file,
                source.line,
                "context",
                f"differs from the context of line {kept.source.line} for the same context id; "
                "that one is used",
            )
    parsed.replies.append(
        ReplyRecord(
            source=source,
            context_key=kept.key,
            system=model,
            text=response,
            is_human=model.lower() == HUMAN_SYSTEM,
            mean_ratings=[
                MeanRatingRecord(question=None, value=mean, raters=None, field="human_average_rating")
            ],
        )
    )

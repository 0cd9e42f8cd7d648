"""The generic ``csv`` format: one reply per row (docs/import-formats.md); meaning in replies.py.

List-valued cells are joined: context turns and references by "|||", annotators and rating values
by ";". An empty value inside a rating list means "this annotator did not rate this reply".
``mean_rating`` (the import's question) or ``mean_rating:<question>`` holds a mean of several raters'
scores, ``n_raters`` (every mean of the row) or ``n_raters:<question>`` how many; an empty cell: none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotation.importers.mean_ratings import (
    MEAN_KEY,
    RATERS_KEY,
    GivenMean,
    GivenRaters,
    mean_rating_records,
    raters_problem,
    text_mean,
)
from annotation.importers.records import MeanRatingRecord, ParsedImport, Source, alternating_turns
from annotation.importers.replies import RatingList, ReplyCollector, ReplyFields
from kernel.importing.csv_rows import csv_rows
from kernel.importing.problems import ImportFile, ProblemLog

REQUIRED_COLUMNS = ("response", "system")
OPTIONAL_COLUMNS = ("context", "context_id", "id", "references", "annotators", MEAN_KEY, RATERS_KEY)
RATING_PREFIX = "rating:"
MEAN_PREFIX = f"{MEAN_KEY}:"
RATERS_PREFIX = f"{RATERS_KEY}:"
TEXT_SEPARATOR = "|||"
LIST_SEPARATOR = ";"


def parse_csv(files: Sequence[ImportFile], log: ProblemLog) -> ParsedImport:
    parsed = ParsedImport(anonymous_prefix="csv-anon")
    collector = ReplyCollector(parsed, log)
    for file in files:
        checked_header = False
        for line, header, row in csv_rows(file, REQUIRED_COLUMNS, log):
            if not checked_header:
                checked_header = True
                if not _header_usable(file.basename, header, log):
                    break
            fields = _fields(Source(file.basename, line), row, log)
            if fields is not None:
                collector.add(fields)
    return parsed


def _header_usable(name: str, header: list[str], log: ProblemLog) -> bool:
    if "context" not in header and "context_id" not in header:
        log.problem(name, 1, "context", "missing required column (context, or context_id for known contexts)")
        return False
    for column in header:
        known = (
            column in REQUIRED_COLUMNS
            or column in OPTIONAL_COLUMNS
            or column.startswith((RATING_PREFIX, MEAN_PREFIX, RATERS_PREFIX))
        )
        if not known:
            log.warn(name, 1, column, "unknown column, ignored")
    return True


def _split(cell: str, separator: str) -> list[str]:
    return [part.strip() for part in cell.split(separator)] if cell.strip() else []


def _fields(source: Source, row: dict[str, str], log: ProblemLog) -> ReplyFields | None:
    before = len(log.problems)

    def problem(name: str, message: str) -> None:
        log.problem(source.file, source.line, name, message)

    texts = _split(row.get("context", ""), TEXT_SEPARATOR)
    if any(not text for text in texts):
        problem("context", f'empty turn between "{TEXT_SEPARATOR}" separators')
    annotators = _split(row["annotators"], LIST_SEPARATOR) if row.get("annotators", "").strip() else None
    ratings: dict[str, RatingList] = {}
    for column, cell in row.items():
        if column.startswith(RATING_PREFIX) and cell.strip():
            ratings[column.removeprefix(RATING_PREFIX).strip()] = RatingList(
                field=column, values=_values(column, cell, problem)
            )
    means = _means(row, problem)
    if len(log.problems) > before:
        return None
    turns: list[dict[str, Any]] | None = alternating_turns(texts) if texts else None
    return ReplyFields(
        source=source,
        response=row["response"],
        system=row["system"],
        turns=turns,
        item_id=row.get("id", "").strip(),
        context_id=row.get("context_id", "").strip(),
        references=[text for text in _split(row.get("references", ""), TEXT_SEPARATOR) if text],
        ratings=ratings,
        annotators=annotators,
        mean_ratings=means,
    )


def _values(column: str, cell: str, problem: Any) -> list[int | None]:
    values: list[int | None] = []
    for index, part in enumerate(cell.split(LIST_SEPARATOR)):
        part = part.strip()
        if not part:
            values.append(None)
            continue
        try:
            values.append(int(part))
        except ValueError:
            hint = f'; a mean of several raters\' scores goes in a "{MEAN_PREFIX}<question>" column'
            problem(
                f"{column}[{index}]",
                f"{part!r} is not an integer rating{hint if text_mean(part) is not None else ''}",
            )
            values.append(None)
    return values


def _means(row: dict[str, str], problem: Any) -> list[MeanRatingRecord]:
    means: list[GivenMean] = []
    row_raters: GivenRaters | None = None
    by_question: dict[str, GivenRaters] = {}
    for column, cell in row.items():
        text = cell.strip()
        if not text:
            continue
        if column == MEAN_KEY or column.startswith(MEAN_PREFIX):
            mean = text_mean(text)
            if mean is None:
                problem(column, f"{text!r} is not a number (the mean of several raters' scores)")
                continue
            question = column.removeprefix(MEAN_PREFIX).strip() if column != MEAN_KEY else None
            means.append(GivenMean(question=question, field=column, value=mean))
        elif column == RATERS_KEY or column.startswith(RATERS_PREFIX):
            try:
                count: int | None = int(text)
            except ValueError:
                count = None
            why = raters_problem(count)
            if why is not None or count is None:
                problem(column, f"{text!r}: {why}")
                continue
            given = GivenRaters(field=column, count=count)
            if column == RATERS_KEY:
                row_raters = given
            else:
                by_question[column.removeprefix(RATERS_PREFIX).strip()] = given
    return mean_rating_records(means, row_raters, by_question, problem)

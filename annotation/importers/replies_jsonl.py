"""The generic ``jsonl`` format: one reply per line (docs/import-formats.md); meaning in replies.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotation.importers.mean_ratings import (
    MEAN_KEY,
    RATERS_KEY,
    GivenMean,
    GivenRaters,
    json_mean,
    mean_rating_records,
    raters_problem,
)
from annotation.importers.records import MeanRatingRecord, ParsedImport, Source, alternating_turns
from annotation.importers.replies import RatingList, ReplyCollector, ReplyFields
from kernel.importing.json_lines import integer_rating, json_objects
from kernel.importing.problems import ImportFile, ProblemLog

KNOWN_KEYS = {
    "id",
    "context_id",
    "context",
    "response",
    "system",
    "references",
    "ratings",
    "annotators",
    MEAN_KEY,
    RATERS_KEY,
}
MEAN_HINT = f'; a mean of several raters\' scores goes in "{MEAN_KEY}"'


def parse_jsonl(files: Sequence[ImportFile], log: ProblemLog) -> ParsedImport:
    parsed = ParsedImport(anonymous_prefix="jsonl-anon")
    collector = ReplyCollector(parsed, log)
    for file in files:
        unknown_warned: set[str] = set()
        for line, record in json_objects(file, log):
            source = Source(file.basename, line)
            for key in sorted(set(record) - KNOWN_KEYS - unknown_warned):
                unknown_warned.add(key)
                log.warn(file.basename, line, key, "unknown key, ignored (this and later lines)")
            fields = _fields(source, record, log)
            if fields is not None:
                collector.add(fields)
    return parsed


def _fields(source: Source, record: dict[str, Any], log: ProblemLog) -> ReplyFields | None:
    before = len(log.problems)

    def problem(name: str, message: str) -> None:
        log.problem(source.file, source.line, name, message)

    for key in ("response", "system"):
        if key not in record:
            problem(key, "missing required key")
        elif not isinstance(record[key], str):
            problem(key, "must be a string")
    identifiers = {}
    for key in ("id", "context_id"):
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, str | int)):
            problem(key, "must be a string or an integer")
        identifiers[key] = "" if value is None else str(value).strip()
    turns = _turns(record.get("context"), problem)
    references = record.get("references", [])
    if not isinstance(references, list) or not all(isinstance(text, str) for text in references):
        problem("references", "must be a list of strings")
    annotators = record.get("annotators")
    if annotators is not None and (
        not isinstance(annotators, list) or not all(isinstance(name, str) for name in annotators)
    ):
        problem("annotators", "must be a list of names")
    ratings = _ratings(record.get("ratings"), problem)
    means = _means(record, problem)
    if len(log.problems) > before:
        return None
    return ReplyFields(
        source=source,
        response=record["response"],
        system=record["system"],
        turns=turns,
        item_id=identifiers["id"],
        context_id=identifiers["context_id"],
        references=[text for text in references if text.strip()],
        ratings=ratings,
        annotators=[name.strip() for name in annotators] if annotators is not None else None,
        mean_ratings=means,
    )


def _turns(context: Any, problem: Any) -> list[dict[str, Any]] | None:
    """Turns from a list of strings (speakers A/B alternate) or of {"speaker", "text", ...} objects."""
    if context is None:
        return None
    if not isinstance(context, list):
        problem("context", "must be a list of turns")
        return None
    turns: list[dict[str, Any]] = []
    for index, turn in enumerate(context):
        if isinstance(turn, str):
            turn = {"text": turn}
        if not isinstance(turn, dict) or not isinstance(turn.get("text"), str) or not turn["text"].strip():
            problem(f"context[{index}]", "a turn is a non-empty string or an object with a non-empty text")
            return None
        speaker = turn.get("speaker")
        if speaker is not None and not isinstance(speaker, str):
            problem(f"context[{index}].speaker", "must be a string")
            return None
        turns.append(turn)
    plain = alternating_turns([turn["text"] for turn in turns])
    return [{**alternate, **turn} for alternate, turn in zip(plain, turns, strict=True)]


def _ratings(ratings: Any, problem: Any) -> dict[str, RatingList]:
    if ratings is None:
        return {}
    if not isinstance(ratings, dict):
        problem("ratings", 'must be an object {"question-name": [values, ...]}')
        return {}
    checked: dict[str, RatingList] = {}
    for question, values in ratings.items():
        where = f"ratings.{question}"
        if not isinstance(values, list):
            problem(where, "must be a list of integer ratings")
            continue
        numbers: list[int | None] = []
        for index, value in enumerate(values):
            number = integer_rating(value) if value is not None else None
            if value is not None and number is None:
                hint = MEAN_HINT if json_mean(value) is not None else ""
                problem(f"{where}[{index}]", f"{value!r} is not an integer rating{hint}")
            numbers.append(number)
        checked[question] = RatingList(field=where, values=numbers)
    return checked


def _means(record: dict[str, Any], problem: Any) -> list[MeanRatingRecord]:
    """``mean_rating``: a number (the import's question) or ``{"question-name": mean}``; ``n_raters``: a
    count for every mean of the line or ``{"question-name": count}``."""
    given = record.get(MEAN_KEY)
    means: list[GivenMean] = []
    if isinstance(given, dict):
        for question, value in given.items():
            where = f"{MEAN_KEY}.{question}"
            mean = json_mean(value)
            if mean is None:
                problem(where, f"{value!r} is not a number (the mean of several raters' scores)")
            else:
                means.append(GivenMean(question=question, field=where, value=mean))
    elif given is not None:
        mean = json_mean(given)
        if mean is None:
            problem(
                MEAN_KEY,
                f'must be a number (the mean rating of the import\'s question) or {{"question-name": mean}}, '
                f"not {given!r}",
            )
        else:
            means.append(GivenMean(question=None, field=MEAN_KEY, value=mean))
    raters = record.get(RATERS_KEY)
    row_raters: GivenRaters | None = None
    by_question: dict[str, GivenRaters] = {}
    if isinstance(raters, dict):
        for question, value in raters.items():
            counted = _raters(f"{RATERS_KEY}.{question}", value, problem)
            if counted is not None:
                by_question[question] = counted
    elif raters is not None:
        row_raters = _raters(RATERS_KEY, raters, problem)
    return mean_rating_records(means, row_raters, by_question, problem)


def _raters(where: str, value: Any, problem: Any) -> GivenRaters | None:
    count = integer_rating(value)
    why = raters_problem(count)
    if why is not None or count is None:
        problem(where, f"{value!r}: {why}")
        return None
    return GivenRaters(field=where, count=count)

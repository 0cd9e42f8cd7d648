"""The generic reply formats (``jsonl`` and ``csv``, docs/import-formats.md) share their meaning here.

Both read into :class:`ReplyFields`; this module checks what does not depend on the file syntax (the
annotators and rating lists agree, ids are unique) and turns the fields into import records. With an
``annotators`` list, position i of every rating list is annotator i and a missing value means that
annotator did not rate the reply; without one, position i of every list is the import's anonymous rater
slot i (one anonymous annotator per slot, identity unknown). ``mean_rating`` gives a mean of several
raters' scores instead (``n_raters`` of them, when known), stored as an imported mean rating.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotation.importers.records import (
    IMPORTED,
    ContextRecord,
    MeanRatingRecord,
    ParsedImport,
    RatingRecord,
    ReplyRecord,
    Source,
    id_key,
    text_key,
)
from kernel.importing.limits import EXTERNAL_ID_MAX, PSEUDONYM_MAX, QUESTION_NAME_MAX, SYSTEM_NAME_MAX
from kernel.importing.problems import ProblemLog


@dataclass(frozen=True)
class RatingList:
    """One question's values for a reply; ``field`` names the list in messages (e.g. ``ratings.fluency``)."""

    field: str
    values: list[int | None]


@dataclass
class ReplyFields:
    """One reply as the file states it, after the syntax-specific checks."""

    source: Source
    response: str
    system: str
    turns: list[dict[str, Any]] | None = None
    item_id: str = ""
    context_id: str = ""
    references: list[str] = field(default_factory=list)
    ratings: dict[str, RatingList] = field(default_factory=dict)
    annotators: list[str] | None = None
    mean_ratings: list[MeanRatingRecord] = field(default_factory=list)


class ReplyCollector:
    """Adds checked replies (and their contexts) to one :class:`ParsedImport`."""

    def __init__(self, parsed: ParsedImport, log: ProblemLog) -> None:
        self.parsed = parsed
        self.log = log
        self.ids: dict[str, Source] = {}

    def add(self, fields: ReplyFields) -> None:
        if self._problems(fields):
            return
        if fields.item_id:
            self.ids[fields.item_id] = fields.source
        context = self._context(fields)
        for text in fields.references:
            context.add_reference(text.strip(), IMPORTED)
        self.parsed.replies.append(
            ReplyRecord(
                source=fields.source,
                context_key=context.key,
                system=fields.system.strip(),
                text=fields.response.strip(),
                external_id=fields.item_id,
                ratings=[
                    RatingRecord(
                        question=question,
                        annotator=fields.annotators[index] if fields.annotators is not None else None,
                        value=value,
                        field=f"{ratings.field}[{index}]",
                        slot=index if fields.annotators is None else None,
                    )
                    for question, ratings in fields.ratings.items()
                    for index, value in enumerate(ratings.values)
                    if value is not None
                ],
                mean_ratings=list(fields.mean_ratings),
            )
        )

    def _context(self, fields: ReplyFields) -> ContextRecord:
        turns = fields.turns or []
        if fields.context_id:
            record = ContextRecord(
                key=id_key(fields.context_id),
                source=fields.source,
                external_id=fields.context_id,
                turns=turns,
            )
        else:
            record = ContextRecord(key=text_key(turns), source=fields.source, turns=turns)
        kept = self.parsed.add_context(record)
        if kept is not record and turns and [t["text"] for t in kept.turns] != [t["text"] for t in turns]:
            if kept.turns:
                self.log.warn(
                    fields.source.file,
                    fields.source.line,
                    "context",
                    f"differs from the context given for the same context id on line {kept.source.line}; "
                    "that one is used",
                )
            else:
                kept.turns = turns
        return kept

    def _problems(self, fields: ReplyFields) -> bool:
        """Log what is wrong with ``fields``; True when anything is."""
        before = len(self.log.problems)
        file, line = fields.source.file, fields.source.line

        def problem(name: str, message: str) -> None:  # jsonl keys and csv columns share these names
            self.log.problem(file, line, name, message)

        if not fields.response.strip():
            problem("response", "empty response")
        if not fields.system.strip():
            problem("system", "empty system name")
        elif len(fields.system.strip()) > SYSTEM_NAME_MAX:
            problem("system", f"longer than {SYSTEM_NAME_MAX} characters")
        if fields.turns is None and not fields.context_id:
            problem("context", "missing (give the context turns, or a context_id already in the study)")
        elif fields.turns is not None and not fields.turns:
            problem("context", "the context needs at least one turn")
        for name, value in (("id", fields.item_id), ("context_id", fields.context_id)):
            if len(value) > EXTERNAL_ID_MAX:
                problem(name, f"longer than {EXTERNAL_ID_MAX} characters")
        if fields.item_id in self.ids:
            problem("id", f"id {fields.item_id!r} was already used on line {self.ids[fields.item_id].line}")
        annotators = fields.annotators
        if annotators is not None:
            if not annotators or not all(name.strip() for name in annotators):
                problem("annotators", "annotator names must be non-empty")
            elif len(set(annotators)) != len(annotators):
                problem("annotators", "annotator names must be distinct")
            elif any(len(name) > PSEUDONYM_MAX for name in annotators):
                problem("annotators", f"annotator names are limited to {PSEUDONYM_MAX} characters")
        for question, ratings in fields.ratings.items():
            if not question or len(question) > QUESTION_NAME_MAX:
                self.log.problem(file, line, ratings.field, "not a question name")
            elif annotators is not None and len(ratings.values) != len(annotators):
                self.log.problem(
                    file,
                    line,
                    ratings.field,
                    f"{len(ratings.values)} values for {len(annotators)} annotators; "
                    "give one value (or null/empty for 'not rated') per annotator",
                )
            elif annotators is None:
                for index, rating in enumerate(ratings.values):
                    if rating is None:
                        self.log.problem(
                            file,
                            line,
                            f"{ratings.field}[{index}]",
                            "a missing value (not rated) needs an annotators list saying who did not rate",
                        )
        for mean in fields.mean_ratings:
            if mean.question is not None and (not mean.question or len(mean.question) > QUESTION_NAME_MAX):
                self.log.problem(file, line, mean.field, "not a question name")
        return len(self.log.problems) > before

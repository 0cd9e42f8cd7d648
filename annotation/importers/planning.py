"""Checks parsed records against a study and decides, row by row, what an import creates or reuses.

Pure: it reads a :class:`StudyState` snapshot and returns an :class:`ImportPlan`, so the service can
write the whole plan in one transaction and a rejected import never touches the database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from annotation.importers.context_ids import context_pk_from_download_id
from annotation.importers.records import (
    ContextRecord,
    MeanRatingRecord,
    ParsedImport,
    RatingRecord,
    ReplyRecord,
    Source,
    text_key,
)
from annotation.importers.study_state import ExistingContext, QuestionInfo, StudyState
from kernel.importing.json_lines import number_text
from kernel.importing.problems import ProblemLog

IMPORTED_ORIGIN = "imported"  # annotation.models.AnnotatorOrigin.IMPORTED


@dataclass(frozen=True)
class ContextTarget:
    """An existing context (``existing`` pk) or the n-th context this import creates (``new``)."""

    existing: int | None = None
    new: int | None = None


@dataclass(frozen=True)
class NewContext:
    external_id: str
    turns: list[dict[str, Any]]
    position: int


@dataclass(frozen=True)
class NewReference:
    context: ContextTarget
    text: str
    origin: str


@dataclass(frozen=True)
class NewResponse:
    context: ContextTarget
    system: str
    text: str
    sample_index: int
    external_id: str


@dataclass(frozen=True)
class NewRating:
    response: int  # index into ImportPlan.responses
    annotator: str  # pseudonym
    question: int  # pk
    value: int


@dataclass(frozen=True)
class NewMeanRating:
    response: int
    question: int
    value: float
    raters: int | None


@dataclass
class ImportPlan:
    contexts: list[NewContext] = field(default_factory=list)
    references: list[NewReference] = field(default_factory=list)
    systems: dict[str, bool] = field(default_factory=dict)  # new system name -> is_human
    annotators: list[str] = field(default_factory=list)  # new pseudonyms
    anonymous: set[str] = field(default_factory=set)  # the new pseudonyms invented for unnamed scores
    responses: list[NewResponse] = field(default_factory=list)
    ratings: list[NewRating] = field(default_factory=list)
    mean_ratings: list[NewMeanRating] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def folded(turns: list[dict[str, Any]]) -> list[str]:
    """Turn texts for a loose comparison: case, whitespace and apostrophe style ignored, because the
    multirefeval files tokenize the same DailyDialog text differently ("I'm" / "i 'm", ’ / ')."""
    return [
        "".join(str(turn.get("text", "")).lower().replace("’", "'").replace("‘", "'").split())
        for turn in turns
    ]


def import_plan(
    *, parsed: ParsedImport, state: StudyState, question: str | None, log: ProblemLog
) -> ImportPlan:
    """What to write; problems (unknown ids or questions, values off the scale, duplicates) go to ``log``."""
    planner = _Planner(parsed, state, log)
    default_question = planner.default_question(question)
    targets = {context.key: planner.context(context) for context in parsed.contexts}
    for reply in parsed.replies:
        target = targets.get(reply.context_key)
        if target is not None:
            planner.reply(reply, target, default_question)
    planner.count()
    return planner.plan


class _Planner:
    def __init__(self, parsed: ParsedImport, state: StudyState, log: ProblemLog) -> None:
        self.parsed = parsed
        self.state = state
        self.log = log
        self.plan = ImportPlan()
        self.questions = {info.name: info for info in state.questions}
        self.new_by_text_key: dict[str, int] = {}
        self.reference_texts: dict[ContextTarget, set[str]] = {}
        self.reused_contexts = 0
        self.reused_references = 0
        self.reused_systems: set[str] = set()
        self.reused_annotators: set[str] = set()
        self.replies: dict[tuple[str, ContextTarget, int], ReplyRecord] = {}
        self.unknown_questions: set[str] = set()
        self.conflicts: set[Source] = set()  # lines whose contexts must match the study's and do not
        self.anonymous = _AnonymousNames(parsed, state)
        self.slots: dict[int, str] = {}  # anonymous rater slot -> its pseudonym in this import

    def default_question(self, name: str | None) -> QuestionInfo | None:
        if name is None:
            return self.state.questions[0] if self.state.questions else None
        if name not in self.questions:
            self.log.problem("", None, None, f'unknown question "{name}"; {self._question_list()}')
            return None
        return self.questions[name]

    def _question_list(self) -> str:
        return "this study's questions are: " + ", ".join(info.name for info in self.state.questions)

    def context(self, record: ContextRecord) -> ContextTarget | None:
        target = self._context_target(record)
        if target is not None:
            known = self.reference_texts.setdefault(
                target,
                set(self.state.reference_texts.get(target.existing, ()))
                if target.existing is not None
                else set(),
            )
            for reference in record.references:
                if reference.text in known:
                    self.reused_references += 1
                    continue
                known.add(reference.text)
                self.plan.references.append(NewReference(target, reference.text, reference.origin))
        return target

    def _context_target(self, record: ContextRecord) -> ContextTarget | None:
        if record.external_id:
            existing = self._existing_context(record.external_id)
            if existing is not None:
                self.reused_contexts += 1
                if record.turns_must_match and folded(record.turns) != folded(existing.turns):
                    if record.source not in self.conflicts:  # said once per line, not once per turn
                        self.conflicts.add(record.source)
                        self.log.problem(
                            record.source.file,
                            record.source.line,
                            "id",
                            f'context id "{record.external_id}" is already in the study with different '
                            "turns; give this conversation an id of its own",
                        )
                    return None
                if record.turns and folded(record.turns) != folded(existing.turns):
                    self.log.warn(
                        record.source.file,
                        record.source.line,
                        None,
                        f'context id "{record.external_id}" is already in the study with a different text; '
                        "the study's context is kept",
                    )
                return ContextTarget(existing=existing.pk)
            if not record.turns:
                self.log.problem(
                    record.source.file,
                    record.source.line,
                    "context_id",
                    f'unknown context id "{record.external_id}": the study has no context with this id '
                    "(import the contexts first, e.g. with the multiref format) "
                    "and the row gives no context text",
                )
                return None
            return self._new_context(record)
        key = text_key(record.turns)
        if key in self.state.contexts_by_text_key:
            self.reused_contexts += 1
            return ContextTarget(existing=self.state.contexts_by_text_key[key])
        if key in self.new_by_text_key:
            return ContextTarget(new=self.new_by_text_key[key])
        return self._new_context(record)

    def _existing_context(self, external_id: str) -> ExistingContext | None:
        """The study's context of this id; else the context without an id that a contexts download named
        so (``context-<pk>``, annotation/importers/context_ids.py)."""
        existing = self.state.contexts_by_external_id.get(external_id)
        if existing is None:
            pk = context_pk_from_download_id(external_id)
            existing = self.state.contexts_without_id.get(pk) if pk is not None else None
        return existing

    def _new_context(self, record: ContextRecord) -> ContextTarget:
        index = len(self.plan.contexts)
        position = self.state.next_context_position + index
        self.plan.contexts.append(NewContext(record.external_id, record.turns, position))
        self.new_by_text_key.setdefault(text_key(record.turns), index)
        return ContextTarget(new=index)

    def reply(self, reply: ReplyRecord, target: ContextTarget, default: QuestionInfo | None) -> None:
        problems = len(self.log.problems)
        self._duplicate_check(reply, target)
        ratings = []
        for rating in reply.ratings:
            question = self._question(reply, rating.question, rating.field, default)
            if question is not None and self._on_scale(reply, question, rating.value, rating.field):
                ratings.append((rating, question))
        means = []
        for mean in reply.mean_ratings:
            question = self._question(reply, mean.question, mean.field, default)
            if question is not None and self._on_scale(reply, question, mean.value, mean.field):
                means.append((mean, question))
        self._one_kind_of_score(reply, ratings, means)
        if len(self.log.problems) > problems:
            return
        if reply.system in self.state.systems:
            self.reused_systems.add(reply.system)
        else:
            self.plan.systems.setdefault(reply.system, reply.is_human)
        response = len(self.plan.responses)
        self.plan.responses.append(
            NewResponse(target, reply.system, reply.text, reply.sample_index, reply.external_id)
        )
        for rating, question in ratings:
            annotator = self._annotator(reply, rating)
            if annotator is not None:
                self.plan.ratings.append(NewRating(response, annotator, question.pk, rating.value))
        for mean, question in means:
            self.plan.mean_ratings.append(NewMeanRating(response, question.pk, mean.value, mean.raters))

    def _duplicate_check(self, reply: ReplyRecord, target: ContextTarget) -> None:
        key = (reply.system, target, reply.sample_index)
        first = self.replies.setdefault(key, reply)
        if first is not reply:
            where = f"line {first.source.line}"
            if first.source.file != reply.source.file:
                where = f"{first.source.file}, {where}"
            self.log.problem(
                reply.source.file,
                reply.source.line,
                None,
                f'duplicate item: system "{reply.system}" already answers this context on {where}',
            )
            return
        system = self.state.systems.get(reply.system)
        existing = (system, target.existing, reply.sample_index)
        if system is not None and target.existing is not None and existing in self.state.responses:
            self.log.problem(
                reply.source.file,
                reply.source.line,
                None,
                f'duplicate item: the study already has a reply of system "{reply.system}" '
                "to this context (was this file imported before?)",
            )

    def _question(
        self, reply: ReplyRecord, name: str | None, where: str, default: QuestionInfo | None
    ) -> QuestionInfo | None:
        if name is None:
            if default is None and not self.state.questions and "" not in self.unknown_questions:
                self.unknown_questions.add("")  # said once: the study has no question at all
                self.log.problem(
                    reply.source.file, reply.source.line, where, "the study has no question to rate"
                )
            return default
        question = self.questions.get(name)
        if question is None and name not in self.unknown_questions:
            self.unknown_questions.add(name)
            self.log.problem(
                reply.source.file,
                reply.source.line,
                where,
                f'unknown question "{name}"; {self._question_list()}',
            )
        return question

    def _on_scale(self, reply: ReplyRecord, question: QuestionInfo, value: float, where: str) -> bool:
        if question.scale_min <= value <= question.scale_max:
            return True
        shown = number_text(value)  # 1e+308, not its 309 digits
        which = f' of question "{question.name}"' if len(self.state.questions) > 1 else ""
        self.log.problem(
            reply.source.file,
            reply.source.line,
            where,
            f"{shown} is outside the study's scale {question.scale}{which}",
        )
        return False

    def _one_kind_of_score(
        self,
        reply: ReplyRecord,
        ratings: list[tuple[RatingRecord, QuestionInfo]],
        means: list[tuple[MeanRatingRecord, QuestionInfo]],
    ) -> None:
        """A question gets individual ratings or one mean per reply, never both (which would be the human
        score?) and never two means."""
        rated: dict[int, str] = {}
        for rating, question in ratings:
            rated.setdefault(question.pk, rating.field)
        averaged: dict[int, str] = {}
        for mean, question in means:
            if question.pk in rated:
                self.log.problem(
                    reply.source.file,
                    reply.source.line,
                    mean.field,
                    f'question "{question.name}" also has individual ratings on this line '
                    f'("{rated[question.pk]}"); give either the ratings or their mean',
                )
            elif question.pk in averaged:
                self.log.problem(
                    reply.source.file,
                    reply.source.line,
                    mean.field,
                    f'a second mean for question "{question.name}" (the first is "{averaged[question.pk]}")',
                )
            else:
                averaged[question.pk] = mean.field

    def _annotator(self, reply: ReplyRecord, rating: RatingRecord) -> str | None:
        name, where = rating.annotator, rating.field
        if name is None:
            pseudonym = self.slots.get(rating.slot) if rating.slot is not None else None
            if pseudonym is None:
                pseudonym = self.anonymous.next()
                self.plan.annotators.append(pseudonym)
                self.plan.anonymous.add(pseudonym)
                if rating.slot is not None:
                    self.slots[rating.slot] = pseudonym
            return pseudonym
        existing = self.state.annotators.get(name)
        if existing is None:
            if name not in self.plan.annotators:
                self.plan.annotators.append(name)
        elif existing[1] != IMPORTED_ORIGIN:
            self.log.problem(
                reply.source.file,
                reply.source.line,
                where,
                f'annotator "{name}" is a volunteer of this study; imported ratings need another name',
            )
            return None
        else:
            self.reused_annotators.add(name)
        return name

    def count(self) -> None:
        plan = self.plan
        plan.counts = {
            "contexts_created": len(plan.contexts),
            "contexts_reused": self.reused_contexts,
            "references_created": len(plan.references),
            "references_reused": self.reused_references,
            "systems_created": len(plan.systems),
            "systems_reused": len(self.reused_systems),
            "responses_created": len(plan.responses),
            "annotators_created": len(plan.annotators),
            "annotators_reused": len(self.reused_annotators),
            "ratings_created": len(plan.ratings),
            "mean_ratings_created": len(plan.mean_ratings),
        }


class _AnonymousNames:
    """``<prefix>-<n>`` pseudonyms numbered after every such name the study or the import already uses."""

    def __init__(self, parsed: ParsedImport, state: StudyState) -> None:
        self.prefix = parsed.anonymous_prefix
        self.taken = set(state.annotators) | {
            rating.annotator for reply in parsed.replies for rating in reply.ratings if rating.annotator
        }
        pattern = re.compile(rf"{re.escape(self.prefix)}-(\d+)")
        numbers = [int(match.group(1)) for name in self.taken if (match := pattern.fullmatch(name))]
        self.number = max(numbers, default=0)

    def next(self) -> str:
        self.number += 1
        while f"{self.prefix}-{self.number}" in self.taken:
            self.number += 1
        return f"{self.prefix}-{self.number}"

"""The researcher's item browser: every reply of a study with its ratings, how much the raters
disagree, the annotators' flags and comments, and the researcher's adjudication.

Studies have tens of thousands of replies, so nothing here grows with the study: the filters and the
sort are SQL (the disagreement of a reply is a correlated subquery, the flags and comments ``EXISTS``
subqueries), the page is a slice of ``PAGE_SIZE`` replies, and what the page shows of those replies
(their ratings, their notes, the notes on their conversations) is read with one query each for the whole
page. A page costs the same handful of queries whatever the size of the study.

*Disagreement* of a reply: for each question, the highest rating minus the lowest; the reply's
disagreement is the largest of those (None before two ratings of one question). Every rating counts here,
whoever gave it; the report's rater filter is the report's business.

The metric scores of the page's replies live in the scoring app, which the annotation app never imports
(the layers contract in pyproject.toml); the page reads them through a scoring template tag
(the "reply-metric-scores" page extension of scoring/study_section.py), one query for the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, F, IntegerField, Max, Min, OuterRef, Q, QuerySet, Subquery

from annotation.models import (
    Adjudication,
    ItemNote,
    NoteKind,
    Question,
    Rating,
    Response,
    Study,
    System,
)

PAGE_SIZE = 50
SORT_ID = "id"
SORT_DISAGREEMENT = "disagreement"
EXCLUDED_ONLY = "only"
EXCLUDED_HIDDEN = "hide"


@dataclass(frozen=True)
class ItemFilters:
    """What the researcher asked to see; the defaults show every reply in import order."""

    system: int | None = None
    min_disagreement: float | None = None
    flagged: bool = False
    commented: bool = False
    excluded: str = ""  # "" every reply, "only" the excluded ones, "hide" the others
    sort: str = SORT_ID


@dataclass(frozen=True)
class QuestionCell:
    """One question's ratings of one reply."""

    name: str
    values: list[int]
    gold: float | None = None

    @property
    def mean(self) -> float | None:
        return math.fsum(self.values) / len(self.values) if self.values else None

    @property
    def spread(self) -> int | None:
        return max(self.values) - min(self.values) if len(self.values) > 1 else None


@dataclass(frozen=True)
class NoteView:
    kind: str
    reason: str
    reason_label: str
    text: str
    annotator: str
    created_at: datetime
    on_conversation: bool  # a note on the context (a writing item's), not on this reply
    pair_with: str = ""  # a note on a pairwise comparison: the system of the other reply of the pair
    on_system_replies: bool = False  # a diversity note: on this system's replies to the conversation


@dataclass(frozen=True)
class AdjudicationView:
    excluded: bool
    gold: dict[str, float]
    note: str
    decided_by: str
    decided_at: datetime | None

    @property
    def active(self) -> bool:
        return self.excluded or bool(self.gold)


@dataclass(frozen=True)
class ItemRow:
    response_id: int
    text: str
    system: str
    context_id: int
    context_label: str
    turns: list[dict[str, str]]
    disagreement: int | None
    questions: list[QuestionCell]
    notes: list[NoteView] = field(default_factory=list)
    adjudication: AdjudicationView | None = None

    @property
    def query(self) -> str:
        return self.turns[-1]["text"] if self.turns else ""

    @property
    def flags(self) -> list[NoteView]:
        return [note for note in self.notes if note.kind == NoteKind.FLAG]

    @property
    def comments(self) -> list[NoteView]:
        return [note for note in self.notes if note.kind == NoteKind.COMMENT]

    @property
    def excluded(self) -> bool:
        return self.adjudication is not None and self.adjudication.excluded

    @property
    def ratings(self) -> int:
        return sum(len(cell.values) for cell in self.questions)


@dataclass(frozen=True)
class ItemPage:
    rows: list[ItemRow]
    questions: list[Question]
    page: Page


@dataclass(frozen=True)
class BrowserSummary:
    replies: int
    flags: int
    comments: int
    excluded: int
    gold: int


def _disagreement() -> Subquery:
    """The largest (max - min) over the reply's questions, as a correlated subquery."""
    per_question = (
        Rating.objects.filter(response=OuterRef("pk"))
        .values("question")
        .annotate(spread=Max("value") - Min("value"))
        .order_by("-spread")
        .values("spread")[:1]
    )
    return Subquery(per_question, output_field=IntegerField())


def _noted(kind: str) -> Q:
    """Replies with a note of ``kind`` on them (alone or in a pair), on their system's replies to their
    conversation (a diversity note), or on their conversation (a note without a reply or system)."""
    on_reply = ItemNote.objects.filter(Q(response=OuterRef("pk")) | Q(response_b=OuterRef("pk")), kind=kind)
    on_context = ItemNote.objects.filter(
        Q(system__isnull=True) | Q(system=OuterRef("system")),
        context=OuterRef("context"),
        response__isnull=True,
        kind=kind,
    )
    return Q(Exists(on_reply)) | Q(Exists(on_context))


def item_queryset(*, study: Study, filters: ItemFilters) -> QuerySet[Response]:
    """The study's replies that pass ``filters``, in the chosen order (no query until evaluated)."""
    queryset = Response.objects.filter(context__study=study).annotate(disagreement=_disagreement())
    if filters.system is not None:
        queryset = queryset.filter(system_id=filters.system)
    if filters.min_disagreement is not None:
        queryset = queryset.filter(disagreement__gte=filters.min_disagreement)
    if filters.flagged:
        queryset = queryset.filter(_noted(NoteKind.FLAG))
    if filters.commented:
        queryset = queryset.filter(_noted(NoteKind.COMMENT))
    if filters.excluded == EXCLUDED_ONLY:
        queryset = queryset.filter(adjudication__excluded=True)
    elif filters.excluded == EXCLUDED_HIDDEN:
        queryset = queryset.exclude(adjudication__excluded=True)
    if filters.sort == SORT_DISAGREEMENT:
        return queryset.order_by(F("disagreement").desc(nulls_last=True), "id")
    return queryset.order_by("id")


def item_page(*, study: Study, filters: ItemFilters, page_number: int | str | None = 1) -> ItemPage:
    """One page of the browser: ``PAGE_SIZE`` rows with their ratings, notes and adjudication."""
    queryset = item_queryset(study=study, filters=filters).select_related(
        "system", "context", "adjudication", "adjudication__decided_by"
    )
    page = Paginator(queryset, PAGE_SIZE).get_page(page_number)
    responses: list[Response] = list(page.object_list)
    questions = sorted(study.questions.all(), key=lambda question: (question.position, question.pk))
    rows = item_rows(responses=responses, questions=questions)
    return ItemPage(rows=rows, questions=questions, page=page)


def item_rows(*, responses: list[Response], questions: list[Question]) -> list[ItemRow]:
    """Rows for ``responses`` (read with system, context and adjudication): two queries in all."""
    if not responses:
        return []
    ids = [response.pk for response in responses]
    values: dict[tuple[int, int], list[int]] = {}
    for response_id, question_id, value in (
        Rating.objects.filter(response_id__in=ids)
        .order_by("value", "id")
        .values_list("response_id", "question_id", "value")
    ):
        values.setdefault((response_id, question_id), []).append(value)
    notes = _notes(responses)
    rows = []
    for response in responses:
        adjudication = _adjudication(response)
        gold = adjudication.gold if adjudication else {}
        rows.append(
            ItemRow(
                response_id=response.pk,
                text=response.text,
                system=response.system.name,
                context_id=response.context_id,
                context_label=response.context.external_id or f"context {response.context_id}",
                turns=[
                    {"speaker": str(turn.get("speaker", "")), "text": str(turn.get("text", ""))}
                    for turn in response.context.turns
                ],
                disagreement=getattr(response, "disagreement", None),
                questions=[
                    QuestionCell(
                        name=question.name,
                        values=values.get((response.pk, question.pk), []),
                        gold=gold.get(question.name),
                    )
                    for question in questions
                ],
                notes=notes.get(response.pk, []),
                adjudication=adjudication,
            )
        )
    return rows


def _notes(responses: list[Response]) -> dict[int, list[NoteView]]:
    """response id -> its notes (a pair's note on both of its replies, naming the other one's system), the
    diversity notes on its system's replies to its conversation, and the notes on its conversation, oldest
    first (one query)."""
    by_context: dict[int, list[tuple[int, int]]] = {}  # context id -> (response id, system id)
    for response in responses:
        by_context.setdefault(response.context_id, []).append((response.pk, response.system_id))
    ids = [response.pk for response in responses]
    rows = (
        ItemNote.objects.filter(
            Q(response_id__in=ids)
            | Q(response_b_id__in=ids)
            | Q(context_id__in=list(by_context), response__isnull=True)
        )
        .select_related("annotator", "response__system", "response_b__system")
        .order_by("id")
    )
    notes: dict[int, list[NoteView]] = {}
    for note in rows:
        view = partial(
            NoteView,
            kind=note.kind,
            reason=note.reason,
            reason_label=note.get_reason_display() if note.reason else "",
            text=note.text,
            annotator=note.annotator.pseudonym,
            created_at=note.created_at,
            on_conversation=note.response_id is None and note.system_id is None,
        )
        targets: list[tuple[int, NoteView]]
        if note.response is not None and note.response_b is not None:
            targets = [
                (note.response.pk, view(pair_with=note.response_b.system.name)),
                (note.response_b.pk, view(pair_with=note.response.system.name)),
            ]
        elif note.response_id is not None:
            targets = [(note.response_id, view())]
        elif note.system_id is not None:
            targets = [
                (response_id, view(on_system_replies=True))
                for response_id, system_id in by_context[note.context_id]
                if system_id == note.system_id
            ]
        else:
            targets = [(response_id, view()) for response_id, _ in by_context[note.context_id]]
        for response_id, shown in targets:
            notes.setdefault(response_id, []).append(shown)
    return notes


def _adjudication(response: Response) -> AdjudicationView | None:
    try:
        decision: Adjudication = response.adjudication
    except Adjudication.DoesNotExist:
        return None
    if not decision.excluded and not decision.gold and not decision.note:
        return None  # undone: nothing to show
    return AdjudicationView(
        excluded=decision.excluded,
        gold={str(name): value for name, value in (decision.gold or {}).items()},
        note=decision.note,
        decided_by=decision.decided_by.username if decision.decided_by else "",
        decided_at=decision.decided_at,
    )


def item_detail(*, study: Study, response_id: int) -> ItemRow:
    """One reply of the study as a browser row (``Response.DoesNotExist`` for any other reply)."""
    response = (
        Response.objects.filter(context__study=study, pk=response_id)
        .annotate(disagreement=_disagreement())
        .select_related("system", "context", "adjudication", "adjudication__decided_by")
        .get()
    )
    questions = sorted(study.questions.all(), key=lambda question: (question.position, question.pk))
    return item_rows(responses=[response], questions=questions)[0]


def item_raters(*, response_id: int) -> list[tuple[str, str, int]]:
    """(annotator, question, value) of every rating of one reply, for its detail page (one query)."""
    return [
        (str(pseudonym), str(question), int(value))
        for pseudonym, question, value in Rating.objects.filter(response_id=response_id)
        .order_by("annotator__pseudonym", "question__position", "question_id")
        .values_list("annotator__pseudonym", "question__name", "value")
    ]


def browser_summary(*, study: Study) -> BrowserSummary:
    """Counts over the whole study shown above the list (three queries)."""
    replies = Response.objects.filter(context__study=study).count()
    notes = ItemNote.objects.filter(context__study=study).aggregate(
        flags=Count("id", filter=Q(kind=NoteKind.FLAG)),
        comments=Count("id", filter=Q(kind=NoteKind.COMMENT)),
    )
    decisions = Adjudication.objects.filter(response__context__study=study).aggregate(
        excluded=Count("id", filter=Q(excluded=True)),
        gold=Count("id", filter=~Q(gold={})),
    )
    return BrowserSummary(
        replies=replies,
        flags=notes["flags"] or 0,
        comments=notes["comments"] or 0,
        excluded=decisions["excluded"] or 0,
        gold=decisions["gold"] or 0,
    )


def study_systems(*, study: Study) -> list[tuple[int, str]]:
    return list(System.objects.filter(study=study).order_by("name").values_list("id", "name"))

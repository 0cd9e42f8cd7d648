"""An annotator's own history in a study: their last answers, newest first, each with what it
answered (the conversation's last turn, the reply or replies) and when, and whether it can still be
changed.

Blind like every annotator page: no system name, no other rater's answer, only the annotator's own. The
answers are the ratings of a reply (all its questions together), each reference written, each diversity
judgment and each pairwise judgment. Attention checks are left out: listed, an answer to one question
only would give them away.

An answer is *open* (it can still be changed, from the item's own page) when
  1. its task still runs in the study (the researcher has not turned it off),
  2. the annotator may still work in the study (not blocked after failed attention checks, and admitted:
     annotation/selectors/admission.py), and
  3. its task lets an answer be reopened: ratings, diversity and pairwise judgments can be, written
     references cannot (they become references of the context as soon as they are sent).
Changing an answer goes through the item's page, which takes the new answer in place of the old one.

A fixed number of queries whatever the length of the history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.urls import NoReverseMatch, reverse

from annotation.models import (
    Annotator,
    Assignment,
    AssignmentStatus,
    DiversityJudgment,
    PairwiseChoice,
    PairwiseJudgment,
    Question,
    Rating,
    Reference,
    ReferenceOrigin,
    Response,
    WorkKind,
)
from annotation.selectors.admission import admission_step
from annotation.selectors.work import annotator_tasks

HISTORY_LENGTH = 50
REOPENABLE = (WorkKind.RATE, WorkKind.DIVERSITY, WorkKind.PAIR)
ANSWERED_KINDS = (WorkKind.RATE, WorkKind.DIVERSITY, WorkKind.PAIR)


@dataclass(frozen=True)
class HistoryReply:
    text: str
    mark: str = ""  # diversity: "appropriate"; pairwise: "chosen"


@dataclass(frozen=True)
class HistoryEntry:
    kind: str
    label: str
    at: datetime | None
    query: str
    replies: list[HistoryReply] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)
    edit_url: str = ""
    closed_reason: str = ""  # why the answer can no longer be changed

    @property
    def open(self) -> bool:
        return bool(self.edit_url)


LABELS = {
    WorkKind.RATE: "Rating",
    WorkKind.WRITE: "Reference written",
    WorkKind.DIVERSITY: "Diversity judgment",
    WorkKind.PAIR: "Comparison",
}


def _query(turns: list[dict[str, object]]) -> str:
    return str(turns[-1].get("text", "")) if turns else ""


@dataclass(frozen=True)
class _Openness:
    """What decides whether the annotator's answers can still be changed (read once per page)."""

    study_id: int
    tasks: list[str]
    may_work: bool

    def edit_url(self, kind: str, assignment_id: int) -> tuple[str, str]:
        """(the item's page to change the answer, "") while it is open, else ("", why not)."""
        if kind not in REOPENABLE:
            return "", "sent references are final"
        if not self.may_work:
            return "", "this study gives you no work at the moment"
        if kind not in self.tasks:
            return "", "this task has ended"
        try:
            return reverse("work:item", args=[self.study_id, kind, assignment_id]), ""
        except NoReverseMatch:  # a task whose items have no page of their own to reopen
            return "", "this task's answers cannot be reopened"


def annotator_history(*, annotator: Annotator, limit: int = HISTORY_LENGTH) -> list[HistoryEntry]:
    """The annotator's last ``limit`` answers in their study, newest first."""
    assignments = list(
        Assignment.objects.filter(
            annotator=annotator, status=AssignmentStatus.DONE, item__kind__in=ANSWERED_KINDS
        )
        .select_related("item", "item__response", "item__response__context", "item__context")
        .order_by("-finished_at", "-id")[:limit]
    )
    references = list(
        Reference.objects.filter(author=annotator, origin=ReferenceOrigin.COLLECTED)
        .select_related("context")
        .order_by("-created_at", "-id")[:limit]
    )
    openness = _Openness(
        study_id=annotator.study_id,
        tasks=annotator_tasks(annotator=annotator),
        may_work=not annotator.blocked and admission_step(annotator=annotator) is None,
    )
    entries = _rating_entries(annotator, assignments, openness)
    entries += _diversity_entries(annotator, assignments, openness)
    entries += _pair_entries(annotator, assignments, openness)
    for reference in references:
        entries.append(
            HistoryEntry(
                kind=WorkKind.WRITE,
                label=LABELS[WorkKind.WRITE],
                at=reference.created_at,
                query=_query(reference.context.turns),
                answer=[reference.text],
                closed_reason="sent references are final",
            )
        )
    entries.sort(key=lambda entry: entry.at.timestamp() if entry.at else 0.0, reverse=True)
    return entries[:limit]


def _rating_entries(
    annotator: Annotator, assignments: list[Assignment], openness: _Openness
) -> list[HistoryEntry]:
    rated = [assignment for assignment in assignments if assignment.item.kind == WorkKind.RATE]
    if not rated:
        return []
    questions = {question.pk: question for question in Question.objects.filter(study_id=annotator.study_id)}
    values: dict[int, dict[int, int]] = {}
    for response_id, question_id, value in Rating.objects.filter(
        annotator=annotator, response_id__in=[assignment.item.response_id for assignment in rated]
    ).values_list("response_id", "question_id", "value"):
        values.setdefault(response_id, {})[question_id] = value
    entries = []
    ordered = sorted(questions.values(), key=lambda question: (question.position, question.pk))
    for assignment in rated:
        response = assignment.item.response
        assert response is not None
        own = values.get(response.pk, {})
        edit_url, closed = openness.edit_url(WorkKind.RATE, assignment.pk)
        entries.append(
            HistoryEntry(
                kind=WorkKind.RATE,
                label=LABELS[WorkKind.RATE],
                at=assignment.finished_at,
                query=_query(response.context.turns),
                replies=[HistoryReply(response.text)],
                answer=[
                    _rating_line(question, own[question.pk]) for question in ordered if question.pk in own
                ],
                edit_url=edit_url,
                closed_reason=closed,
            )
        )
    return entries


def _rating_line(question: Question, value: int) -> str:
    label = question.label_for(value)
    return f"{question.name}: {value}" + (f" ({label})" if label != str(value) else "")


def _diversity_entries(
    annotator: Annotator, assignments: list[Assignment], openness: _Openness
) -> list[HistoryEntry]:
    judged = [assignment for assignment in assignments if assignment.item.kind == WorkKind.DIVERSITY]
    if not judged:
        return []
    contexts = {assignment.item.context_id for assignment in judged}
    judgments = {
        (judgment.context_id, judgment.system_id): judgment
        for judgment in DiversityJudgment.objects.filter(
            annotator=annotator, context_id__in=contexts
        ).prefetch_related("appropriate")
    }
    replies: dict[tuple[int, int], list[Response]] = {}
    for reply in Response.objects.filter(context_id__in=contexts).order_by("sample_index", "id"):
        replies.setdefault((reply.context_id, reply.system_id), []).append(reply)
    entries = []
    for assignment in judged:
        item = assignment.item
        assert item.context is not None
        assert item.system_id is not None
        key = (item.context_id, item.system_id)
        judgment = judgments.get(key)  # type: ignore[arg-type]
        marked = {reply.pk for reply in judgment.appropriate.all()} if judgment else set()
        edit_url, closed = openness.edit_url(WorkKind.DIVERSITY, assignment.pk)
        entries.append(
            HistoryEntry(
                kind=WorkKind.DIVERSITY,
                label=LABELS[WorkKind.DIVERSITY],
                at=assignment.finished_at,
                query=_query(item.context.turns),
                replies=[
                    HistoryReply(reply.text, "appropriate" if reply.pk in marked else "")
                    for reply in replies.get(key, [])  # type: ignore[arg-type]
                ],
                answer=(
                    [f"{len(marked)} appropriate, {judgment.meanings} different meaning(s)"]
                    if judgment
                    else []
                ),
                edit_url=edit_url,
                closed_reason=closed,
            )
        )
    return entries


def _pair_entries(
    annotator: Annotator, assignments: list[Assignment], openness: _Openness
) -> list[HistoryEntry]:
    compared = [assignment for assignment in assignments if assignment.item.kind == WorkKind.PAIR]
    if not compared:
        return []
    pairs = {(assignment.item.response_id, assignment.item.response_b_id) for assignment in compared}
    judgments = {
        (judgment.response_a_id, judgment.response_b_id): judgment
        for judgment in PairwiseJudgment.objects.filter(
            annotator=annotator, response_a_id__in=[first for first, _ in pairs]
        ).select_related("response_a", "response_b")
    }
    entries = []
    for assignment in compared:
        item = assignment.item
        response = item.response
        assert response is not None
        judgment = judgments.get((item.response_id, item.response_b_id))  # type: ignore[arg-type]
        edit_url, closed = openness.edit_url(WorkKind.PAIR, assignment.pk)
        shown: list[HistoryReply] = []
        answer: list[str] = []
        if judgment is not None:
            first, second = (
                (judgment.response_a, judgment.response_b)
                if judgment.shown_first_id == judgment.response_a_id
                else (judgment.response_b, judgment.response_a)
            )
            chosen = {PairwiseChoice.A: judgment.response_a_id, PairwiseChoice.B: judgment.response_b_id}.get(
                PairwiseChoice(judgment.choice)
            )
            shown = [
                HistoryReply(reply.text, "chosen" if reply.pk == chosen else "") for reply in (first, second)
            ]
            answer = [
                "neither is better"
                if chosen is None
                else ("the first reply is better" if chosen == first.pk else "the second reply is better")
            ]
        entries.append(
            HistoryEntry(
                kind=WorkKind.PAIR,
                label=LABELS[WorkKind.PAIR],
                at=assignment.finished_at,
                query=_query(response.context.turns),
                replies=shown,
                answer=answer,
                edit_url=edit_url,
                closed_reason=closed,
            )
        )
    return entries

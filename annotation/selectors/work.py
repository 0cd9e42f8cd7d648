"""What an annotator is shown: one item, blind, and their own progress (never anyone else's work).

The payload of a rating item is the same for a real reply and an attention check (``kind`` is "rate"
for both), carries no system name, no response id and no other rater's value: only the assignment id,
which is the annotator's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import Count, F, Q

from annotation.models import (
    Annotator,
    Assignment,
    AssignmentStatus,
    CheckAnswer,
    DiversityJudgment,
    Question,
    Rating,
    Reference,
    ReferenceOrigin,
    Response,
    Study,
    WorkItem,
    WorkKind,
)
from annotation.selectors.pairwise_work import pair_payload


def _turns(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Speakers and texts only (DailyDialog's act/emotion labels are not for raters); the last is the query."""
    last = len(turns) - 1
    return [
        {
            "speaker": str(turn.get("speaker", "")),
            "text": str(turn.get("text", "")),
            "is_query": index == last,
        }
        for index, turn in enumerate(turns)
    ]


def question_payload(questions: list[Question]) -> list[dict[str, Any]]:
    """Each question with its kind and range; an ordinal one with its points (at most 11), a slider with
    the labels of its two ends instead (a 0-100 slider does not list 101 points)."""
    payload = []
    for question in questions:
        entry: dict[str, Any] = {
            "name": question.name,
            "prompt": question.prompt,
            "kind": question.kind,
            "scale_min": question.scale_min,
            "scale_max": question.scale_max,
        }
        if question.is_slider:
            labels = [str(label) for label in question.labels] if len(question.labels) == 2 else []
            entry["points"] = []
            entry["ends"] = labels or [str(question.scale_min), str(question.scale_max)]
        else:
            entry["points"] = [
                {"value": value, "label": question.label_for(value)} for value in question.scale_points
            ]
        payload.append(entry)
    return payload


def item_payload(*, assignment: Assignment) -> dict[str, Any]:
    """The screen of one assignment, as plain data (the page template and the API both render it)."""
    item: WorkItem = assignment.item
    study: Study = item.study
    kind = WorkKind.RATE if item.kind == WorkKind.CHECK else item.kind
    payload: dict[str, Any] = {
        "assignment": assignment.pk,
        "kind": kind,
        "status": assignment.status,
        "sequence": assignment.sequence,
    }
    if item.kind in (WorkKind.RATE, WorkKind.CHECK):
        if item.kind == WorkKind.CHECK:
            check = item.attention_check
            assert check is not None
            context, reply = check.context, check.text
        else:
            response = item.response
            assert response is not None
            context, reply = response.context, response.text
        questions = list(Question.objects.filter(study=study))
        payload.update(
            turns=_turns(context.turns),
            reply=reply,
            questions=question_payload(questions),
            answers=_own_answers(assignment, questions),
        )
        if study.show_reference:
            reference = (
                Reference.objects.filter(context=context).exclude(origin=ReferenceOrigin.COLLECTED).first()
            )
            payload["reference"] = reference.text if reference else None
    elif item.kind == WorkKind.WRITE:
        assert item.context is not None
        written = list(
            Reference.objects.filter(
                context=item.context, author=assignment.annotator, origin=ReferenceOrigin.COLLECTED
            ).values_list("text", flat=True)
        )
        payload.update(
            turns=_turns(item.context.turns),
            quota=assignment.quota,
            written=written,
            remaining=max(0, assignment.quota - len(written)),
        )
    elif item.kind == WorkKind.PAIR:  # annotation/selectors/pairwise_work.py
        assert item.context is not None
        payload.update(pair_payload(assignment=assignment, turns=_turns(item.context.turns)))
    else:
        assert item.context is not None
        assert item.system_id is not None
        replies = Response.objects.filter(context=item.context, system_id=item.system_id).order_by(
            "sample_index", "id"
        )
        judgment = DiversityJudgment.objects.filter(
            annotator=assignment.annotator, context=item.context, system_id=item.system_id
        ).first()
        payload.update(
            turns=_turns(item.context.turns),
            # Response ids are needed to mark replies; they say nothing about the system or other raters.
            replies=[{"id": reply.pk, "text": reply.text} for reply in replies],
            answers=(
                {
                    "appropriate": sorted(r.pk for r in judgment.appropriate.all()),
                    "meanings": judgment.meanings,
                }
                if judgment
                else None
            ),
        )
    return payload


def _own_answers(assignment: Assignment, questions: list[Question]) -> dict[str, int] | None:
    """The annotator's earlier answers to this item (when they went back to change them)."""
    if assignment.status != AssignmentStatus.DONE:
        return None
    by_id = {question.pk: question.name for question in questions}
    item = assignment.item
    if item.kind == WorkKind.CHECK:
        answer = CheckAnswer.objects.filter(
            attention_check_id=item.attention_check_id, annotator=assignment.annotator
        ).first()
        if answer is None or item.attention_check is None:
            return None
        # The other questions of a check screen are not stored; show the checked one.
        return {by_id[item.attention_check.question_id]: answer.value}
    assert item.response_id is not None
    rows = Rating.objects.filter(annotator=assignment.annotator, response_id=item.response_id).values_list(
        "question_id", "value"
    )
    return {by_id[question_id]: value for question_id, value in rows if question_id in by_id}


@dataclass(frozen=True)
class AnnotatorProgress:
    done: int
    total: int  # answered + held + still open to them (at most the cap)
    skipped: int = 0  # skipped items that still need answers: they come back at the end

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


# Below this many free items a study's count is exact on every request (the end of a study, where
# "n of n" must be right); above it, a count at most FREE_ITEMS_CACHE_SECONDS old is used.
FREE_ITEMS_EXACT_BELOW = 2000
FREE_ITEMS_CACHE_SECONDS = 2.0


def study_free_items(*, study_id: int, kind: str) -> int:
    """Items of ``kind`` in the study that still want answers (``taken < wanted``): a scan of the study's
    items, so a large study's count is taken at most every FREE_ITEMS_CACHE_SECONDS per process (each
    annotator's progress asks for it on every hand-out and answer; the annotation load benchmark,
    docs/benchmarks.md, Annotation server). Small counts are always exact."""
    key = f"dialeval:free-items:{study_id}:{kind}"
    cached = cache.get(key)
    if cached is not None and cached >= FREE_ITEMS_EXACT_BELOW:
        return int(cached)
    count = WorkItem.objects.filter(study_id=study_id, kind=kind, taken__lt=F("wanted")).count()
    if count >= FREE_ITEMS_EXACT_BELOW:
        cache.set(key, count, FREE_ITEMS_CACHE_SECONDS)
    return count


# (item kind, assignment status) -> (the annotator's assignments, how many of them are on items that still
# want answers): what their progress is computed from (:func:`own_assignment_counts`).
OwnCounts = dict[tuple[str, str], tuple[int, int]]


def own_assignment_counts(*, annotator: Annotator) -> OwnCounts:
    """The annotator's assignments by item kind and status, each with how many of their items are still
    free (``taken < wanted``); one query. The assignment engine reads them under the annotator's lock to
    apply the cap and the check interval, and hands them on so that the progress of a hand-out costs no
    second query (:func:`progress_from_counts`)."""
    rows = (
        Assignment.objects.filter(annotator=annotator)
        .values("item__kind", "status")
        .annotate(n=Count("id"), free=Count("id", filter=Q(item__taken__lt=F("item__wanted"))))
        .order_by()
    )
    return {(str(row["item__kind"]), str(row["status"])): (int(row["n"]), int(row["free"])) for row in rows}


def progress_from_counts(*, annotator: Annotator, kind: str, counts: OwnCounts) -> AnnotatorProgress:
    """The progress of :func:`annotator_progress` from the annotator's own counts (one query fewer when the
    caller has them); the study's free items come from :func:`study_free_items`."""
    done, done_free = counts.get((kind, AssignmentStatus.DONE), (0, 0))
    held, held_free = counts.get((kind, AssignmentStatus.ACTIVE), (0, 0))
    skipped = counts.get((kind, AssignmentStatus.SKIPPED), (0, 0))[1]
    open_to_them = max(0, study_free_items(study_id=annotator.study_id, kind=kind) - done_free - held_free)
    total = done + held + open_to_them
    cap = annotator.study.max_items_per_annotator
    if cap is not None:
        total = min(total, cap)
    return AnnotatorProgress(done=done, total=max(total, done), skipped=skipped)


def annotator_progress(*, annotator: Annotator, kind: str) -> AnnotatorProgress:
    """ "12 of 150": items of ``kind`` the annotator answered, of those they answered or may still be
    given (checks aside): items others have filled meanwhile drop out of the total, so the count ends at
    "n of n" when nothing is left. ``skipped``: items they skipped that still need answers (they come
    back at the end of the queue).

    Two queries: the annotator's own assignments by status (with how many of their items are still
    free), and the study's free items (:func:`study_free_items`); the free items still open to them are
    the study's free items less the free ones they hold or answered."""
    return progress_from_counts(
        annotator=annotator, kind=kind, counts=own_assignment_counts(annotator=annotator)
    )


def annotator_tasks(*, annotator: Annotator) -> list[str]:
    """The task kinds the annotator's study has, in the order they are offered."""
    study = annotator.study
    kinds = []
    if study.rating_enabled:
        kinds.append(WorkKind.RATE)
    if study.references_wanted > 0:
        kinds.append(WorkKind.WRITE)
    if study.diversity_enabled:
        kinds.append(WorkKind.DIVERSITY)
    if study.pairwise_enabled:
        kinds.append(WorkKind.PAIR)
    return [str(kind) for kind in kinds]

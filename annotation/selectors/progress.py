"""What the researcher's annotation page shows: how far each task is, who did what, which replies still
need ratings, and the attention checks.

Progress counts the work done in this app (answered assignments, ``WorkItem.done``), which is what the
assignment engine fills, and, unless the study asks for a fresh collection (``Study.count_imported_ratings``),
the raters of imported data who rated each reply (``WorkItem.imported``, at most k per reply), which the
engine counts toward k too (annotation/services/work_items.py). The page costs a fixed number of queries whatever the size of the study: the item table
shows the ``ITEM_ROWS`` least-complete replies, not all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, F, Q, QuerySet, Sum, Value
from django.db.models.expressions import CombinedExpression
from django.db.models.functions import Least

from annotation.models import (
    Annotator,
    AnnotatorOrigin,
    Assignment,
    AssignmentStatus,
    AttentionCheck,
    Rating,
    Study,
    WorkItem,
    WorkKind,
)
from annotation.selectors.quality import AnnotatorQuality, study_quality

ITEM_ROWS = 200
TASK_LABELS = {
    WorkKind.RATE: "Ratings",
    WorkKind.WRITE: "Reference collection",
    WorkKind.DIVERSITY: "Diversity judgments",
    WorkKind.PAIR: "Pairwise comparisons",
}


def counted_imported(study: Study) -> Least | Value:
    """A rating item's imported raters that count toward k (none when the study collects afresh)."""
    return Least("imported", Value(study.ratings_per_item)) if study.count_imported_ratings else Value(0)


def imported_counted_of(item: WorkItem, study: Study) -> int:
    """:func:`counted_imported` of one rating item already read."""
    return min(item.imported, study.ratings_per_item) if study.count_imported_ratings else 0


def _with_imported(study: Study, field: str) -> CombinedExpression:
    """``field`` (``done``, ``wanted``) of a rating item plus its counted imported raters."""
    return F(field) + counted_imported(study)


@dataclass(frozen=True)
class TaskProgress:
    """One task of the study: ``done`` answers of the ``wanted`` (items times annotators per item); for
    ratings, ``imported`` of both are the counted ratings of imported raters."""

    kind: str
    label: str
    items: int
    complete: int  # items with every answer they want
    done: int
    wanted: int
    imported: int = 0

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.done / self.wanted)) if self.wanted else 0


def task_progress(*, study: Study) -> list[TaskProgress]:
    """Ratings (done of items x k, imported raters counted unless the study collects afresh), references
    (writers done of contexts x writers), diversity and pairwise comparisons (done of items x k); one
    query."""
    counted = counted_imported(study)
    rows = (
        WorkItem.objects.filter(study=study, kind__in=list(TASK_LABELS))
        .values("kind")
        .annotate(
            items=Count("id"),
            complete=Count("id", filter=Q(done__gte=F("wanted"))),
            done=Sum(Least("done", "wanted")),
            wanted=Sum("wanted"),
            imported=Sum(counted),
        )
        .order_by()
    )
    by_kind = {row["kind"]: row for row in rows}
    progress = []
    for kind, label in TASK_LABELS.items():
        if kind not in by_kind:
            continue
        row = by_kind[kind]
        imported = int(row["imported"] or 0) if kind == WorkKind.RATE else 0
        progress.append(
            TaskProgress(
                kind=str(kind),
                label=label,
                items=int(row["items"]),
                complete=int(row["complete"]),
                done=int(row["done"] or 0) + imported,
                wanted=int(row["wanted"] or 0) + imported,
                imported=imported,
            )
        )
    return progress


@dataclass(frozen=True)
class AnnotatorRow:
    """One line of the per-annotator table: their work and their quality."""

    annotator_id: int
    quality: AnnotatorQuality
    rated: int  # rating items answered in this app; for a rater of imported data, the replies they rated
    written: int  # collection items finished
    judged: int  # diversity items answered
    holding: int  # items handed out and not answered yet
    compared: int = 0  # pair items answered (pairwise comparison)


def annotator_rows(*, study: Study) -> list[AnnotatorRow]:
    counts: dict[tuple[int, str, str], int] = {}
    for annotator_id, kind, status, count in (
        Assignment.objects.filter(
            item__study=study, status__in=[AssignmentStatus.DONE, AssignmentStatus.ACTIVE]
        )
        .values_list("annotator_id", "item__kind", "status")
        .annotate(count=Count("id"))
        .order_by()
    ):
        counts[(annotator_id, kind, status)] = count

    def done(annotator_id: int, kind: str) -> int:
        return counts.get((annotator_id, kind, AssignmentStatus.DONE), 0)

    # Raters of imported data have no assignments: what they rated is their ratings' replies.
    imported_rated = dict(
        Rating.objects.filter(annotator__study=study, annotator__origin=AnnotatorOrigin.IMPORTED)
        .values("annotator_id")
        .annotate(replies=Count("response_id", distinct=True))
        .values_list("annotator_id", "replies")
        .order_by()
    )

    return [
        AnnotatorRow(
            annotator_id=quality.annotator_id,
            quality=quality,
            rated=done(quality.annotator_id, WorkKind.RATE) + imported_rated.get(quality.annotator_id, 0),
            written=done(quality.annotator_id, WorkKind.WRITE),
            judged=done(quality.annotator_id, WorkKind.DIVERSITY),
            compared=done(quality.annotator_id, WorkKind.PAIR),
            holding=sum(
                count
                for (annotator_id, _, status), count in counts.items()
                if annotator_id == quality.annotator_id and status == AssignmentStatus.ACTIVE
            ),
        )
        for quality in study_quality(study=study)
    ]


def least_complete_items(*, study: Study, limit: int = ITEM_ROWS) -> QuerySet[WorkItem]:
    """The rating items with the fewest answers first (then the fewest held), with reply, context, system;
    ``answers`` and ``needs`` count the imported raters that count toward k."""
    return (
        WorkItem.objects.filter(study=study, kind=WorkKind.RATE)
        .select_related("response", "response__context", "response__system")
        .annotate(
            held=F("taken") - F("done"),
            answers=_with_imported(study, "done"),
            needs=_with_imported(study, "wanted"),
            counted_imported=counted_imported(study),
        )
        .order_by("answers", "taken", "id")[:limit]
    )


@dataclass(frozen=True)
class HistogramBar:
    ratings: int  # answers received
    items: int
    percent: int  # bar length relative to the tallest bar


def ratings_histogram(*, study: Study) -> list[HistogramBar]:
    """Rating items by the number of answers they received (imported raters counted when they count
    toward k), 0 to k (one query)."""
    counts = dict(
        WorkItem.objects.filter(study=study, kind=WorkKind.RATE)
        .values_list(_with_imported(study, "done"))
        .annotate(items=Count("id"))
        .order_by()
    )
    if not counts:
        return []
    top = max(max(counts), study.ratings_per_item)
    tallest = max(counts.values())
    return [
        HistogramBar(
            ratings=ratings,
            items=counts.get(ratings, 0),
            percent=round(100 * counts.get(ratings, 0) / tallest),
        )
        for ratings in range(top + 1)
    ]


def study_checks(*, study: Study) -> QuerySet[AttentionCheck]:
    """The study's attention checks with how often they were answered and failed."""
    return (
        AttentionCheck.objects.filter(study=study)
        .select_related("question", "context")
        .annotate(
            answered=Count("answers"),
            failures=Count("answers", filter=Q(answers__passed=False)),
        )
        .order_by("-id")
    )


def study_annotator(*, study: Study, annotator_id: int) -> Annotator:
    """An annotator of ``study`` (Annotator.DoesNotExist for anyone else's)."""
    return Annotator.objects.get(pk=annotator_id, study=study)

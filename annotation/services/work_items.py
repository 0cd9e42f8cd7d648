"""Keep a study's work items in step with its data and settings (idempotent; safe to call any time).

One rating item per response (wanted = the study's k), one collection item per context when the study
collects references (wanted = the writers its collection mode needs, Gupta et al. (2019) appendix A), one diversity
item per (context, system) with at least two replies (Gupta et al. (2019) section 5.2), one item per attention check.
Lowering k never drops below what annotators already hold, so the ``taken <= wanted`` constraint stands.

Ratings imported from files (raters of ``AnnotatorOrigin.IMPORTED``) count toward k unless the study asks
for a fresh collection (``Study.count_imported_ratings``): a rating item records how many imported raters
rated its reply (``WorkItem.imported``) and wants only the rest, k minus those (never below what annotators
hold). So a reply imported with k ratings is complete and handed to nobody. The counts are brought up to
date here, which every import calls (and undoing one, through its own call).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, F, QuerySet, Value
from django.db.models.functions import Greatest

from annotation.models import (
    AnnotatorOrigin,
    Assignment,
    AssignmentStatus,
    AttentionCheck,
    CollectionMode,
    DialogContext,
    Rating,
    Reference,
    ReferenceOrigin,
    Response,
    Study,
    WorkItem,
    WorkKind,
)
from annotation.services.pairwise_items import pair_items_sync

CHECK_WANTED = 1_000_000  # an attention check is shown to every annotator
BATCH_SIZE = 500


def writers_per_context(study: Study) -> int:
    """4R1W: 1 writer; 2R2W: 2; 1R4W: N (Gupta et al. (2019) appendix A)."""
    n = study.references_wanted
    if n <= 0:
        return 0
    if study.collection_mode == CollectionMode.TWO_WRITERS:
        return min(2, n)
    if study.collection_mode == CollectionMode.EACH_WRITER:
        return n
    return 1


def writer_quota(study: Study, item: WorkItem) -> int:
    """References the next writer of collection ``item`` is asked for: their share of N (N, N/2 rounded
    up, or 1 by mode), but never more than the context still lacks once the references already collected
    and those promised to the item's other active writers are counted. So a writer who skipped halfway
    leaves exactly the missing part to the next one, and N is reached, not overshot."""
    wanted = study.references_wanted
    writers = max(1, writers_per_context(study))
    share = -(-wanted // writers)
    collected = Reference.objects.filter(context_id=item.context_id, origin=ReferenceOrigin.COLLECTED)
    promised = 0
    for annotator_id, quota in Assignment.objects.filter(
        item=item, status=AssignmentStatus.ACTIVE
    ).values_list("annotator_id", "quota"):
        promised += max(0, quota - collected.filter(author_id=annotator_id).count())
    return max(1, min(share, wanted - collected.count() - promised))


def imported_raters(*, study: Study) -> dict[int, int]:
    """Reply id -> how many raters of imported data rated it (any question); replies without any left out."""
    return dict(
        Rating.objects.filter(response__context__study=study, annotator__origin=AnnotatorOrigin.IMPORTED)
        .values("response_id")
        .annotate(raters=Count("annotator_id", distinct=True))
        .values_list("response_id", "raters")
        .order_by()
    )


def _rating_items_sync(*, study: Study, existing: QuerySet[WorkItem]) -> list[WorkItem]:
    """Bring the rating items' imported counts and ``wanted`` up to date; returns the missing items."""
    k = study.ratings_per_item
    imported = imported_raters(study=study)
    rate_items = existing.filter(kind=WorkKind.RATE)
    stale = [
        WorkItem(pk=pk, imported=imported.get(response_id, 0))
        for pk, response_id, count in rate_items.values_list("pk", "response_id", "imported")
        if imported.get(response_id, 0) != count
    ]
    WorkItem.objects.bulk_update(stale, ["imported"], batch_size=BATCH_SIZE)
    counted = F("imported") if study.count_imported_ratings else Value(0)
    wanted = Greatest(Value(k) - counted, F("taken"))
    rate_items.exclude(wanted=wanted).update(wanted=wanted)
    have = set(rate_items.values_list("response_id", flat=True))
    missing = Response.objects.filter(context__study=study).exclude(pk__in=have).values_list("pk", flat=True)
    return [
        WorkItem(
            study=study,
            kind=WorkKind.RATE,
            response_id=pk,
            imported=imported.get(pk, 0),
            wanted=max(0, k - imported.get(pk, 0)) if study.count_imported_ratings else k,
        )
        for pk in missing
    ]


@transaction.atomic
def work_items_sync(*, study: Study) -> dict[str, int]:
    """Create the missing work items of ``study`` and update ``wanted``; returns items created per kind."""
    created: dict[str, int] = {}
    k = study.ratings_per_item

    def add(kind: str, items: list[WorkItem]) -> None:
        WorkItem.objects.bulk_create(items, batch_size=BATCH_SIZE)
        created[kind] = len(items)

    existing = WorkItem.objects.filter(study=study)
    if study.rating_enabled:
        add(WorkKind.RATE, _rating_items_sync(study=study, existing=existing))
        have_checks = set(existing.filter(kind=WorkKind.CHECK).values_list("attention_check_id", flat=True))
        checks = (
            AttentionCheck.objects.filter(study=study)
            .exclude(pk__in=have_checks)
            .values_list("pk", flat=True)
        )
        add(
            WorkKind.CHECK,
            [
                WorkItem(study=study, kind=WorkKind.CHECK, attention_check_id=pk, wanted=CHECK_WANTED)
                for pk in checks
            ],
        )
    writers = writers_per_context(study)
    if writers:
        have = set(existing.filter(kind=WorkKind.WRITE).values_list("context_id", flat=True))
        contexts = DialogContext.objects.filter(study=study).exclude(pk__in=have).values_list("pk", flat=True)
        add(
            WorkKind.WRITE,
            [WorkItem(study=study, kind=WorkKind.WRITE, context_id=pk, wanted=writers) for pk in contexts],
        )
        existing.filter(kind=WorkKind.WRITE).exclude(wanted=writers).update(
            wanted=Greatest(writers, F("taken"))
        )
    if study.diversity_enabled:
        have_pairs = set(existing.filter(kind=WorkKind.DIVERSITY).values_list("context_id", "system_id"))
        groups = (
            Response.objects.filter(context__study=study)
            .values("context_id", "system_id")
            .annotate(replies=Count("id"))
            .filter(replies__gte=2)
            .order_by()
        )
        add(
            WorkKind.DIVERSITY,
            [
                WorkItem(
                    study=study,
                    kind=WorkKind.DIVERSITY,
                    context_id=group["context_id"],
                    system_id=group["system_id"],
                    wanted=k,
                )
                for group in groups
                if (group["context_id"], group["system_id"]) not in have_pairs
            ],
        )
        existing.filter(kind=WorkKind.DIVERSITY).exclude(wanted=k).update(wanted=Greatest(k, F("taken")))
    if study.pairwise_enabled:  # annotation/services/pairwise_items.py
        add(WorkKind.PAIR, pair_items_sync(study=study, existing=existing))
    return created

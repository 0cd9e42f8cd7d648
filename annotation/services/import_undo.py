"""Undoing an accepted import: deleting exactly the rows it created.

An import created contexts, references, systems, replies and annotators, each pointing back to its
record (``source_import``, annotation/models/study.py); its ratings and imported means hang on its
replies. Undo deletes those rows and everything that cascades from them, in one transaction, and keeps
the record, marked undone. What it decides:

* **Refused** when another import's rows depend on them: replies of a later import to the contexts this
  one created or under the systems it created, ratings a later import gave through annotators this one
  created (a named annotator is reused), references a later import added to its contexts. Deleting
  them would silently take part of that other import with it, so the researcher undoes that one first
  (the message names it). Rows that came from no undoable import (made before undo existed) refuse it
  the same way. An import made before undo existed (``tracked`` False) cannot be undone at all.
* **Listed and deleted with it**: what was done in the app on the imported data since, which cannot exist
  without it: ratings volunteers gave to its replies, references collected for its contexts, diversity
  and pairwise judgments, notes, adjudications, training items and attention checks on them, metric
  scores, work items and assignments. The confirmation names each count.
* **Not restored**: rows the import reused (contexts, references, systems, named annotators already in
  the study) stay as they are; an import that created nothing only has its record marked undone.
  System-level metric scores of a system that keeps other replies were computed with the deleted
  ones, and stay until the study is scored again (the scoring app owns them); the notes say so.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.db.models.deletion import Collector
from django.utils import timezone

from annotation.models import (
    Annotator,
    AnnotatorOrigin,
    DialogContext,
    Rating,
    Reference,
    ReferenceOrigin,
    Response,
    Study,
    StudyImport,
    System,
)
from annotation.services.deletion_counts import (
    DeletionPreview,
    DeletionRefused,
    cascade_collector,
    collector_counts,
)
from annotation.services.work_items import work_items_sync
from kernel.data_version import study_data_changed

REUSED = (
    ("contexts_reused", "context", "contexts"),
    ("references_reused", "reference", "references"),
    ("systems_reused", "system", "systems"),
    ("annotators_reused", "named annotator", "named annotators"),
)


def import_label(record: StudyImport) -> str:
    """``import #12 (jsonl: outputs.jsonl, 2025-03-01 12:30 UTC)``: how messages name an import."""
    files = ", ".join(record.filenames) or "no file"
    return f"import #{record.pk} ({record.format}: {files}, {record.created_at:%Y-%m-%d %H:%M} UTC)"


def import_undo_preview(*, record: StudyImport) -> DeletionPreview:
    """What undoing ``record`` deletes, leaves and cannot restore, or why it cannot be undone."""
    return _planned(record)[0]


def import_undo(
    *, study: Study, import_id: int, user: User | None = None, fingerprint: str | None = None
) -> dict[str, int]:
    """Undo import ``import_id`` of ``study`` in one transaction; returns the rows deleted by model label.
    Raises :class:`DeletionRefused` (nothing changed) when it cannot be undone, or, with ``fingerprint``
    (the preview's), when what would go has changed since the preview was shown."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()  # not while an import writes
        record = StudyImport.objects.filter(study=study, pk=import_id).first()
        if record is None:
            raise DeletionRefused("That import is not one of this study's imports.")
        preview, collector = _planned(record)
        if not preview.allowed:
            raise DeletionRefused(" ".join(preview.refusals))
        preview.confirm(fingerprint, action="undoing")
        deleted: dict[str, int] = {}
        if collector is not None:
            _, deleted = collector.delete()
        StudyImport.objects.filter(pk=record.pk).update(undone_at=timezone.now(), undone_by=user)
        study_data_changed(study_id=study.pk)
        work_items_sync(study=study)  # imported raters that went no longer count toward k
    return {label: count for label, count in deleted.items() if count}


def _created(record: StudyImport) -> list[QuerySet[Any]]:
    """The rows the import created, as the roots of the deletion."""
    return [
        Response.objects.filter(source_import=record),
        Reference.objects.filter(source_import=record),
        DialogContext.objects.filter(source_import=record),
        System.objects.filter(source_import=record),
        Annotator.objects.filter(source_import=record),
    ]


def _planned(record: StudyImport) -> tuple[DeletionPreview, Collector | None]:
    subject = import_label(record)
    if record.undone_at is not None:
        undone = f"{record.undone_at:%Y-%m-%d %H:%M} UTC"
        return DeletionPreview(subject, {}, refusals=[f"This import was already undone ({undone})."]), None
    if not record.tracked:
        refusal = (
            "This import was made before imports recorded the rows they create, so its rows cannot be "
            "told apart from the study's other rows. Delete its systems instead (each system has a "
            "Delete link on the study page)."
        )
        return DeletionPreview(subject, {}, refusals=[refusal]), None
    collector = cascade_collector(_created(record))
    counts = collector_counts(collector)
    preview = DeletionPreview(subject, counts, notes=_notes(record, counts), refusals=_dependents(record))
    return preview, collector


def _dependents(record: StudyImport) -> list[str]:
    """Why rows from elsewhere make the undo impossible: one sentence per other import (see module)."""
    contexts = DialogContext.objects.filter(source_import=record)
    systems = System.objects.filter(source_import=record)
    annotators = Annotator.objects.filter(source_import=record)
    found: dict[int | None, list[str]] = {}

    def add(rows: QuerySet[Any], key: str, what: tuple[str, str]) -> None:
        grouped = rows.values(key).annotate(count=Count("pk")).values_list(key, "count").order_by(key)
        for source, count in grouped:
            found.setdefault(source, []).append(f"{count:,} {what[0] if count == 1 else what[1]}")

    add(
        Response.objects.filter(Q(context__in=contexts) | Q(system__in=systems)).exclude(
            source_import=record
        ),
        "source_import",
        ("reply to its contexts or of its systems", "replies to its contexts or of its systems"),
    )
    add(
        Rating.objects.filter(annotator__in=annotators).exclude(response__source_import=record),
        "response__source_import",
        ("rating by annotators it created", "ratings by annotators it created"),
    )
    add(
        Reference.objects.filter(context__in=contexts)
        .exclude(source_import=record)
        .exclude(origin=ReferenceOrigin.COLLECTED),
        "source_import",
        ("reference to its contexts", "references to its contexts"),
    )
    labels = {
        other.pk: import_label(other) for other in StudyImport.objects.filter(pk__in=[k for k in found if k])
    }
    refusals = []
    for source, parts in found.items():
        if source is None:
            refusals.append(
                f"{' and '.join(parts)} came from no undoable import (made before undo existed) and would "
                "go with it; it cannot be undone."
            )
        else:
            refusals.append(
                f"{labels.get(source, f'import #{source}')} added {' and '.join(parts)}; undo that import "
                "first."
            )
    return refusals


def _notes(record: StudyImport, counts: dict[str, int]) -> list[str]:
    """What the confirmation says besides the counts: work done in the app since, and what stays."""
    notes = []
    volunteer = Rating.objects.filter(
        response__source_import=record, annotator__origin=AnnotatorOrigin.VOLUNTEER
    )
    given = volunteer.count()
    if given:
        raters = volunteer.values("annotator").distinct().count()
        notes.append(
            f"{given:,} of the {counts.get('annotation.Rating', given):,} ratings were given in this app "
            f"since the import, by {raters:,} annotator{'s' if raters != 1 else ''}; they go with the "
            "replies they rate."
        )
    collected = Reference.objects.filter(
        context__source_import=record, origin=ReferenceOrigin.COLLECTED
    ).count()
    if collected:
        notes.append(
            f"{collected:,} of the {counts.get('annotation.Reference', collected):,} references were "
            "collected in this app for the import's contexts; they go with the contexts."
        )
    reused = [
        f"{record.counts[key]:,} {one if record.counts[key] == 1 else many}"
        for key, one, many in REUSED
        if record.counts.get(key)
    ]
    if reused:
        notes.append(f"It reused {', '.join(reused)} already in the study; they stay as they are.")
    kept_systems = list(
        System.objects.filter(responses__source_import=record)
        .exclude(source_import=record)
        .distinct()
        .order_by("name")
        .values_list("name", flat=True)
    )
    if kept_systems:
        notes.append(
            f"System-level metric scores of {', '.join(kept_systems)} (if scored) were computed with these "
            "replies and are not recomputed by the undo: score the study again to bring them up to date."
        )
    if not any(record.counts.get(key) for key in record.counts if key.endswith("_created")):
        notes.append(
            "This import created nothing new (everything it read was already in the study): undoing it "
            "only marks its record as undone."
        )
    return notes

"""Deleting a system with its replies and everything that hangs on them.

A system imported by mistake, or with outputs that were wrong, goes with its replies, their ratings and
imported means, their metric scores and the system's own (system-level) scores, the work items and
assignments that hand its replies out, and the judgments made on them (diversity, pairwise, notes,
adjudications, training items). The study's contexts, references and annotators stay. The confirmation
page (annotation/study_data/views.py) and the API show :func:`system_deletion_preview` first; the deletion
itself checks that what goes is still what was shown.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models.deletion import Collector

from annotation.models import AnnotatorOrigin, Rating, Study, System
from annotation.services.deletion_counts import (
    DeletionPreview,
    DeletionRefused,
    cascade_collector,
    collector_counts,
)
from kernel.data_version import study_data_changed


def system_deletion_preview(*, system: System) -> DeletionPreview:
    """Everything deleting ``system`` removes (nothing is changed)."""
    return _planned(system)[0]


def system_delete(*, study: Study, system_id: int, fingerprint: str | None = None) -> dict[str, int]:
    """Delete system ``system_id`` of ``study`` with all that hangs on it, in one transaction; returns the
    rows deleted by model label. With ``fingerprint`` (the preview's), refuses with
    :class:`DeletionRefused` when what would go has changed since the preview was shown."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()  # not while an import writes
        system = System.objects.filter(study=study, pk=system_id).first()
        if system is None:
            raise DeletionRefused("That system is no longer in the study (it was deleted already).")
        preview, collector = _planned(system)
        preview.confirm(fingerprint, action="deleting")
        _, deleted = collector.delete()
        study_data_changed(study_id=study.pk)
    return {label: count for label, count in deleted.items() if count}


def _planned(system: System) -> tuple[DeletionPreview, Collector]:
    collector = cascade_collector([System.objects.filter(pk=system.pk)])
    volunteer = Rating.objects.filter(response__system=system, annotator__origin=AnnotatorOrigin.VOLUNTEER)
    counts = collector_counts(collector)
    notes = []
    given = volunteer.count()
    if given:
        raters = volunteer.values("annotator").distinct().count()
        notes.append(
            f"{given:,} of the {counts.get('annotation.Rating', given):,} ratings were given in this app, "
            f"by {raters:,} annotator{'s' if raters != 1 else ''}."
        )
    notes.append(
        "The study's contexts, references and annotators stay; the correlation report is recomputed "
        "without this system."
    )
    return DeletionPreview(subject=f"system “{system.name}”", counts=counts, notes=notes), collector

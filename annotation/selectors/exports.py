"""What a researcher exports from a study: one plain dict per rating, collected reference or diversity
judgment, read from the database in chunks (``iterator``), so a download streams at constant memory.

Rows name things the way a researcher's files do: a reply by its external id (its database id when it
has none), a context by its external id, an annotator by pseudonym (never a user name). Times are
ISO 8601 in UTC. ``annotation.exports.files`` writes these rows as CSV or JSON Lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from django.db.models import Count

from annotation.exports.files import (
    DIVERSITY_COLUMNS,
    INCLUDED_COLUMN,
    PAIRWISE_COLUMNS,
    RATING_COLUMNS,
    REFERENCE_COLUMNS,
    rows_as,
)
from annotation.models import (
    DiversityJudgment,
    Rating,
    Reference,
    ReferenceOrigin,
    Response,
    Study,
    WorkItem,
)
from annotation.selectors.pairwise_exports import pairwise_rows
from annotation.selectors.progress import (
    annotator_rows,
    imported_counted_of,
    least_complete_items,
    task_progress,
)
from annotation.selectors.quality import excluded_annotator_ids

CHUNK_SIZE = 2000


def iso_utc(moment: datetime) -> str:
    """``2025-03-01T12:30:05.123456Z``: one unambiguous spelling, whatever the server's time zone."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def external_or_id(external_id: str, pk: int) -> str:
    """The id a researcher's own files use; the database id when the row was not imported with one."""
    return external_id or str(pk)


def rating_rows(*, study: Study, excluded: set[int] | None = None) -> Iterator[dict[str, Any]]:
    """One row per rating of ``study``, in the order they were given. Ratings of annotators excluded
    from reports are exported too: with ``excluded`` (the ids of annotators whose ratings reports leave
    out), each row says whether it counts, in ``included_in_reports``."""
    rows = (
        Rating.objects.filter(response__context__study=study)
        .order_by("pk")
        .values_list(
            "response__external_id",
            "response_id",
            "response__context__external_id",
            "response__context_id",
            "response__system__name",
            "annotator_id",
            "annotator__pseudonym",
            "question__name",
            "value",
            "seconds_spent",
            "client_seconds",
            "created_at",
        )
    )
    for (
        response_external,
        response_id,
        context_external,
        context_id,
        system,
        annotator_id,
        pseudonym,
        question,
        value,
        seconds,
        client_seconds,
        created_at,
    ) in rows.iterator(chunk_size=CHUNK_SIZE):
        row: dict[str, Any] = {
            "study": study.name,
            "item": external_or_id(response_external, response_id),
            "response_id": response_id,
            "context": external_or_id(context_external, context_id),
            "system": system,
            "annotator": pseudonym,
            "question": question,
            "value": value,
            "seconds": seconds,
            "client_seconds": client_seconds,
            "time": iso_utc(created_at),
        }
        if excluded is not None:
            row[INCLUDED_COLUMN] = annotator_id not in excluded
        yield row


def reference_rows(*, study: Study) -> Iterator[dict[str, Any]]:
    """One row per reference collected in the app (imported and original references are the study's
    input, not annotation work, and are not repeated here)."""
    rows = (
        Reference.objects.filter(context__study=study, origin=ReferenceOrigin.COLLECTED)
        .order_by("pk")
        .values_list(
            "pk",
            "context__external_id",
            "context_id",
            "text",
            "author__pseudonym",
            "seconds_spent",
            "client_seconds",
            "keystrokes",
            "flags",
            "created_at",
        )
    )
    for (
        pk,
        context_external,
        context_id,
        text,
        author,
        seconds,
        client_seconds,
        keystrokes,
        flags,
        created_at,
    ) in rows.iterator(chunk_size=CHUNK_SIZE):
        yield {
            "study": study.name,
            "context": external_or_id(context_external, context_id),
            "reference_id": pk,
            "text": text,
            "author": author,
            "seconds": seconds,
            "client_seconds": client_seconds,
            "keystrokes": keystrokes,
            "flags": list(flags or []),
            "time": iso_utc(created_at),
        }


def diversity_rows(*, study: Study) -> Iterator[dict[str, Any]]:
    """One row per diversity judgment: how many replies the system gave for the context, which of them
    the annotator found appropriate (reply ids as in the rating export), and how many meanings."""
    shown = {
        (row["context_id"], row["system_id"]): row["n"]
        for row in Response.objects.filter(context__study=study)
        .values("context_id", "system_id")
        .annotate(n=Count("id"))
        .order_by()
    }
    judgments = (
        DiversityJudgment.objects.filter(context__study=study)
        .select_related("context", "system", "annotator")
        .prefetch_related("appropriate")
        .order_by("pk")
    )
    for judgment in judgments.iterator(chunk_size=CHUNK_SIZE):
        appropriate = sorted(judgment.appropriate.all(), key=lambda response: response.pk)
        yield {
            "study": study.name,
            "context": external_or_id(judgment.context.external_id, judgment.context_id),
            "system": judgment.system.name,
            "annotator": judgment.annotator.pseudonym,
            "replies": shown.get((judgment.context_id, judgment.system_id), 0),
            "appropriate": [external_or_id(response.external_id, response.pk) for response in appropriate],
            "meanings": judgment.meanings,
            "seconds": judgment.seconds_spent,
            "client_seconds": judgment.client_seconds,
            "time": iso_utc(judgment.created_at),
        }


EXPORT_KINDS = ("ratings", "references", "diversity", "pairwise")


def export_columns(*, what: str, with_inclusion: bool = False) -> tuple[str, ...]:
    if what == "ratings":
        return RATING_COLUMNS + ((INCLUDED_COLUMN,) if with_inclusion else ())
    if what == "references":
        return REFERENCE_COLUMNS
    if what == "diversity":
        return DIVERSITY_COLUMNS
    if what == "pairwise":
        return PAIRWISE_COLUMNS
    raise ValueError(f"unknown export {what!r} (choose one of {', '.join(EXPORT_KINDS)})")


def export_rows(*, study: Study, what: str) -> tuple[tuple[str, ...], Iterator[dict[str, Any]]]:
    """The columns and rows of one export of ``study``."""
    if what == "ratings":
        columns = export_columns(what=what, with_inclusion=True)
        return columns, rating_rows(study=study, excluded=excluded_annotator_ids(study=study))
    columns = export_columns(what=what)
    if what == "references":
        return columns, reference_rows(study=study)
    if what == "pairwise":
        return columns, pairwise_rows(study=study)
    return columns, diversity_rows(study=study)


def export_chunks(*, study: Study, what: str, fmt: str) -> Iterator[str]:
    """The text of one export file, line by line (for a streaming response or a file)."""
    columns, rows = export_rows(study=study, what=what)
    return rows_as(fmt, rows, columns)


def study_work_progress(*, study: Study) -> dict[str, list[dict[str, Any]]]:
    """The researcher's progress page as data (annotation.selectors.progress does the counting): per
    task, answers done of wanted; per annotator, items done per task, items held now and their quality
    (agreement, inclusion in reports, attention checks); per rating item, answers received (n) of k,
    least complete first."""
    items = least_complete_items(study=study, limit=WorkItem.objects.filter(study=study).count())
    return {
        "tasks": [
            {
                "kind": task.kind,
                "items": task.items,
                "complete": task.complete,
                "done": task.done,
                "wanted": task.wanted,
                "imported": task.imported,
                "percent": task.percent,
            }
            for task in task_progress(study=study)
        ],
        "annotators": [
            {
                "annotator": row.quality.pseudonym,
                "blocked": row.quality.blocked,
                "report_inclusion": row.quality.report_inclusion,
                "included_in_reports": row.quality.included,
                "agreement": row.quality.agreement,
                "rated": row.rated,
                "checks": row.quality.checks_answered,
                "checks_failed": row.quality.checks_failed,
                "wrote": row.written,
                "judged": row.judged,
                "compared": row.compared,
                "active": row.holding,
            }
            for row in annotator_rows(study=study)
        ],
        "items": [
            {
                "work_item": item.pk,
                "item": external_or_id(item.response.external_id, item.response.pk),
                "context": external_or_id(item.response.context.external_id, item.response.context.pk),
                "system": item.response.system.name,
                # imported raters included when they count toward k
                "done": item.done + imported_counted_of(item, study),
                "wanted": item.wanted + imported_counted_of(item, study),
                "imported": imported_counted_of(item, study),
                "active": item.taken - item.done,
            }
            for item in items
            if item.response is not None
        ],
    }

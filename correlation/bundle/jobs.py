"""The reproducibility bundle as a job: requested from the page, built by a worker, downloaded when ready.

Building it renders every figure of every question, in both formats, through kaleido and a browser: a
browser start and then one render per figure, too long for a web request; ``study_report --bundle``
builds it in-process instead. The claim is a conditional UPDATE, as for report snapshots, so a repeated
request or a second delivery does the work once; a bundle whose worker went silent is queued again.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from correlation.bundle.archive import report_bundle
from correlation.models import ReportBundle, ReportSnapshot, SnapshotStatus
from kernel.broker import task_publish

logger = logging.getLogger(__name__)


def bundle_request(*, snapshot: ReportSnapshot) -> ReportBundle:
    """The bundle of a ready snapshot, queued for a worker unless it is built or being built."""
    try:
        with transaction.atomic():
            bundle, created = ReportBundle.objects.get_or_create(snapshot=snapshot)
    except IntegrityError:
        bundle, created = ReportBundle.objects.get(snapshot=snapshot), False
    stale = timezone.now() - timedelta(seconds=settings.DIALEVAL_REPORT_STALE_SECONDS)
    requeue = (
        ReportBundle.objects.filter(pk=bundle.pk)
        .filter(
            Q(status=SnapshotStatus.FAILED)
            | Q(status__in=[SnapshotStatus.PENDING, SnapshotStatus.RUNNING], heartbeat_at__lt=stale)
        )
        .update(status=SnapshotStatus.PENDING, error="", attempts=0, heartbeat_at=timezone.now())
    )
    if created or requeue:
        if created:
            ReportBundle.objects.filter(pk=bundle.pk).update(heartbeat_at=timezone.now())
        _enqueue(bundle.pk)
    return ReportBundle.objects.defer("content").get(pk=bundle.pk)


def bundle_state(*, snapshot: ReportSnapshot) -> ReportBundle | None:
    return ReportBundle.objects.defer("content").filter(snapshot=snapshot).first()


def bundle_build(*, bundle_id: int) -> None:
    """Build a queued bundle (the task's body); nothing when another worker holds it or it is done."""
    stale = timezone.now() - timedelta(seconds=settings.DIALEVAL_REPORT_STALE_SECONDS)
    claimed = (
        ReportBundle.objects.filter(pk=bundle_id)
        .filter(Q(status=SnapshotStatus.PENDING) | Q(status=SnapshotStatus.RUNNING, heartbeat_at__lt=stale))
        .update(status=SnapshotStatus.RUNNING, heartbeat_at=timezone.now(), attempts=F("attempts") + 1)
    )
    if not claimed:
        return
    bundle = ReportBundle.objects.defer("content").select_related("snapshot__study").get(pk=bundle_id)
    snapshot = bundle.snapshot

    def progress(stage: str, done: int, total: int) -> None:
        ReportBundle.objects.filter(pk=bundle_id).update(stage=stage[:120], heartbeat_at=timezone.now())

    started = time.perf_counter()
    try:
        content = report_bundle(study=snapshot.study, snapshot=snapshot, progress=progress)
    except Exception as error:
        logger.exception("bundle %s failed", bundle_id)
        ReportBundle.objects.filter(pk=bundle_id).update(
            status=SnapshotStatus.FAILED,
            error=f"{type(error).__name__}: {error}"[:2000],
            finished_at=timezone.now(),
        )
        raise
    ReportBundle.objects.filter(pk=bundle_id).update(
        status=SnapshotStatus.READY,
        content=content,
        size=len(content),
        stage=f"built in {time.perf_counter() - started:.0f} s",
        finished_at=timezone.now(),
    )


def bundle_content(*, bundle: ReportBundle) -> bytes:
    content = ReportBundle.objects.filter(pk=bundle.pk).values_list("content", flat=True).get()
    return bytes(content or b"")


BUNDLE_TASK = "correlation.build_bundle"  # correlation/tasks.py, sent by name (no import of the tasks module)


def _enqueue(bundle_id: int) -> None:
    def send() -> None:
        if not task_publish(BUNDLE_TASK, args=[bundle_id], queue="cpu"):
            ReportBundle.objects.filter(pk=bundle_id, status=SnapshotStatus.PENDING).update(
                status=SnapshotStatus.FAILED,
                error="no worker could be reached (is Redis running?); try again",
            )

    transaction.on_commit(send)

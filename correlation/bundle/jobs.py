"""The reproducibility bundle as a job: requested from the page, built by a worker, downloaded when ready.

Building it renders every figure of every question, in both formats, through kaleido and a browser: a
browser start and then one render per figure, too long for a web request; ``study_report --bundle``
builds it in-process instead. The claim is a lease (kernel/lease.py), as for report snapshots, so a
repeated request or a second delivery does the work once, and an attempt that lost its claim writes
nothing; a bundle whose worker went silent is queued again.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from correlation.bundle.archive import report_bundle
from correlation.models import ReportBundle, ReportSnapshot, SnapshotStatus
from kernel.broker import task_publish
from kernel.lease import LeaseLost, LeaseTerms, lease_ask_again, lease_claim

logger = logging.getLogger(__name__)
BUNDLE_LEASE = LeaseTerms(
    model=ReportBundle,
    running=SnapshotStatus.RUNNING,
    waiting=SnapshotStatus.PENDING,
    stale_seconds=lambda: float(settings.DIALEVAL_REPORT_STALE_SECONDS),
)


def bundle_request(*, snapshot: ReportSnapshot) -> ReportBundle:
    """The bundle of a ready snapshot, queued for a worker unless it is built or being built."""
    try:
        with transaction.atomic():
            bundle, created = ReportBundle.objects.get_or_create(snapshot=snapshot)
    except IntegrityError:
        bundle, created = ReportBundle.objects.get(snapshot=snapshot), False
    # A failed one, or one whose worker went silent (a lost message, a killed worker), is queued again.
    requeue = lease_ask_again(BUNDLE_LEASE, bundle.pk, failed=SnapshotStatus.FAILED, error="")
    if created or requeue:
        if created:
            ReportBundle.objects.filter(pk=bundle.pk).update(heartbeat_at=timezone.now())
        _enqueue(bundle.pk)
    return ReportBundle.objects.defer("content").get(pk=bundle.pk)


def bundle_state(*, snapshot: ReportSnapshot) -> ReportBundle | None:
    return ReportBundle.objects.defer("content").filter(snapshot=snapshot).first()


def bundle_build(*, bundle_id: int) -> None:
    """Build a queued bundle (the task's body); nothing when another worker holds it or it is done, and
    nothing written once this attempt lost it (taken over after its heartbeat went stale)."""
    lease = lease_claim(BUNDLE_LEASE, bundle_id)
    if lease is None:
        return
    bundle = ReportBundle.objects.defer("content").select_related("snapshot__study").get(pk=bundle_id)
    snapshot = bundle.snapshot

    def progress(stage: str, done: int, total: int) -> None:
        lease.beat(stage=stage[:120])

    started = time.perf_counter()
    try:
        content = report_bundle(study=snapshot.study, snapshot=snapshot, progress=progress)
    except LeaseLost:
        logger.warning("bundle %s: attempt %s lost its claim; stopped", bundle_id, lease.attempt)
        return
    except Exception as error:
        logger.exception("bundle %s failed", bundle_id)
        lease.finish(
            SnapshotStatus.FAILED, error=f"{type(error).__name__}: {error}"[:2000], finished_at=timezone.now()
        )
        raise
    stored = lease.finish(
        SnapshotStatus.READY,
        content=content,
        size=len(content),
        stage=f"built in {time.perf_counter() - started:.0f} s",
        finished_at=timezone.now(),
    )
    if not stored:
        logger.warning("bundle %s: attempt %s lost its claim; not stored", bundle_id, lease.attempt)


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

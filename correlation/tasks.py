"""Celery tasks for correlation reports: a thin wrapper that takes an id and calls the service."""

from __future__ import annotations

from celery import shared_task

from correlation.bundle.jobs import bundle_build
from correlation.report.cache import report_snapshot_build


@shared_task(name="correlation.build_report", acks_late=True, reject_on_worker_lost=True)
def report_build_task(snapshot_id: int) -> None:
    """Compute report snapshot ``snapshot_id`` (queued on "cpu" by correlation.report.cache)."""
    report_snapshot_build(snapshot_id=snapshot_id)


@shared_task(name="correlation.build_bundle", acks_late=True, reject_on_worker_lost=True)
def bundle_build_task(bundle_id: int) -> None:
    """Build reproducibility bundle ``bundle_id`` (queued on "cpu" by correlation.bundle.jobs)."""
    bundle_build(bundle_id=bundle_id)

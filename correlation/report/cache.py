"""Reports that stay fresh: computed once per study data version and report options, kept in the database.

``Study.data_version`` changes with every write that can change a report, so a snapshot is current
exactly while its version is the study's. The flow:

* :func:`report_for_display` (the page): the current snapshot when it is ready; otherwise never computed
  in the request, whatever the size (a first report that loads models kept the page blank for
  18 s): the page shows the newest older snapshot marked as updating (or "Computing the report…"), with
  a progress bar. A small study is then computed by the page's own POST to
  :func:`report_compute_requested` (no worker needed), which writes its progress on the snapshot as a
  worker does; a larger one is queued for a worker (``correlation.build_report``).
* :func:`report_served` (the API and every download): the current snapshot when it is ready;
  otherwise never computed in the request (a report that loads METEOR 1.5 outlived gunicorn's 30 s and the
  client got an HTML 500): the worker's build is started (or joined) and the caller answers 202 with the
  progress and where to poll, or serves the newest older report marked stale when the client asks for it.
* :func:`report_current` (``study_report``, a command, not a request): the current snapshot, computed now in
  this process if it is not ready.
* :func:`report_snapshot_build` (the task): claims a snapshot with its lease (kernel/lease.py: a second
  delivery of the same message, or a second worker, does nothing while the first one's heartbeat is
  fresh), computes it with progress and heartbeats, stores it, and drops the snapshots it replaces. Every
  write of the attempt is fenced by its attempt number: an attempt that lost its claim writes nothing, and
  never turns a READY snapshot into FAILED.

The version is read before the data, and bumps happen after their writes commit, so a snapshot's data is
never older than its version: a report computed from newer data is stored under the older version and
recomputed at the next view, never served as current.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Study
from correlation.models import ReportSnapshot, SnapshotStatus
from correlation.report.loading import report_cost, report_inputs
from kernel.broker import task_publish
from kernel.lease import Lease, LeaseLost, LeaseTerms, lease_claim
from stats.report.builder import DOCUMENT_VERSION, build_report
from stats.report.code_version import code_version
from stats.report.document_types import ReportDocument
from stats.report.plot_types import ReportPlots
from stats.report.types import ReportOptions

logger = logging.getLogger(__name__)
HEARTBEAT_SECONDS = 1.0  # progress is written at most this often
Progress = Callable[[str, int, int], None]
SNAPSHOT_LEASE = LeaseTerms(
    model=ReportSnapshot,
    running=SnapshotStatus.RUNNING,
    waiting=SnapshotStatus.PENDING,
    stale_seconds=lambda: float(settings.DIALEVAL_REPORT_STALE_SECONDS),
    max_attempts=lambda: int(settings.DIALEVAL_REPORT_MAX_ATTEMPTS),
)


@dataclass(frozen=True)
class ReportView:
    """What the page shows: ``shown`` (a ready snapshot, maybe of an older version) and ``current`` (the
    snapshot of the study's current version, in whatever state)."""

    data_version: int
    current: ReportSnapshot | None
    shown: ReportSnapshot | None
    computed_here: bool = False  # the current one waits for the page's POST (a small study)

    @property
    def fresh(self) -> bool:
        return self.shown is not None and self.shown.data_version == self.data_version


def study_version(*, study: Study) -> int:
    return int(Study.objects.filter(pk=study.pk).values_list("data_version", flat=True).get())


def report_for_display(*, study: Study, options: ReportOptions) -> ReportView:
    """The snapshot to show and the one being computed; computes nothing itself (see the module)."""
    version = study_version(study=study)
    current = _snapshot(study, options, version)
    if current is not None and current.status == SnapshotStatus.READY:
        return ReportView(version, current, current)
    if current is None:
        current, created = _get_or_create(study, options, version)
        small = report_is_small(study=study)
        if created and not small:
            _enqueue(current.pk)
    else:
        # A small one nobody asked to compute (a client without JavaScript) goes to a worker in the end.
        current = _requeue_if_lost(current)
        small = current.status == SnapshotStatus.PENDING and report_is_small(study=study)
    shown = _latest_ready(study, options)
    if shown is not None and shown.pk == current.pk:  # it became ready between the two reads: say so once
        return ReportView(version, shown, shown)
    return ReportView(version, current, shown, computed_here=small)


def report_is_small(*, study: Study) -> bool:
    """Whether the study's report is computed in a web request (the page's POST) rather than by a worker."""
    cost = report_cost(study=study)
    return (
        cost.cells <= settings.DIALEVAL_REPORT_INLINE_MAX_CELLS
        and cost.reference_pairs + cost.diversity_pairs <= settings.DIALEVAL_REPORT_INLINE_MAX_PAIRS
    )


def report_compute_requested(*, study: Study, options: ReportOptions) -> ReportView:
    """The page asks for the report of the study's current data: a small study's is computed now, in this
    request, with its progress on the snapshot (the page polls it meanwhile); a larger one stays with the
    worker. Safe to ask twice: the snapshot is claimed as a worker claims it."""
    view = report_for_display(study=study, options=options)
    current = view.current
    if current is not None and current.status == SnapshotStatus.PENDING and report_is_small(study=study):
        report_snapshot_build(snapshot_id=current.pk)
        return report_for_display(study=study, options=options)
    return view


def report_served(*, study: Study, options: ReportOptions) -> ReportView:
    """The current snapshot and the newest ready one, never computed here: a current snapshot that is not
    ready is queued for a worker (created and queued, or queued again when its worker went silent or when
    only the page's own request was to compute it); ``view.fresh`` says whether the current one is ready."""
    version = study_version(study=study)
    current = _snapshot(study, options, version)
    if current is not None and current.status == SnapshotStatus.READY:
        return ReportView(version, current, current)
    if current is None:
        current, created = _get_or_create(study, options, version)
        if created:
            # Marked as queued for a worker, so that the next poll does not queue it once more.
            ReportSnapshot.objects.filter(pk=current.pk).update(heartbeat_at=timezone.now())
            _enqueue(current.pk)
    elif current.status == SnapshotStatus.PENDING and current.heartbeat_at is None:
        # A small study's snapshot that waits for the page's own request: a worker builds it for this client.
        marked = ReportSnapshot.objects.filter(pk=current.pk, heartbeat_at__isnull=True).update(
            heartbeat_at=timezone.now()
        )
        if marked:
            _enqueue(current.pk)
    else:
        current = _requeue_if_lost(current)
    current.refresh_from_db()
    return ReportView(version, current, _latest_ready(study, options))


def report_current(
    *, study: Study, options: ReportOptions, progress: Progress | None = None
) -> ReportSnapshot:
    """The ready snapshot of the study's current data, computed now (in this process) when needed."""
    version = study_version(study=study)
    current = _snapshot(study, options, version)
    if current is not None and current.status == SnapshotStatus.READY:
        return current
    return report_compute_now(study=study, options=options, version=version, progress=progress)


def report_compute_now(
    *, study: Study, options: ReportOptions, version: int, progress: Progress | None = None
) -> ReportSnapshot:
    started = time.perf_counter()
    document, plots = _compute(study, options, progress)
    snapshot, _ = _get_or_create(study, options, version)
    # Computed here, outside any lease (a command): the same document a worker would store, written unless
    # one is ready already; a worker that held the snapshot then finds its claim gone and stores nothing.
    fields = _ready_fields(snapshot, document, plots, time.perf_counter() - started)
    if (
        ReportSnapshot.objects.filter(pk=snapshot.pk)
        .exclude(status=SnapshotStatus.READY)
        .update(status=SnapshotStatus.READY, **fields)
    ):
        _prune(snapshot, options)
    snapshot.refresh_from_db()
    return snapshot


def report_snapshot_build(*, snapshot_id: int) -> ReportSnapshot | None:
    """Compute a queued snapshot (the Celery task's body); ``None`` when another worker holds it, it is
    already done, or this attempt lost it while computing (taken over once its heartbeat went stale: it
    then writes nothing, see kernel/lease.py)."""
    lease = lease_claim(SNAPSHOT_LEASE, snapshot_id)
    if lease is None:
        return None
    snapshot = ReportSnapshot.objects.select_related("study").get(pk=snapshot_id)
    if lease.over_cap:
        lease.finish(
            SnapshotStatus.FAILED,
            error=f"gave up after {lease.attempt - 1} attempts",
            finished_at=timezone.now(),
        )
        return snapshot
    options = ReportOptions.from_key(snapshot.options_key)
    last_write = 0.0

    def progress(stage: str, done: int, total: int) -> None:
        nonlocal last_write
        now = time.monotonic()
        if now - last_write < HEARTBEAT_SECONDS and done < total:
            return
        last_write = now
        lease.beat(stage=stage[:120], progress_done=done, progress_total=total)

    started = time.perf_counter()
    try:
        document, plots = _compute(snapshot.study, options, progress)
    except LeaseLost:
        logger.warning("report snapshot %s: attempt %s lost its claim; stopped", snapshot_id, lease.attempt)
        return None
    except Exception as error:
        logger.exception("report snapshot %s failed", snapshot_id)
        lease.finish(
            SnapshotStatus.FAILED, error=f"{type(error).__name__}: {error}"[:2000], finished_at=timezone.now()
        )
        raise
    fields = _ready_fields(snapshot, document, plots, time.perf_counter() - started)
    if not lease.finish(SnapshotStatus.READY, **fields):
        logger.warning(
            "report snapshot %s: attempt %s lost its claim; not stored", snapshot_id, lease.attempt
        )
        return None
    _prune(snapshot, options)
    return ReportSnapshot.objects.get(pk=snapshot_id)


def report_retry(*, snapshot: ReportSnapshot) -> None:
    """Queue a failed snapshot again (the page's "try again", a 503 of the API) as a new row: its attempts
    start again from 0 under a new primary key, so that no attempt of the failed build, however late, holds a
    lease on the new one (an attempt number reused on the same row would)."""
    with transaction.atomic():
        deleted = ReportSnapshot.objects.filter(pk=snapshot.pk, status=SnapshotStatus.FAILED).delete()[1]
        if not deleted.get(ReportSnapshot._meta.label):
            return  # retried by another request meanwhile, or no longer failed
        fresh = ReportSnapshot.objects.create(
            study_id=snapshot.study_id, options_key=snapshot.options_key, data_version=snapshot.data_version
        )
    _enqueue(fresh.pk)


def _ready_fields(
    snapshot: ReportSnapshot, document: ReportDocument, plots: ReportPlots, seconds: float
) -> dict[str, Any]:
    """What a ready snapshot's row holds: its document (stamped with its version) and how long it took."""
    document["data_version"] = snapshot.data_version
    now = timezone.now()
    return {
        "document": document,
        "plots": plots,
        "stage": "",
        "error": "",
        "compute_seconds": seconds,
        "finished_at": now,
        "heartbeat_at": now,
    }


def _compute(
    study: Study, options: ReportOptions, progress: Progress | None
) -> tuple[ReportDocument, ReportPlots]:
    inputs = report_inputs(study=study, progress=progress)

    def statistics(done: int, total: int) -> None:
        if progress is not None:
            progress("statistics", done, total)

    return build_report(inputs, options, statistics, blas_threads=settings.DIALEVAL_REPORT_BLAS_THREADS)


def snapshot_key(options: ReportOptions) -> str:
    """The options, the code version and the document version: a deploy that changes how reports are
    computed recomputes them instead of serving what older code stored."""
    return f"{options.key};code={code_version()};document={DOCUMENT_VERSION}"


def _snapshot(study: Study, options: ReportOptions, version: int) -> ReportSnapshot | None:
    return ReportSnapshot.objects.filter(
        study=study, options_key=snapshot_key(options), data_version=version
    ).first()


def _latest_ready(study: Study, options: ReportOptions) -> ReportSnapshot | None:
    return (
        ReportSnapshot.objects.filter(
            study=study, options_key=snapshot_key(options), status=SnapshotStatus.READY
        )
        .order_by("-data_version")
        .first()
    )


def _get_or_create(study: Study, options: ReportOptions, version: int) -> tuple[ReportSnapshot, bool]:
    try:
        with transaction.atomic():
            return ReportSnapshot.objects.get_or_create(
                study=study, options_key=snapshot_key(options), data_version=version
            )
    except IntegrityError:  # created by a concurrent request between the get and the create
        return ReportSnapshot.objects.get(
            study=study, options_key=snapshot_key(options), data_version=version
        ), False


def _requeue_if_lost(snapshot: ReportSnapshot) -> ReportSnapshot:
    """A pending or running snapshot whose worker went silent is queued again (a message lost with a
    broker restart, a worker killed mid-report)."""
    if snapshot.status not in (SnapshotStatus.PENDING, SnapshotStatus.RUNNING):
        return snapshot
    last_sign = snapshot.heartbeat_at or snapshot.created_at
    if last_sign < SNAPSHOT_LEASE.stale_before():
        # Back to PENDING with a fresh heartbeat: any worker claims it, and the views that follow wait a
        # stale period before queuing it again (left RUNNING with an old heartbeat, every poll of the
        # page queued one more message until a worker was free). A running one is given back through its
        # holder's lease, only while that holder is still silent.
        if snapshot.status == SnapshotStatus.RUNNING:
            touched = Lease.of(SNAPSHOT_LEASE, snapshot).release(only_if_silent=True)
        else:
            touched = bool(
                ReportSnapshot.objects.filter(
                    pk=snapshot.pk, status=SnapshotStatus.PENDING, heartbeat_at=snapshot.heartbeat_at
                ).update(heartbeat_at=timezone.now())
            )
        if touched:
            logger.warning("report snapshot %s lost its worker; queued again", snapshot.pk)
            _enqueue(snapshot.pk)
            snapshot.refresh_from_db()
    return snapshot


REPORT_TASK = "correlation.build_report"  # correlation/tasks.py, sent by name (no import of the tasks module)


def _enqueue(snapshot_id: int) -> None:
    def send() -> None:
        # No broker: the page still answers at once (kernel.broker), and a later view queues it again.
        if not task_publish(REPORT_TASK, args=[snapshot_id], queue="cpu"):
            ReportSnapshot.objects.filter(pk=snapshot_id, status=SnapshotStatus.PENDING).update(
                error="no worker could be reached (is Redis running?); the report will be queued again",
                heartbeat_at=timezone.now() - timedelta(seconds=settings.DIALEVAL_REPORT_STALE_SECONDS + 1),
            )

    transaction.on_commit(send)


def _prune(snapshot: ReportSnapshot, options: ReportOptions) -> None:
    """Drop what the ready ``snapshot`` replaces: older snapshots of its options, and the finished ones
    that other code computed for the same options. The key kept is the snapshot's own, not this process's:
    a worker on other code than the web process that made the snapshot (a deploy under way, or a checkout
    changed under a running worker) once deleted the very snapshot it had just finished, and the page,
    finding none, made and queued another at every poll, forever. Snapshots in flight under another key
    are left to the process that wants them."""
    key = snapshot.options_key
    ReportSnapshot.objects.filter(
        study_id=snapshot.study_id, options_key=key, data_version__lt=snapshot.data_version
    ).delete()
    ReportSnapshot.objects.filter(
        study_id=snapshot.study_id, options_key__startswith=f"{options.key};code="
    ).exclude(options_key=key).exclude(status__in=(SnapshotStatus.PENDING, SnapshotStatus.RUNNING)).delete()

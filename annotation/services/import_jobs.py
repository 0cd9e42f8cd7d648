"""Large imports in a Celery worker, with progress, all or nothing as in the web request.

:func:`import_upload` is what the study page and the API call: an upload up to
``DIALEVAL_IMPORT_INLINE_MAX_BYTES`` (all files together) is imported in the request as before; a larger
one is saved under ``DIALEVAL_IMPORT_DIR/<folder>/`` and an :class:`ImportJob` is queued on "cpu".

:func:`import_job_run` (the task's body) claims the job with its lease (kernel/lease.py), then runs the same
:func:`annotation.services.imports.study_import`: one transaction, so a rejected import, an error or a
worker killed mid-way leaves the study exactly as it was. The job is marked succeeded inside that
transaction, fenced by its attempt number, so the rows and "succeeded" commit together, and an attempt
that lost the job (a retry took it over) rolls its work back instead of importing twice.

Progress: while the files are read (outside the transaction) the job row is updated, at most once a
second. Checking and writing happen inside the import's transaction, where the row cannot be updated for
others to see (SQLite even holds its one write lock), so progress then goes to ``progress.json`` in the
job's folder; :func:`import_job_status` reads both. Either counts as the job's heartbeat.

:func:`import_jobs_recover` (Celery beat, every ``DIALEVAL_RECOVERY_INTERVAL_SECONDS``) sends pending jobs
whose message was lost, and retries running jobs whose heartbeat is older than
``DIALEVAL_IMPORT_STALE_SECONDS`` (the worker died; the broker's own redelivery of an unacknowledged
message is slower); after ``DIALEVAL_IMPORT_MAX_ATTEMPTS`` such deaths the job fails. It also removes
saved uploads that no pending or running job names any more, after an hour.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings
from django.contrib.auth.models import User
from django.db import DatabaseError, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.importers import ImportFile, ImportProblem, ImportRejected
from annotation.importers.formats import FORMATS
from annotation.models import ImportJob, ImportJobStatus, Study, StudyImport
from annotation.services.imports import READING, study_import
from kernel.broker import task_publish
from kernel.lease import Lease, LeaseLost, LeaseTerms, RecoveryReport, lease_claim, lease_give_up

logger = logging.getLogger(__name__)
RUN_TASK = "annotation.run_import"
PROGRESS_FILE = "progress.json"
PROGRESS_SECONDS = 1.0  # progress is written at most this often
PENDING_GRACE_SECONDS = 5.0  # a job just created is being sent by its request; recovery leaves it alone
ORPHAN_SECONDS = 3600  # a saved upload no active job names is removed once untouched this long


class Upload(Protocol):
    """An uploaded file as Django gives it (UploadedFile), or any File: a name, a size, chunks of bytes."""

    @property
    def name(self) -> str | None: ...

    @property
    def size(self) -> int: ...

    def chunks(self, chunk_size: int | None = None) -> Any: ...


IMPORT_LEASE = LeaseTerms(
    model=ImportJob,
    running=ImportJobStatus.RUNNING,
    waiting=ImportJobStatus.PENDING,
    stale_seconds=lambda: float(settings.DIALEVAL_IMPORT_STALE_SECONDS),
    max_attempts=lambda: int(settings.DIALEVAL_IMPORT_MAX_ATTEMPTS),
)


class _JobLost(LeaseLost):
    """This attempt no longer owns the job (recovery handed it to another attempt): roll back."""


def import_upload(
    *, study: Study, format: str, uploads: Sequence[Upload], user: User | None, question: str | None
) -> StudyImport | ImportJob:
    """Import ``uploads`` now when small, else queue an :class:`ImportJob` (see the module docstring).
    Raises ImportRejected (nothing changed) for an inline import that is rejected."""
    if sum(upload.size for upload in uploads) > settings.DIALEVAL_IMPORT_INLINE_MAX_BYTES:
        return import_job_create(study=study, format=format, uploads=uploads, user=user, question=question)
    files = [ImportFile(name=upload.name or "upload", data=b"".join(upload.chunks())) for upload in uploads]
    return study_import(study=study, format=format, files=files, user=user, question=question)


def import_job_create(
    *, study: Study, format: str, uploads: Sequence[Upload], user: User | None, question: str | None
) -> ImportJob:
    """Save the upload and queue its import (sent once the surrounding transaction commits). What can be
    said without reading the files (unknown format, no file, a file over the limit) is refused at once."""
    limit = settings.DIALEVAL_MAX_UPLOAD_BYTES
    problems = [
        ImportProblem(
            upload.name or "", None, None, f"the file is {upload.size:,} bytes; the limit is {limit:,}"
        )
        for upload in uploads
        if upload.size > limit
    ]
    if format not in FORMATS:
        problems.append(
            ImportProblem("", None, None, f'unknown format "{format}"; choose one of {", ".join(FORMATS)}')
        )
    if not uploads:
        problems.append(ImportProblem("", None, None, "no files were given"))
    if problems:
        raise ImportRejected(problems)
    folder = uuid.uuid4().hex
    directory = _directory(folder)
    directory.mkdir(parents=True, exist_ok=False)
    try:
        names = []
        for index, upload in enumerate(uploads):
            names.append(ImportFile(name=upload.name or f"file-{index + 1}", data=b"").basename)
            with (directory / _stored_name(index)).open("wb") as stored:  # never the user's name on disk
                for chunk in upload.chunks():
                    stored.write(chunk)
        job = ImportJob.objects.create(
            study=study,
            format=format,
            question=question or "",
            filenames=names,
            folder=folder,
            total_bytes=sum(upload.size for upload in uploads),
            created_by=user,
        )
    except BaseException:  # no job, no file left behind
        shutil.rmtree(directory, ignore_errors=True)
        raise
    transaction.on_commit(lambda: import_job_send(job_id=job.pk))
    return job


def import_job_send(*, job_id: int) -> bool:
    """Send the job's task message; False (the periodic check sends it later) when the broker is down."""
    sent = task_publish(RUN_TASK, args=[job_id], queue="cpu")
    if sent:
        ImportJob.objects.filter(pk=job_id).update(enqueued_at=timezone.now())
    return sent


def import_job_run(*, job_id: int) -> ImportJob | None:
    """Claim and run job ``job_id`` (the task's body); None when another attempt holds it or it is done."""
    now = timezone.now()
    lease = lease_claim(IMPORT_LEASE, job_id, stage=READING, progress_done=0, progress_total=0)
    if lease is None:
        return None
    job = ImportJob.objects.select_related("study", "created_by").get(pk=job_id)
    if job.started_at is None:
        lease.write(started_at=now)
    if lease.over_cap:
        return _failed(
            job,
            lease,
            error=f"the worker stopped {lease.attempt - 1} times during this import; nothing was imported",
        )
    try:
        files = _stored_files(job)
    except FileNotFoundError:
        return _failed(
            job,
            lease,
            error="the uploaded files are no longer on the server (were they saved where the workers can "
            "read them? see DIALEVAL_IMPORT_DIR); nothing was imported",
        )
    reporter = ImportJobReporter(job, lease)

    def finish(record: StudyImport) -> None:
        owned = lease.finish(
            ImportJobStatus.SUCCEEDED,
            result=record,
            stage="",
            progress_done=F("progress_total"),
            finished_at=timezone.now(),
            heartbeat_at=timezone.now(),
        )
        if not owned:
            raise _JobLost

    try:
        study_import(
            study=job.study,
            format=job.format,
            files=files,
            user=job.created_by,
            question=job.question or None,
            progress=reporter,
            before_commit=finish,
        )
    except LeaseLost:
        logger.warning("import job %s was taken over by another attempt; this one rolled back", job_id)
        return None
    except ImportRejected as rejected:
        return _failed(job, lease, problems=rejected.problems, truncated=rejected.truncated)
    except Exception as error:  # a bug or an outage: the transaction rolled back, say so on the job
        logger.exception("import job %s failed", job_id)
        return _failed(job, lease, error=f"{type(error).__name__}: {error}; nothing was imported"[:2000])
    _remove_files(job)
    return ImportJob.objects.filter(pk=job.pk).first()  # None if the study was deleted meanwhile


def import_jobs_recover() -> RecoveryReport:
    """One pass of the periodic check (module docstring); what it did (``notes``: the upload folders
    removed)."""
    report = RecoveryReport("import")
    now = timezone.now()
    resend_before = now - timedelta(seconds=settings.DIALEVAL_IMPORT_STALE_SECONDS)
    pending = ImportJob.objects.filter(
        status=ImportJobStatus.PENDING, created_at__lt=now - timedelta(seconds=PENDING_GRACE_SECONDS)
    ).filter(Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=resend_before))
    for job_id in pending.order_by("created_at").values_list("pk", flat=True):
        report.resend(job_id, lambda pk: import_job_send(job_id=pk))
    for job in IMPORT_LEASE.stale():
        if _last_sign(job) >= IMPORT_LEASE.stale_before():
            continue  # writing inside its transaction: the progress file is its heartbeat
        try:
            if IMPORT_LEASE.exhausted(job.attempts):
                if _failed(
                    job,
                    error=f"the worker stopped {job.attempts} times during this import; nothing was imported",
                ):
                    report.failed.append(job.pk)
                continue
            back = Lease.of(IMPORT_LEASE, job).release(only_if_silent=True, heartbeat_at=now)
        except DatabaseError:  # SQLite: a live import holds the write lock; look again next time
            logger.warning("import job %s: could not be checked now (database busy)", job.pk)
            continue
        if back and import_job_send(job_id=job.pk):
            report.requeued.append(job.pk)
    report.notes += [f"removed the upload folder {folder}" for folder in _remove_orphan_folders()]
    if report:
        logger.warning("import recovery: %s", report)
    return report


def _remove_orphan_folders() -> list[str]:
    """Saved uploads no pending or running job needs (its job finished but its worker stopped before the
    files were removed, or the study was deleted with its jobs), once untouched for an hour."""
    root = Path(settings.DIALEVAL_IMPORT_DIR)
    if not root.is_dir():
        return []
    active = set(
        ImportJob.objects.filter(status__in=[ImportJobStatus.PENDING, ImportJobStatus.RUNNING]).values_list(
            "folder", flat=True
        )
    )
    before = time.time() - ORPHAN_SECONDS
    removed = []
    for folder in root.iterdir():
        try:
            untouched = folder.is_dir() and folder.stat().st_mtime < before
        except OSError:
            continue
        if untouched and folder.name not in active:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
    return removed


@dataclass(frozen=True)
class ImportJobProgress:
    status: str
    stage: str
    done: int
    total: int


def import_job_status(*, job: ImportJob) -> ImportJobProgress:
    """Where the job is: the row, or the progress file when the import is inside its transaction."""
    progress = ImportJobProgress(job.status, job.stage, job.progress_done, job.progress_total)
    if job.status != ImportJobStatus.RUNNING:
        return progress
    written = _read_progress(job)
    if written is not None and (job.heartbeat_at is None or written[0] >= job.heartbeat_at):
        _, stage, done, total = written
        return ImportJobProgress(job.status, stage, done, total)
    return progress


class ImportJobReporter:
    """study_import's progress callback: the job row while reading, the progress file after (see module)."""

    def __init__(self, job: ImportJob, lease: Lease) -> None:
        self.job = job
        self.lease = lease
        self.last = 0.0
        self.stage = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage == self.stage and now - self.last < PROGRESS_SECONDS and done < total:
            return
        self.stage, self.last = stage, now
        if stage == READING:  # before the import's transaction: the row, for everyone to see
            try:
                self.lease.beat(stage=stage, progress_done=done, progress_total=total)
            except DatabaseError:  # e.g. SQLite busy with another import: progress is not worth failing for
                logger.warning("import job %s: could not write its progress", self.job.pk)
        else:
            _write_progress(self.job, stage, done, total)


def _failed(
    job: ImportJob,
    lease: Lease | None = None,
    *,
    problems: Sequence[ImportProblem] = (),
    truncated: bool = False,
    error: str = "",
) -> ImportJob | None:
    """Fail the job: through ``lease`` (the attempt that holds it), or, with none, as the periodic recovery
    gives up on a silent job at its last attempt. Nothing when that attempt no longer holds it."""
    fields: dict[str, Any] = {
        "stage": "",
        "problems": [vars(problem) for problem in problems],
        "problems_truncated": truncated,
        "error": error,
        "finished_at": timezone.now(),
    }
    if lease is not None:
        ended = lease.finish(ImportJobStatus.FAILED, **fields)
    else:
        ended = lease_give_up(
            IMPORT_LEASE, job.pk, attempts=job.attempts, status=ImportJobStatus.FAILED, **fields
        )
    if not ended:
        return None
    _remove_files(job)
    return ImportJob.objects.filter(pk=job.pk).first()  # None if the study was deleted meanwhile


def _directory(folder: str) -> Path:
    return Path(settings.DIALEVAL_IMPORT_DIR) / folder


def _stored_name(index: int) -> str:
    return f"file-{index:02d}"


def _stored_files(job: ImportJob) -> list[ImportFile]:
    directory = _directory(job.folder)
    return [
        ImportFile(name=name, data=(directory / _stored_name(index)).read_bytes())
        for index, name in enumerate(job.filenames)
    ]


def _write_progress(job: ImportJob, stage: str, done: int, total: int) -> None:
    """Replace the job's progress file at once (a reader never sees half of it)."""
    directory = _directory(job.folder)
    text = json.dumps({"at": timezone.now().isoformat(), "stage": stage, "done": done, "total": total})
    partial = directory / f"{PROGRESS_FILE}.{uuid.uuid4().hex[:8]}"
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(directory / PROGRESS_FILE)
    except OSError:  # progress is never worth failing an import for
        logger.warning("import job %s: could not write its progress file", job.pk)


def _read_progress(job: ImportJob) -> tuple[datetime, str, int, int] | None:
    try:
        written = json.loads((_directory(job.folder) / PROGRESS_FILE).read_text(encoding="utf-8"))
        return (
            datetime.fromisoformat(written["at"]),
            str(written["stage"]),
            int(written["done"]),
            int(written["total"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _last_sign(job: ImportJob) -> datetime:
    """The newest sign of life: the row's heartbeat or the progress file's last write."""
    last = job.heartbeat_at or job.created_at
    written = _read_progress(job)
    return max(last, written[0]) if written is not None else last


def _remove_files(job: ImportJob) -> None:
    shutil.rmtree(_directory(job.folder), ignore_errors=True)

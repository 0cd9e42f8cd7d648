"""Training a learned metric as a Celery job, started from the study page or the API.

- :func:`training_job_create` checks everything it can before anything is queued (kind, a free name, a
  corpus on the server inside the allowed folders or an upload within the size limit, the corpus read with
  the metric core's loaders, the parameters) and raises :class:`TrainingJobError` naming the field; nothing
  is saved then. Otherwise it commits a PENDING job and sends it once committed.
- :func:`training_job_run` is the task's body: it claims the job with its lease (kernel/lease.py: PENDING
  -> RUNNING, ``attempts`` + 1; every later write is conditional on that attempt, a fencing token), trains
  through ``trained_model_train`` and writes the trainer's reports on the job row: every epoch's point at
  once (the curve), the latest report and the heartbeat at most once a second. A cancel request is read
  at each such write; the trainer then stops (``TrainingCancelled``) and its scratch folder is removed, so
  a cancelled or failed job leaves no artifact.
- Success links the model, makes it the study's choice when the job was started from a study, and sends
  the scoring runs that waited for it (:mod:`scoring.services.waiting_runs`); failure or cancellation fails
  them, naming the job.
- :func:`training_jobs_recover` is part of the periodic recovery: a RUNNING job whose heartbeat is older
  than ``DIALEVAL_TRAINING_STALE_SECONDS`` lost its worker (killed, out of memory, a host restart); it is
  queued again from the start, and failed once it used ``DIALEVAL_TRAINING_MAX_ATTEMPTS`` attempts. PENDING
  jobs whose message was never sent (the broker was down) or was lost are sent again.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import Study
from kernel.lease import Lease, LeaseTerms, RecoveryReport, lease_claim
from scoring.metrics.maude.dialogs import DIALOGS_JSONL
from scoring.metrics.ruber.corpus import DAILYDIALOG, PAIRS_JSONL, CorpusError
from scoring.metrics.training_progress import EPOCH_STAGE, TrainingCancelled, TrainingReport
from scoring.models import ACTIVE_TRAINING_STATUSES, TrainedModel, TrainingJob, TrainingStatus
from scoring.services.errors import error_text
from scoring.services.queueing import GPU_QUEUE, default_queue, gpu_worker_available, task_send
from scoring.services.resending import unsent_pending_resend
from scoring.services.waiting_runs import waiting_runs_reconsider
from scoring.torch_threads import POOL_PROCESSES_ENV, torch_threads_default
from scoring.trained_model_services import (
    TrainedModelError,
    TrainingRequest,
    study_model_choose,
    trained_model_train,
    training_corpus_formats,
    training_corpus_load,
)
from scoring.trainers import dialog_kinds, kind_trainer, kind_trainers, name_list_keys, trainer_kinds

logger = logging.getLogger(__name__)

TRAIN_TASK = "scoring.train_model"
GENERIC_FORMAT = (
    "generic"  # the generic JSON Lines format of the kind: pairs, or MaUde's and Cross-RUBER's dialogs
)
FORMAT_CHOICES = (DAILYDIALOG, GENERIC_FORMAT)
PROGRESS_WRITE_SECONDS = 1.0  # the latest report and the heartbeat are written at most this often
MAX_EPOCHS = 100
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_COMMON_PARAMETERS = ("epochs", "max_pairs")
_RUN_PARAMETERS = ("threads", "language")
BROKER_DOWN_NOTE = (
    "not queued yet: the task broker (Redis) is unreachable; the job starts once it is back (the periodic "
    "recovery sends it)"
)


# A stale job is not claimed by the next delivery: the periodic recovery gives it back (or fails it, or
# ends it when a cancel was asked), and the job's message is sent again.
TRAINING_LEASE = LeaseTerms(
    model=TrainingJob,
    running=TrainingStatus.RUNNING,
    waiting=TrainingStatus.PENDING,
    stale_seconds=lambda: float(settings.DIALEVAL_TRAINING_STALE_SECONDS),
    max_attempts=lambda: int(settings.DIALEVAL_TRAINING_MAX_ATTEMPTS),
    takeover=False,
)


class TrainingJobError(ValueError):
    """A training job that cannot be started as asked; ``field`` names the input that is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class TrainingLost(TrainingCancelled):
    """This attempt no longer holds the job (recovery gave it to another attempt, or it was finished)."""


# --- creating, sending, cancelling -----------------------------------------------------------------------


def training_job_create(
    *,
    user: Any,
    kind: str,
    name: str,
    corpus_format: str,
    corpus_path: str = "",
    upload: UploadedFile | None = None,
    parameters: Mapping[str, Any] | None = None,
    make_default: bool = False,
    study: Study | None = None,
    enqueue: bool = True,
) -> TrainingJob:
    """Check the request (see the module docstring), commit a PENDING job and send it once committed.

    ``corpus_path`` is a file or folder on the server, inside ``DIALEVAL_CORPUS_ROOTS`` (or the upload
    folder); ``upload`` a corpus file sent with the request instead, saved under
    ``DIALEVAL_CORPUS_UPLOAD_DIR``. ``corpus_format``: "dailydialog", "generic" (``{"query", "reply"}``
    lines; for MaUde and Cross-RUBER ``{"turns": [...]}`` lines) or a loader's own name (pairs-jsonl, dialogs-jsonl).
    ``parameters``: epochs, max_pairs, cells (BERT-RUBER), variants (MaUde), threads, language."""
    if kind not in trainer_kinds():
        raise TrainingJobError(
            "kind", f"unknown model kind {kind!r}; choose one of {', '.join(trainer_kinds())}"
        )
    name = (name or "").strip()
    _check_name(name)
    checked = _checked_parameters(kind=kind, parameters=parameters or {}, study=study)
    loader_format = _loader_format(kind, corpus_format)
    if bool(corpus_path) == (upload is not None):
        raise TrainingJobError("corpus", "give either a corpus on the server or a corpus file to upload")
    saved: Path | None = None
    try:
        if upload is not None:
            saved = _save_upload(upload)
            path, description = saved, f"upload: {upload.name}"
        else:
            path = _allowed_corpus_path(corpus_path)
            description = str(path)
        try:
            corpus = training_corpus_load(
                kind=kind, path=path, corpus_format=loader_format, max_pairs=checked.get("max_pairs")
            )
        except CorpusError as error:
            raise TrainingJobError("corpus_file" if upload is not None else "corpus", str(error)) from None
        sizes = f"{len(corpus.training)} training, {len(corpus.validation)} validation"
        with transaction.atomic():
            _check_name(name)  # again, inside the transaction that inserts
            job = TrainingJob.objects.create(
                name=name,
                kind=kind,
                study=study,
                corpus=f"{description} ({sizes})"[:500],
                corpus_path=str(path),
                corpus_format=loader_format,
                parameters=checked,
                make_default=make_default,
                created_by=user if isinstance(user, get_user_model()) else None,
                progress={"note": "waiting for a worker"},
            )
            if enqueue:
                transaction.on_commit(partial(training_job_send, job_id=job.pk))
    except IntegrityError:
        _remove_upload(saved)
        raise TrainingJobError("name", f"a model named {name!r} is being trained already") from None
    except BaseException:
        _remove_upload(saved)
        raise
    return job


def training_job_queue() -> str:
    """The "gpu" queue when a live worker with CUDA consumes it, else the default ("cpu")."""
    return GPU_QUEUE if gpu_worker_available() else default_queue()


def training_job_send(*, job_id: int) -> bool:
    """Send the job's task; on a broker failure the job stays PENDING and says why (recovery sends it
    later). Returns whether the message was sent."""
    job = TrainingJob.objects.filter(pk=job_id, status=TrainingStatus.PENDING).only("progress").first()
    if job is None:
        return False
    queue = training_job_queue()
    sent = task_send(TRAIN_TASK, args=[job_id], queue=queue)
    note = f"waiting for a worker ({queue} queue)" if sent else BROKER_DOWN_NOTE
    retry = str(job.progress.get("retry") or "")  # why it is queued again, kept in front
    progress: dict[str, Any] = {"note": f"{retry}; {note}" if retry else note, "queue": queue}
    if retry:
        progress["retry"] = retry
    if sent:
        progress["sent_at"] = timezone.now().isoformat()
    TrainingJob.objects.filter(pk=job_id, status=TrainingStatus.PENDING).update(progress=progress)
    return sent


def training_job_cancel(*, job: TrainingJob, user: Any = None) -> bool:
    """Cancel a pending job at once, or ask a running one to stop (its trainer stops at its next report,
    within about a second, and removes its scratch folder). Returns False when the job had already ended."""
    who = f" by {user.get_username()}" if isinstance(user, get_user_model()) else ""
    now = timezone.now()
    with transaction.atomic():
        cancelled = TrainingJob.objects.filter(pk=job.pk, status=TrainingStatus.PENDING).update(
            status=TrainingStatus.CANCELLED,
            cancel_requested=True,
            finished_at=now,
            progress={"note": f"cancelled{who} at {now:%Y-%m-%d %H:%M:%S} UTC"},
        )
        requested = cancelled or TrainingJob.objects.filter(pk=job.pk, status=TrainingStatus.RUNNING).update(
            cancel_requested=True
        )
    job.refresh_from_db()
    if cancelled:
        waiting_runs_reconsider(job=job)
    return bool(requested)


# --- running (the Celery task's body) ---------------------------------------------------------------------


def training_job_run(*, job_id: int) -> bool:
    """Claim the job and train it (see the module docstring). False when there was nothing to do: the job
    is not pending (done, cancelled, or held by another attempt), so a duplicate message is harmless."""
    lease = lease_claim(
        TRAINING_LEASE,
        job_id,
        where=Q(cancel_requested=False),
        started_at=timezone.now(),
        progress={"stage": "reading the corpus"},
        curve=[],
        error="",
    )
    if lease is None:
        return False
    job = TrainingJob.objects.select_related("study", "created_by").get(pk=job_id)
    reporter = _JobReporter(lease=lease)
    try:
        model = _train(job, reporter)
    except TrainingLost:
        logger.warning("training job %s: attempt %s lost the job; stopped", job.pk, reporter.attempt)
        return False
    except TrainingCancelled:
        _finish(reporter, status=TrainingStatus.CANCELLED, progress={"note": "cancelled while training"})
    except Exception as error:  # the job row says why; the worker goes on with other tasks
        logger.exception("training job %s failed", job.pk)
        _finish(reporter, status=TrainingStatus.FAILED, error=_failure_text(error))
    else:
        _succeed(job, reporter, model)
    job.refresh_from_db()
    waiting_runs_reconsider(job=job)
    return True


@dataclass
class _JobReporter:
    """The trainer's ``on_progress``: writes reports on the job row, fenced by the attempt (its lease)."""

    lease: Lease
    curve: list[dict[str, Any]] = field(default_factory=list)
    last_write: float = 0.0

    def __call__(self, report: TrainingReport) -> None:
        if report.stage == EPOCH_STAGE:
            self.curve.append(
                {
                    "cell": report.cell,
                    "epoch": report.epoch,
                    "loss": report.loss,
                    "validation_accuracy": report.validation_accuracy,
                    "validation_loss": report.validation_loss,
                }
            )
        elif time.monotonic() - self.last_write < PROGRESS_WRITE_SECONDS:
            return
        self.write(progress=report.as_dict())

    def write(self, *, progress: dict[str, Any]) -> None:
        """The latest report, the curve and the heartbeat; stops the trainer when the job was cancelled or
        this attempt lost it."""
        self.last_write = time.monotonic()
        updated = (
            self.lease.held()
            .filter(cancel_requested=False)
            .update(progress=progress, curve=list(self.curve), heartbeat_at=timezone.now())
        )
        if updated:
            return
        if self.lease.held().filter(cancel_requested=True).exists():
            raise TrainingCancelled("cancel requested")
        raise TrainingLost(f"training job {self.lease.pk}: attempt {self.attempt} no longer holds it")

    @property
    def attempt(self) -> int:
        return self.lease.attempt


def _train(job: TrainingJob, reporter: _JobReporter) -> TrainedModel:
    parameters = dict(job.parameters)
    corpus = training_corpus_load(
        kind=job.kind,
        path=Path(job.corpus_path),
        corpus_format=job.corpus_format,
        max_pairs=parameters.get("max_pairs"),
    )
    reporter.write(
        progress={
            "stage": "starting",
            "pairs": corpus.example_count,
            "validation": len(corpus.validation),
        }
    )
    request = TrainingRequest(
        kind=job.kind,
        name=job.name,
        corpus_description=f"{job.corpus}; {corpus.description}",
        epochs=parameters.get("epochs"),
        language=str(parameters.get("language") or "en"),
        cells=tuple(parameters.get("cells") or ()),
        variants=tuple(parameters.get("variants") or ()),
        threads=parameters.get("threads") or _worker_threads(),
    )
    return trained_model_train(
        request=request,
        pairs=corpus.training,
        validation_pairs=corpus.validation,
        make_default=job.make_default,
        user=job.created_by,
        progress=False,
        on_progress=reporter,
        training_job_id=job.pk,
    )


def _worker_threads() -> int:
    """torch's threads in this worker process: the setting, else its share of the cores among the pool's
    processes (as ``scoring.torch_threads`` gives every pool process)."""
    try:
        processes = max(1, int(os.environ.get(POOL_PROCESSES_ENV, "1")))
    except ValueError:
        processes = 1
    return torch_threads_default(processes=processes)


def _succeed(job: TrainingJob, reporter: _JobReporter, model: TrainedModel) -> None:
    note = ""
    if job.study is not None:
        try:
            study_model_choose(study=job.study, trained_model=model, kind=job.kind)
            note = f"the {job.kind} model of study {job.study.name!r} now"
        except TrainedModelError as error:
            note = f"not made the study's model: {error}"
    last = reporter.curve[-1] if reporter.curve else {}
    progress = {"stage": "done", "epoch": last.get("epoch"), "note": note}
    if not _finish(reporter, status=TrainingStatus.SUCCEEDED, progress=progress, trained_model=model):
        # recovery gave the job to another attempt meanwhile: this model is not the job's; remove it
        logger.warning("training job %s: attempt %s finished after losing the job", job.pk, reporter.attempt)
        path = Path(model.path)
        model.delete()
        shutil.rmtree(path, ignore_errors=True)


def _finish(
    reporter: _JobReporter,
    *,
    status: str,
    progress: dict[str, Any] | None = None,
    error: str = "",
    trained_model: TrainedModel | None = None,
) -> bool:
    """End this attempt's job: status, the curve, the last words; False when the attempt had lost it."""
    now = timezone.now()
    fields: dict[str, Any] = {
        "curve": list(reporter.curve),
        "finished_at": now,
        "heartbeat_at": now,
        "error": error,
        "trained_model": trained_model,
    }
    if progress is not None:
        fields["progress"] = progress
    return reporter.lease.finish(status, **fields)


def _failure_text(error: BaseException) -> str:
    """A bad corpus or model request says only what is wrong (file, line); anything else adds where it
    happened and the end of the traceback."""
    if isinstance(error, CorpusError | TrainedModelError):
        return str(error)
    return error_text(error, where="training")


# --- recovery ----------------------------------------------------------------------------------------------


def training_jobs_recover(*, pending_grace_seconds: float = 5.0) -> RecoveryReport:
    """Jobs whose worker stopped, and jobs whose message is missing (see the module docstring); jobs whose
    cancel request was carried out for a dead worker are ``finished``."""
    report = RecoveryReport("training")
    now = timezone.now()
    stale_seconds = settings.DIALEVAL_TRAINING_STALE_SECONDS
    for job in TRAINING_LEASE.stale():
        lease = Lease.of(TRAINING_LEASE, job)  # acting for the silent holder, only while it stays silent
        since = f"no heartbeat since {job.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC" if job.heartbeat_at else ""
        if job.cancel_requested:
            if lease.finish(
                TrainingStatus.CANCELLED, only_if_silent=True, finished_at=now, progress={"note": "cancelled"}
            ):
                report.finished.append(job.pk)
        elif TRAINING_LEASE.exhausted(job.attempts):
            error = (
                f"the worker training it stopped {job.attempts} time(s) ({since}): killed, out of memory, "
                f"or restarted; try fewer pairs (max_pairs) or a machine with more memory"
            )
            if lease.finish(TrainingStatus.FAILED, only_if_silent=True, finished_at=now, error=error):
                report.failed.append(job.pk)
        elif lease.release(
            only_if_silent=True,
            heartbeat_at=job.heartbeat_at,
            progress={"retry": f"queued again: the worker training it stopped ({since})"},
        ):
            report.requeued.append(job.pk)
            training_job_send(job_id=job.pk)
        job.refresh_from_db()
        if job.is_finished:
            waiting_runs_reconsider(job=job)
    unsent_pending_resend(
        report,
        TrainingJob.objects.filter(status=TrainingStatus.PENDING),
        now=now,
        stale_seconds=stale_seconds,
        pending_grace_seconds=pending_grace_seconds,
        send=lambda pk: training_job_send(job_id=pk),
    )
    return report


# --- checks ------------------------------------------------------------------------------------------------


def _check_name(name: str) -> None:
    if not NAME_PATTERN.match(name):
        raise TrainingJobError(
            "name", f"{name!r}: use 1 to 80 letters, digits, '-' and '_' (it names the model's folder)"
        )
    if TrainedModel.objects.filter(name=name).exists():
        raise TrainingJobError("name", f"a trained model named {name!r} exists already; choose another name")
    active = TrainingJob.objects.filter(name=name, status__in=ACTIVE_TRAINING_STATUSES).first()
    if active is not None:
        raise TrainingJobError(
            "name", f"training job {active.pk} is training a model named {name!r}; choose another name"
        )


def _loader_format(kind: str, corpus_format: str) -> str:
    if corpus_format == GENERIC_FORMAT:
        return DIALOGS_JSONL if kind in dialog_kinds() else PAIRS_JSONL
    if corpus_format not in training_corpus_formats(kind):
        known = ", ".join([DAILYDIALOG, GENERIC_FORMAT, *training_corpus_formats(kind)[1:]])
        raise TrainingJobError(
            "corpus_format", f"unknown format {corpus_format!r} for {kind}; choose {known}"
        )
    return corpus_format


def corpus_roots() -> list[Path]:
    """The folders a corpus on the server may be read from: ``DIALEVAL_CORPUS_ROOTS`` and the upload folder."""
    roots = [Path(root) for root in settings.DIALEVAL_CORPUS_ROOTS]
    return [root.resolve() for root in [*roots, Path(settings.DIALEVAL_CORPUS_UPLOAD_DIR)]]


def _allowed_corpus_path(corpus_path: str) -> Path:
    path = Path(corpus_path).expanduser()
    resolved = path.resolve()
    roots = corpus_roots()
    if not any(resolved == root or resolved.is_relative_to(root) for root in roots):
        raise TrainingJobError(
            "corpus",
            f"{corpus_path}: corpora are read from {', '.join(str(root) for root in roots)} only "
            "(DIALEVAL_CORPUS_ROOTS); upload the file instead",
        )
    if not resolved.exists():
        raise TrainingJobError("corpus", f"{corpus_path}: no such file or folder on the server")
    return resolved


def _save_upload(upload: UploadedFile) -> Path:
    limit = settings.DIALEVAL_MAX_UPLOAD_BYTES
    if upload.size is not None and upload.size > limit:
        raise TrainingJobError(
            "corpus_file", f"{upload.name}: {upload.size:,} bytes, over the upload limit of {limit:,} bytes"
        )
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(upload.name or "corpus").name)[:100] or "corpus"
    folder = Path(settings.DIALEVAL_CORPUS_UPLOAD_DIR) / uuid.uuid4().hex
    folder.mkdir(parents=True)
    target = folder / safe
    with target.open("wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    return target.resolve()


def _remove_upload(saved: Path | None) -> None:
    if saved is not None:
        shutil.rmtree(saved.parent, ignore_errors=True)


def _checked_parameters(*, kind: str, parameters: Mapping[str, Any], study: Study | None) -> dict[str, Any]:
    known = training_parameters()
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        raise TrainingJobError(unknown[0], f"unknown parameter; known: {', '.join(known)}")
    checked: dict[str, Any] = {}
    for key, low, high in (("epochs", 1, MAX_EPOCHS), ("max_pairs", 2, None), ("threads", 1, 256)):
        value = parameters.get(key)
        if value is None or value == "":
            continue
        if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip().isdigit():
            raise TrainingJobError(key, f"{value!r} is not a whole number")
        number = int(value)
        if number < low or (high is not None and number > high):
            bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise TrainingJobError(key, f"{number} is out of range: give a number {bounds}")
        checked[key] = number
    language = str(parameters.get("language") or (study.language if study is not None else "en"))
    if language not in ("en", "zh"):
        raise TrainingJobError("language", f"unknown language {language!r}; choose en or zh")
    checked["language"] = language
    checked.update(_checked_name_lists(kind, parameters, language))
    check_language = kind_trainer(kind).check_language
    if check_language is not None:
        try:
            check_language(language)
        except ValueError as error:
            raise TrainingJobError("language", str(error)) from None
    return checked


def training_parameters() -> tuple[str, ...]:
    """The parameters a training job takes: epochs, max_pairs, every kind's name lists (cells, variants:
    :mod:`scoring.trainers`), threads and language."""
    return (*_COMMON_PARAMETERS, *name_list_keys(), *_RUN_PARAMETERS)


def _checked_name_lists(kind: str, parameters: Mapping[str, Any], language: str) -> dict[str, list[str]]:
    """The name lists of ``kind``'s training, checked by its trainer; a list of another kind is refused."""
    own = {names.key: names for names in kind_trainer(kind).name_lists}
    checked: dict[str, list[str]] = {}
    for trainer in kind_trainers():
        for names in trainer.name_lists:
            given = _names(parameters.get(names.key), names.key)
            if names.key in own:
                try:
                    checked[names.key] = own[names.key].checked(given, language)
                except ValueError as error:
                    raise TrainingJobError(names.key, str(error)) from None
            elif given:
                raise TrainingJobError(names.key, f"{names.key} are {names.owner}; a {kind} model has none")
    return checked


def _names(value: Any, key: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        raise TrainingJobError(key, "expected a list of names (or one comma-separated string)")
    return [item.strip() for item in value if item.strip()]


@dataclass(frozen=True)
class KnownCorpus:
    path: str
    label: str
    corpus_format: str


def corpora_known() -> list[KnownCorpus]:
    """The corpora on the server the training form offers: DailyDialog-layout folders (``dialogues_*.txt``
    in the folder or in its ``train/``) and JSON Lines files directly inside ``DIALEVAL_CORPUS_ROOTS``."""
    found: list[KnownCorpus] = []
    for root in (Path(root) for root in settings.DIALEVAL_CORPUS_ROOTS):
        if not root.is_dir():
            continue
        for item in sorted(root.iterdir()):
            if item.is_dir() and (
                any(item.glob("dialogues_*.txt")) or any(item.glob("train/dialogues_*.txt"))
            ):
                split = " (train/, early stopping on validation/)" if (item / "train").is_dir() else ""
                found.append(KnownCorpus(str(item), f"{item.name}: DailyDialog{split}", DAILYDIALOG))
            elif item.is_file() and item.suffix == ".jsonl":
                found.append(KnownCorpus(str(item), f"{item.name}: JSON Lines", GENERIC_FORMAT))
    return found

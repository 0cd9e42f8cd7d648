"""Scoring runs: create one (the web process only enqueues), and execute one (in a Celery worker).

Execution follows the healthchecks pattern: a run is claimed with a conditional UPDATE, so a task
delivered twice does the work once, and a run whose worker died (no heartbeat for
``settings.DIALEVAL_RUN_STALE_SECONDS``) can be taken over by a redelivered task. ``attempts`` doubles as a
fencing token: every later write of an attempt is conditional on it, so a worker that lost its claim stops
instead of overwriting the new owner's progress.

References (seed 003, sections 3.1-3.2): "single" scores against one reference per context, the corpus's
original reply (origin "original"; the first reference when a context has no original one); "multi" against
every reference of the context. Reference-based metrics skip responses whose context has no reference at
all; a succeeded run then says how many in its ``notes``.

Progress counts responses: ``progress_total`` is the number of responses in the study, and a response is
done once every requested metric has been computed (or skipped) for it. ``timings`` holds compute seconds
per metric; metrics computed together as a family share their time evenly.
"""

from __future__ import annotations

import logging
import math
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from annotation.models import Response, Study
from scoring.metrics.registry import (
    UnknownMetricError,
    available_metric_names,
    compute_metrics,
    metric_specs,
    signature_parameters,
)
from scoring.metrics.signature import metric_signature
from scoring.metrics.spec import MetricSpec
from scoring.models import MetricScore, MetricSignature, ReferencesMode, RunStatus, ScoringRun
from scoring.selectors import scoring_responses_for_study, study_response_count

logger = logging.getLogger(__name__)

ALL_METRICS = "all"
GPU_QUEUE = "gpu"
DEFAULT_BATCH_SIZE = 256
_TRACEBACK_TAIL_CHARS = 3000

ProgressCallback = Callable[[int, int], None]  # (responses done, responses in total)


class ScoringRequestError(ValueError):
    """A scoring run that cannot be created as asked (unknown metric, no metric, bad references mode)."""


class _RunLostError(Exception):
    """This attempt no longer owns the run (another worker took it over); stop without writing."""


@transaction.atomic
def scoring_run_create(
    *,
    study: Study,
    metrics: Sequence[str],
    references: str = ReferencesMode.MULTI,
    user: AbstractBaseUser | AnonymousUser | None = None,
    enqueue: bool = True,
) -> ScoringRun:
    """Create a pending run and, once the transaction commits, queue it for a worker.

    ``metrics`` are registry names (``["all"]`` means every registered metric); duplicates are dropped.
    With ``enqueue=False`` nothing is queued (``manage.py score_study --sync`` executes it in-process).
    """
    names = _validated_metric_names(metrics)
    if references not in ReferencesMode.values:
        raise ScoringRequestError(
            f"unknown references mode {references!r}; choose one of {', '.join(ReferencesMode.values)}"
        )
    run = ScoringRun.objects.create(
        study=study,
        metrics=names,
        references=references,
        created_by=user if isinstance(user, get_user_model()) else None,
        progress_total=study_response_count(study=study),
    )
    if enqueue:
        transaction.on_commit(partial(scoring_run_enqueue, run=run))
    return run


def scoring_run_queue(*, metrics: Sequence[str]) -> str:
    """The Celery queue for a run of ``metrics``: "gpu" when one of them needs a GPU, else the default."""
    if any(spec.needs_gpu for spec in metric_specs(metrics)):
        return GPU_QUEUE
    return str(settings.CELERY_TASK_DEFAULT_QUEUE)


def scoring_run_enqueue(*, run: ScoringRun) -> None:
    """Send the run to a worker; if the broker is unreachable the run fails, saying so, not stuck pending."""
    from scoring.tasks import scoring_run_execute_task  # the tasks module imports this one

    try:
        scoring_run_execute_task.apply_async(args=[run.pk], queue=scoring_run_queue(metrics=run.metrics))
    except BrokerError as error:
        logger.error("could not queue scoring run %s: %s", run.pk, error)
        ScoringRun.objects.filter(pk=run.pk, status=RunStatus.PENDING).update(
            status=RunStatus.FAILED,
            finished_at=timezone.now(),
            error=f"could not queue the run: the task broker is unreachable ({error}); is Redis running?",
        )


def scoring_run_execute(
    *, run_id: int, progress: ProgressCallback | None = None, batch_size: int = DEFAULT_BATCH_SIZE
) -> ScoringRun:
    """Claim run ``run_id`` and compute its scores; return the run as it stands afterwards.

    If the run cannot be claimed (finished, or running under a live worker) nothing is done and the run is
    returned unchanged. Errors never propagate: the run ends FAILED with a one-line summary and the
    traceback's tail in ``error`` (and the error is logged).
    """
    attempt = _scoring_run_claim(run_id=run_id)
    if attempt is None:
        logger.info("scoring run %s is not claimable (finished, or held by a live worker)", run_id)
        return ScoringRun.objects.get(pk=run_id)
    try:
        _scoring_run_compute(run_id=run_id, attempt=attempt, progress=progress, batch_size=batch_size)
    except _RunLostError:
        logger.warning("scoring run %s attempt %s was taken over by another worker", run_id, attempt)
    except Exception as error:
        logger.exception("scoring run %s attempt %s failed", run_id, attempt)
        _scoring_run_finish(run_id=run_id, attempt=attempt, status=RunStatus.FAILED, error=_error_text(error))
    return ScoringRun.objects.get(pk=run_id)


def scoring_runs_recover(*, pending_grace_seconds: float = 60.0) -> list[int]:
    """Queue again the runs whose task message may have been lost; return their ids.

    A message can be lost when the broker restarts without persistence, or when the web process dies between
    its commit and the enqueue. Runs PENDING for longer than ``pending_grace_seconds`` and RUNNING runs
    whose heartbeat is stale are queued again. Safe when the old message still exists: the conditional
    claim lets exactly one delivery do the work, and the other finds nothing to do. Workers call this when
    they start (scoring.tasks); ``manage.py recover_scoring_runs`` does it by hand or from cron.
    """
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.DIALEVAL_RUN_STALE_SECONDS)
    orphaned = ScoringRun.objects.filter(
        Q(status=RunStatus.PENDING, created_at__lt=now - timedelta(seconds=pending_grace_seconds))
        | Q(status=RunStatus.RUNNING) & (Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True))
    ).order_by("created_at")
    recovered = []
    for run in orphaned:
        scoring_run_enqueue(run=run)
        recovered.append(run.pk)
    if recovered:
        logger.warning(
            "queued again %d scoring run(s) that may have lost their task: %s", len(recovered), recovered
        )
    return recovered


def scoring_run_takeover_delay(*, run: ScoringRun) -> float:
    """Seconds until ``run`` (running elsewhere) would count as stale and could be taken over."""
    if run.heartbeat_at is None:
        return 0.0
    stale_at = run.heartbeat_at + timedelta(seconds=settings.DIALEVAL_RUN_STALE_SECONDS)
    return max(0.0, (stale_at - timezone.now()).total_seconds())


def _validated_metric_names(metrics: Sequence[str]) -> list[str]:
    if isinstance(metrics, str):
        raise ScoringRequestError("metrics must be a list of metric names, not one string")
    names = list(dict.fromkeys(name.strip() for name in metrics if name.strip()))
    if not names:
        known = ", ".join(available_metric_names())
        raise ScoringRequestError(f"choose at least one metric; known metrics: {known}")
    if ALL_METRICS in names:
        return available_metric_names()
    try:
        metric_specs(names)
    except UnknownMetricError as error:
        raise ScoringRequestError(str(error)) from None
    return names


def _scoring_run_claim(*, run_id: int) -> int | None:
    """Mark the run RUNNING if it is pending or stale; return this attempt's number, or None if not ours."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.DIALEVAL_RUN_STALE_SECONDS)
    claimable = Q(status=RunStatus.PENDING) | Q(status=RunStatus.RUNNING) & (
        Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True)
    )
    claimed = ScoringRun.objects.filter(claimable, pk=run_id).update(
        status=RunStatus.RUNNING,
        attempts=F("attempts") + 1,
        started_at=now,
        heartbeat_at=now,
        finished_at=None,
        progress_done=0,
        error="",
        notes="",
    )
    if not claimed:
        return None
    return int(ScoringRun.objects.values_list("attempts", flat=True).get(pk=run_id))


def _scoring_run_compute(
    *, run_id: int, attempt: int, progress: ProgressCallback | None, batch_size: int
) -> None:
    run = ScoringRun.objects.select_related("study").get(pk=run_id)
    specs = metric_specs(run.metrics)
    language = run.study.language
    signatures = {
        spec.name: _metric_signature_get_or_create(spec=spec, language=language, run=run) for spec in specs
    }
    groups = _metric_groups(specs)
    total = study_response_count(study=run.study)
    _scoring_run_update(run_id=run_id, attempt=attempt, progress_total=total)
    timings = dict.fromkeys(run.metrics, 0.0)
    any_needs_references = any(spec.needs_references for spec in specs)
    done = skipped = 0
    responses = scoring_responses_for_study(study=run.study).iterator(chunk_size=batch_size)
    for batch in _batches(responses, batch_size):
        references = {response.pk: _references(response, run.references) for response in batch}
        with_references = [response for response in batch if references[response.pk]]
        if any_needs_references:
            skipped += len(batch) - len(with_references)
        rows: list[MetricScore] = []
        for group in groups:
            items = with_references if any(spec.needs_references for spec in group) else batch
            if not items:
                continue
            names = [spec.name for spec in group]
            started = time.perf_counter()
            scores = compute_metrics(
                names,
                [response.text for response in items],
                [references[response.pk] for response in items],
                [response.context.query for response in items],
                language,
            )
            seconds = time.perf_counter() - started
            for name in names:
                timings[name] += seconds / len(names)
                rows.extend(_score_rows(signature=signatures[name], items=items, values=scores[name]))
        done += len(batch)
        with transaction.atomic():
            MetricScore.objects.bulk_create(
                rows,
                update_conflicts=True,
                unique_fields=["response", "signature"],
                update_fields=["value", "computed_at"],
            )
            _scoring_run_update(run_id=run_id, attempt=attempt, progress_done=done, timings=timings)
        if progress is not None:
            progress(done, total)
    _scoring_run_finish(
        run_id=run_id,
        attempt=attempt,
        status=RunStatus.SUCCEEDED,
        error="",
        notes=_skipped_warning(skipped=skipped, specs=specs),
        progress_done=done,
        progress_total=done,
        timings=timings,
    )


def _metric_signature_get_or_create(*, spec: MetricSpec, language: str, run: ScoringRun) -> MetricSignature:
    parameters = signature_parameters(spec.name, language=language, references=run.references)
    signature, _ = MetricSignature.objects.get_or_create(
        text=metric_signature(spec.name, parameters),
        defaults={
            "name": spec.name,
            "parameters": parameters,
            "artifact_hash": spec.artifact_hash,
            "version": spec.version,
        },
    )
    return signature


def _metric_groups(specs: Sequence[MetricSpec]) -> list[list[MetricSpec]]:
    """Specs grouped by family (a metric without one is its own group), in first-seen order."""
    groups: dict[str, list[MetricSpec]] = {}
    for spec in specs:
        groups.setdefault(spec.family or f"metric:{spec.name}", []).append(spec)
    return list(groups.values())


def _references(response: Response, mode: str) -> list[str]:
    """The reference texts ``response`` is scored against (prefetched by the selector, ordered by id)."""
    references = list(response.context.references.all())
    if mode == ReferencesMode.MULTI:
        return [reference.text for reference in references]
    originals = [reference.text for reference in references if reference.origin == "original"]
    if originals:
        return originals[:1]
    return [references[0].text] if references else []


def _score_rows(
    *, signature: MetricSignature, items: Sequence[Response], values: Sequence[float]
) -> Iterator[MetricScore]:
    for response, value in zip(items, values, strict=True):
        if not math.isfinite(value):  # SQLite would store NaN as NULL and fail; say which score instead
            raise ValueError(f"{signature.name} gave the value {value!r} for response {response.pk}")
        yield MetricScore(response=response, signature=signature, value=float(value))


def _skipped_warning(*, skipped: int, specs: Sequence[MetricSpec]) -> str:
    if not skipped:
        return ""
    names = ", ".join(spec.name for spec in specs if spec.needs_references)
    return f"{skipped} response(s) have no reference, so {names} were not computed for them"


def _scoring_run_update(*, run_id: int, attempt: int, **fields: object) -> None:
    """Write ``fields`` and a heartbeat if this attempt still owns the run; otherwise stop the attempt."""
    updated = ScoringRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, attempts=attempt).update(
        heartbeat_at=timezone.now(), **fields
    )
    if not updated:
        raise _RunLostError


def _scoring_run_finish(*, run_id: int, attempt: int, status: str, error: str, **fields: object) -> None:
    now = timezone.now()
    ScoringRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, attempts=attempt).update(
        status=status, error=error, heartbeat_at=now, finished_at=now, **fields
    )


def _error_text(error: BaseException) -> str:
    """One readable line first (what the web page shows), then the end of the traceback."""
    summary = f"{type(error).__name__}: {error}".splitlines()[0] if str(error) else type(error).__name__
    tail = "".join(traceback.format_exception(error))[-_TRACEBACK_TAIL_CHARS:]
    return f"{summary}\n\n{tail}"


def _batches(items: Iterable[Response], size: int) -> Iterator[list[Response]]:
    batch: list[Response] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch

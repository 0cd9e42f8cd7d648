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
per metric; metrics computed together as a family share their time evenly. Whole-set metrics (RUBER's
blends normalise over the scored set, seed 000 eq. 4) are computed after the others, in one call over
every response; a run with both counts every response twice.

Tokenizer: a run records how its metrics split text (``tokenizer``: "default", the study language's
tokenizer, or "none", whitespace split for text that is already tokenized) and uses it for every metric that
tokenizes, per response and per system; the choice is in each score's signature (``tok:none``). Learned
metrics keep the tokenizer their model was trained with.

Learned metrics use trained models resolved when the run is created (named ones, else the study's choice,
else the default; see :mod:`scoring.trained_model_services`) and recorded on the run; their scores'
signatures carry the model's content hash. A metric that has no value for a response (``None``: RUBER's
s_R of a reply without a known word) stores nothing for it, and the run's notes count them.
"""

from __future__ import annotations

import logging
import math
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from annotation.models import Response, Study, System
from annotation.services.data_version import study_data_changed
from scoring.metrics.registry import (
    UnknownMetricError,
    available_metric_names,
    available_system_metric_names,
    compute_metrics,
    compute_system_metric,
    is_system_metric,
    metric_specs,
    signature_parameters,
    split_metric_names,
    system_metric_spec,
)
from scoring.metrics.signature import metric_signature
from scoring.metrics.spec import MetricSpec
from scoring.metrics.system_specs import ContextOutputs
from scoring.models import (
    MetricScore,
    MetricSignature,
    ReferencesMode,
    RunStatus,
    ScoringRun,
    SystemMetricScore,
    TokenizerChoice,
)
from scoring.selectors import metrics_available_for_study, scoring_responses_for_study, study_response_count
from scoring.trained_model_services import (
    TrainedModelError,
    run_model_paths,
    run_model_record,
    scoring_models_resolve,
    trained_cells_check,
)

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
    models: Sequence[str] = (),
    tokenizer: str = TokenizerChoice.DEFAULT,
) -> ScoringRun:
    """Create a pending run and, once the transaction commits, queue it for a worker.

    ``metrics`` are registry names; duplicates are dropped, and the raw components a blend needs are added.
    ``["all"]`` means every registered metric that is not a variant, learned metrics only where a trained
    model is available for the study. ``models`` names trained models to use instead of the study's
    choice or the default. ``tokenizer`` ("default" or "none") is used by every metric that tokenizes.
    With ``enqueue=False`` nothing is queued (``manage.py score_study --sync`` executes it in-process).
    """
    names = _validated_metric_names(metrics, study=study)
    if references not in ReferencesMode.values:
        raise ScoringRequestError(
            f"unknown references mode {references!r}; choose one of {', '.join(ReferencesMode.values)}"
        )
    if tokenizer not in TokenizerChoice.values:
        raise ScoringRequestError(
            f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TokenizerChoice.values)}"
        )
    kinds = [spec.model_kind for spec in metric_specs(split_metric_names(names)[0]) if spec.model_kind]
    try:
        trained = scoring_models_resolve(study=study, kinds=kinds, names=models)
        trained_cells_check(metrics=names, trained=trained)
    except TrainedModelError as error:
        raise ScoringRequestError(str(error)) from None
    run = ScoringRun.objects.create(
        study=study,
        metrics=names,
        references=references,
        tokenizer=tokenizer,
        trained_models={kind: run_model_record(model) for kind, model in trained.items()},
        created_by=user if isinstance(user, get_user_model()) else None,
        progress_total=study_response_count(study=study),
    )
    if enqueue:
        transaction.on_commit(partial(scoring_run_enqueue, run=run))
    return run


def scoring_run_queue(*, metrics: Sequence[str]) -> str:
    """The Celery queue for a run of ``metrics``: "gpu" when one of them needs a GPU, else the default."""
    if any(spec.needs_gpu for spec in metric_specs(split_metric_names(metrics)[0])):
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


def _validated_metric_names(metrics: Sequence[str], *, study: Study) -> list[str]:
    if isinstance(metrics, str):
        raise ScoringRequestError("metrics must be a list of metric names, not one string")
    names = list(dict.fromkeys(name.strip() for name in metrics if name.strip()))
    if not names:
        known = ", ".join(available_metric_names())
        raise ScoringRequestError(f"choose at least one metric; known metrics: {known}")
    if ALL_METRICS in names:
        names = [*metrics_available_for_study(study=study), *available_system_metric_names()]
    try:
        response_names, _ = split_metric_names(names)
    except UnknownMetricError as error:
        raise ScoringRequestError(str(error)) from None
    required = [name for spec in metric_specs(response_names) for name in spec.requires]
    return list(dict.fromkeys([*required, *names]))


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
    response_names, system_names = split_metric_names(run.metrics)
    specs = metric_specs(response_names)
    models = run_model_paths(run.trained_models)
    signatures = {spec.name: _metric_signature_get_or_create(spec=spec, run=run) for spec in specs}
    groups = _metric_groups(specs)
    batched = [group for group in groups if not any(spec.whole_set for spec in group)]
    whole_set = [group for group in groups if any(spec.whole_set for spec in group)]
    responses_total = study_response_count(study=run.study)
    total = responses_total * (bool(batched) + bool(whole_set) + bool(system_names))
    _scoring_run_update(run_id=run_id, attempt=attempt, progress_total=total)
    tally = _RunTally(timings=dict.fromkeys(run.metrics, 0.0))
    context = _ComputeContext(
        language=run.study.language,
        references_mode=run.references,
        tokenizer=run.tokenizer,
        models=models,
        signatures=signatures,
    )
    done = 0

    def step(rows: list[MetricScore], count: int) -> None:
        nonlocal done
        done += count
        with transaction.atomic():
            MetricScore.objects.bulk_create(
                rows,
                batch_size=2000,
                update_conflicts=True,
                unique_fields=["response", "signature"],
                update_fields=["value", "computed_at"],
            )
            if rows:  # once per committed batch, so a report read mid-run is not served after the next one
                study_data_changed(study_id=run.study_id)
            _scoring_run_update(run_id=run_id, attempt=attempt, progress_done=done, timings=tally.timings)
        if progress is not None:
            progress(done, total)

    responses = scoring_responses_for_study(study=run.study)
    if batched:
        for batch in _batches(responses.iterator(chunk_size=batch_size), batch_size):
            step(_compute_groups(batched, batch, context, tally), len(batch))
    if whole_set:
        everything = list(responses)
        step(_compute_groups(whole_set, everything, context, tally), len(everything))
    if system_names:
        _compute_system_metrics(system_names, run, tally)
        step([], responses_total)
    _scoring_run_finish(
        run_id=run_id,
        attempt=attempt,
        status=RunStatus.SUCCEEDED,
        error="",
        notes=tally.notes(specs=specs),
        progress_done=done,
        progress_total=done,
        timings=tally.timings,
    )


@dataclass(frozen=True)
class _ComputeContext:
    language: str
    references_mode: str
    tokenizer: str
    models: dict[str, str]
    signatures: dict[str, MetricSignature]


@dataclass
class _RunTally:
    timings: dict[str, float]
    skipped: int = 0  # responses without a reference (reference-based metrics skip them)
    undefined: dict[str, int] = field(default_factory=dict)  # metric -> responses with no value

    def notes(self, *, specs: Sequence[MetricSpec]) -> str:
        lines = []
        if self.skipped:
            names = ", ".join(spec.name for spec in specs if spec.needs_references)
            lines.append(
                f"{self.skipped} response(s) have no reference, so {names} were not computed for them"
            )
        for name, count in self.undefined.items():
            if count:
                what = "system(s)" if is_system_metric(name) else "response(s)"
                lines.append(
                    f"{name} has no value for {count} {what} (e.g. no word with a vector, one output)"
                )
        return "\n".join(lines)


def _compute_system_metrics(names: Sequence[str], run: ScoringRun, tally: _RunTally) -> None:
    """One value per system and metric, from the system's outputs grouped by context (several samples of a
    context together), stored as :class:`SystemMetricScore`."""
    per_system: dict[int, dict[int, list[str]]] = {}
    references: dict[int, list[str]] = {}
    systems: dict[int, System] = {}
    for response in scoring_responses_for_study(study=run.study).select_related("system"):
        systems[response.system_id] = response.system
        per_system.setdefault(response.system_id, {}).setdefault(response.context_id, []).append(
            response.text
        )
        if response.context_id not in references:
            references[response.context_id] = _references(response, run.references)
    language = run.study.language
    for name in names:
        spec = system_metric_spec(name)
        parameters = spec.signature_parameters(
            language=language, references=run.references, tokenizer=run.tokenizer
        )
        signature, _ = MetricSignature.objects.get_or_create(
            text=metric_signature(name, parameters),
            defaults={"name": name, "parameters": parameters, "version": spec.version},
        )
        started = time.perf_counter()
        rows = []
        for system_id, contexts in per_system.items():
            score = compute_system_metric(
                name,
                [ContextOutputs(outputs, references[context_id]) for context_id, outputs in contexts.items()],
                language,
                tokenizer=run.tokenizer,
            )
            if score.value is None:
                tally.undefined[name] = tally.undefined.get(name, 0) + 1
                continue
            rows.append(
                SystemMetricScore(
                    system=systems[system_id], signature=signature, value=score.value, items=score.items
                )
            )
        tally.timings[name] += time.perf_counter() - started
        SystemMetricScore.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["system", "signature"],
            update_fields=["value", "items", "computed_at"],
        )
        if rows:  # the report page shows the system-level table
            study_data_changed(study_id=run.study_id)


def _compute_groups(
    groups: Sequence[Sequence[MetricSpec]],
    batch: Sequence[Response],
    context: _ComputeContext,
    tally: _RunTally,
) -> list[MetricScore]:
    """Compute ``groups`` (each family once) for ``batch``; the score rows to store."""
    references = {response.pk: _references(response, context.references_mode) for response in batch}
    with_references = [response for response in batch if references[response.pk]]
    if any(spec.needs_references for group in groups for spec in group):
        tally.skipped += len(batch) - len(with_references)
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
            context.language,
            models=context.models,
            tokenizer=context.tokenizer,
        )
        seconds = time.perf_counter() - started
        for name in names:
            tally.timings[name] += seconds / len(names)
            values = scores[name]
            missing = sum(value is None for value in values)
            if missing:
                tally.undefined[name] = tally.undefined.get(name, 0) + missing
            rows.extend(_score_rows(signature=context.signatures[name], items=items, values=values))
    return rows


def _metric_signature_get_or_create(*, spec: MetricSpec, run: ScoringRun) -> MetricSignature:
    model_hash = str(run.trained_models[spec.model_kind]["hash"]) if spec.model_kind else ""
    parameters = signature_parameters(
        spec.name,
        language=run.study.language,
        references=run.references,
        model_hash=model_hash,
        tokenizer=run.tokenizer,
    )
    signature, _ = MetricSignature.objects.get_or_create(
        text=metric_signature(spec.name, parameters),
        defaults={
            "name": spec.name,
            "parameters": parameters,
            "artifact_hash": model_hash or spec.artifact_hash,
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
    *, signature: MetricSignature, items: Sequence[Response], values: Sequence[float | None]
) -> Iterator[MetricScore]:
    for response, value in zip(items, values, strict=True):
        if value is None:  # no value for this item: nothing stored, counted in the run's notes
            continue
        if not math.isfinite(value):  # SQLite would store NaN as NULL and fail; say which score instead
            raise ValueError(f"{signature.name} gave the value {value!r} for response {response.pk}")
        yield MetricScore(response=response, signature=signature, value=float(value))


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

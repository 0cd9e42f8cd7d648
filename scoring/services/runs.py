"""Scoring runs as a researcher asks for them: create one (at most one active per request), cancel one.

A run is a request; its work is planned into chunks by a worker (:mod:`scoring.services.planning`) and
computed chunk by chunk (:mod:`scoring.services.chunks`). The run row is the source of truth: creating one
only commits it and tries to send a task message; when the broker is unreachable the run stays PENDING,
says so, and the periodic recovery (:mod:`scoring.services.recovery`) sends it once the broker is back.

One run per request: ``request_key`` hashes the study, the metrics, the references mode, the tokenizer, the
implementations and their options, the word vectors and the content hashes of the trained models; a partial unique constraint allows one PENDING or RUNNING run
per key, so two identical starts at once (double click, two tabs, two CLI calls) are one run, on SQLite
and PostgreSQL alike: the second insert fails on the constraint and the existing run is returned.

A run whose learned metric needs a model that a training job is still making waits for it: it is
created PENDING with ``waiting_for`` set and a placeholder record ``{"name", "training_job"}`` for that
kind (its key names the job instead of a hash), and it is not sent; the job's end sends it or fails it
(:mod:`scoring.services.waiting_runs`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from functools import partial

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Study
from scoring.judges.definitions import JudgeRequest, JudgeRequestError, judge_metric_names
from scoring.judges.pairwise_judges import pairwise_judges_check
from scoring.metrics.implementation_choice import ImplementationChoice, ImplementationChoiceError
from scoring.metrics.llm_judge.pairwise import pairwise_judge_names, without_pairwise_judges
from scoring.metrics.registry import (
    UnknownMetricError,
    available_metric_names,
    available_system_metric_names,
    checked_run_options,
    implementation_choice,
    included_by_choice,
    metric_specs,
    resolve_implementations,
    split_metric_names,
)
from scoring.models import (
    ACTIVE_RUN_STATUSES,
    ChunkStatus,
    ReferencesMode,
    RunStatus,
    ScoringChunk,
    ScoringRun,
    TokenizerChoice,
    TrainingJob,
)
from scoring.selectors import metrics_available_for_study
from scoring.services.queueing import RUN_TASK, task_send
from scoring.services.word_vectors import WordVectorsError, word_vectors_record
from scoring.trained_model_services import (
    TrainedModelError,
    run_model_record,
    scoring_models_resolve,
    scoring_models_resolve_or_wait,
    trained_cells_check,
    training_job_planned_model,
)

ALL_METRICS = "all"
BROKER_DOWN_NOTE = (
    "not queued yet: the task broker (Redis) is unreachable; the run starts once it is back (the periodic "
    "recovery sends it)"
)


class ScoringRequestError(ValueError):
    """A scoring run that cannot be created as asked (unknown metric, no metric, bad references mode)."""


class JudgeChoiceError(ScoringRequestError):
    """The judge ``index`` of a run's request cannot be asked for: ``field`` of :class:`JudgeRequest` is
    wrong (``message`` starts with it), e.g. ``judges[0].model: 'gpt' is not one of the endpoints: none``."""

    def __init__(self, *, index: int, field: str, message: str) -> None:
        super().__init__(f"judges[{index}].{message}")
        self.index = index
        self.field = field
        self.message = message

    @property
    def detail(self) -> str:
        """The message without the field it starts with (shown under that field)."""
        return self.message.split(":", 1)[1].strip() if self.field else self.message


def scoring_run_create(
    *,
    study: Study,
    metrics: Sequence[str],
    references: str = ReferencesMode.MULTI,
    user: AbstractBaseUser | AnonymousUser | None = None,
    enqueue: bool = True,
    models: Sequence[str] = (),
    tokenizer: str = TokenizerChoice.DEFAULT,
    recompute: bool = False,
    implementation: str = "",
    options: dict[str, str] | None = None,
    vectors: str = "",
    judges: Sequence[JudgeRequest] = (),
) -> ScoringRun:
    """Create a pending run and, once committed, send it to a worker; or return the identical active run.

    ``metrics`` are registry names, and pairwise judges' names (``llm-pairwise:<key>``, a stored judge with
    a pairwise template: scoring/judges/pairwise_judges.py), which the run computes over the study's pairs
    of replies; duplicates are dropped, and the raw components a blend needs are added.
    ``["all"]`` means every registered metric that is not a variant, learned metrics only where a trained
    model is available for the study. ``models`` names trained models to use instead of the study's
    choice or the default. ``tokenizer`` ("default" or "none") is used by every metric that tokenizes.
    ``recompute`` scores every reply again; by default only replies without a score of the run's
    signatures are computed (blends and system metrics are always recomputed: they depend on every reply).
    With ``enqueue=False`` nothing is sent (``manage.py score_study --sync`` executes it in-process).

    ``implementation`` chooses the tools that compute the baselines (the spelling of
    :mod:`scoring.metrics.implementation_choice`: "" for each metric's default, ``nlg-eval``, or per family
    ``bleu=sacrebleu,meteor=nlg-eval``); under it, "all" means the metrics that have the chosen
    implementation (and every metric computed one way only). ``options`` sets the chosen implementations'
    parameters (``{"tok": "intl"}``); ``vectors`` names registered word vectors for the embedding metrics
    ("" : GloVe 6B 50d).

    A learned metric whose model a training job is still making (named in ``models``, or going to be the
    study's choice or the default) makes the run wait for the job (see the module docstring), unless
    ``enqueue=False``: a run executed in-process cannot wait, and is refused saying which job to wait for.

    When a PENDING or RUNNING run with the same request exists, it is returned with ``was_existing`` set.
    ``judges`` (LLM judges) add their metrics; a :class:`JudgeChoiceError` names a wrong judge's field.
    """
    names, choice, implementations, checked = _checked_metrics(
        metrics, study=study, implementation=implementation, options=options or {}, judges=judges, user=user
    )
    vectors_record = _vectors_record(vectors, study=study)
    _check_modes(references=references, tokenizer=tokenizer)
    records, waiting_for = _run_models(study=study, names=names, models=models, enqueue=enqueue)
    key = scoring_request_key(
        study_id=study.pk,
        metrics=names,
        references=references,
        tokenizer=tokenizer,
        models=records,
        implementation=choice.text,
        options=checked,
        vectors=str(vectors_record.get("hash", "")) if vectors else "",
    )

    def create() -> ScoringRun:
        run = ScoringRun.objects.create(
            study=study,
            request_key=key,
            metrics=names,
            references=references,
            tokenizer=tokenizer,
            implementation=choice.text,
            implementations=implementations,
            options=checked,
            vectors=vectors,
            recompute=recompute,
            trained_models=records,
            waiting_for=waiting_for,
            created_by=user if isinstance(user, get_user_model()) else None,
        )
        if enqueue and waiting_for is None:
            transaction.on_commit(partial(scoring_run_send, run_id=run.pk))
        return run

    failure = ScoringRequestError(
        "could not create the run: an identical run kept starting and finishing; retry"
    )
    return scoring_run_create_once(key=key, create=create, failure=failure)


def _with_judges(
    metrics: Sequence[str],
    *,
    study: Study,
    judges: Sequence[JudgeRequest],
    user: AbstractBaseUser | AnonymousUser | None,
) -> list[str]:
    """``metrics`` and the metric names of the judges asked for (their definitions stored,
    :func:`judge_metric_names`)."""
    if isinstance(metrics, str):
        raise ScoringRequestError("metrics must be a list of metric names, not one string")
    owner = user if isinstance(user, User) else None
    names = list(metrics)
    for index, judge in enumerate(judges):
        try:
            names += judge_metric_names(study=study, requests=[judge], user=owner)
        except JudgeRequestError as error:
            raise JudgeChoiceError(index=index, field=error.field, message=str(error)) from None
    return names


def _checked_metrics(
    metrics: Sequence[str],
    *,
    study: Study,
    implementation: str,
    options: dict[str, str],
    judges: Sequence[JudgeRequest] = (),
    user: AbstractBaseUser | AnonymousUser | None = None,
) -> tuple[list[str], ImplementationChoice, dict[str, str], dict[str, str]]:
    """The run's metric names (with the components its blends need, and the judges' metrics), its
    implementation choice, the implementation of each metric, and its options checked against them."""
    asked = _with_judges(metrics, study=study, judges=judges, user=user)
    try:
        choice = implementation_choice(implementation)
    except ImplementationChoiceError as error:
        raise ScoringRequestError(str(error)) from None
    names = _validated_metric_names(asked, study=study, choice=choice)
    computed = without_pairwise_judges(names)
    try:
        implementations = resolve_implementations(computed, choice)
        checked = checked_run_options(computed, implementations, options)
    except ImplementationChoiceError as error:
        raise ScoringRequestError(str(error)) from None
    return names, choice, implementations, checked


def _check_modes(*, references: str, tokenizer: str) -> None:
    if references not in ReferencesMode.values:
        raise ScoringRequestError(
            f"unknown references mode {references!r}; choose one of {', '.join(ReferencesMode.values)}"
        )
    if tokenizer not in TokenizerChoice.values:
        raise ScoringRequestError(
            f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TokenizerChoice.values)}"
        )


def _run_models(
    *, study: Study, names: Sequence[str], models: Sequence[str], enqueue: bool
) -> tuple[dict[str, dict[str, object]], TrainingJob | None]:
    """The record of every trained model the run's learned metrics use, by kind, and the training job it
    waits for (the oldest of those still making a model it needs; None when it waits for none)."""
    computed = without_pairwise_judges(names)
    kinds = [spec.model_kind for spec in metric_specs(split_metric_names(computed)[0]) if spec.model_kind]
    try:
        if enqueue:
            resolved = scoring_models_resolve_or_wait(study=study, kinds=kinds, names=models)
            trained, training = resolved.models, resolved.training
        else:
            trained, training = scoring_models_resolve(study=study, kinds=kinds, names=models), {}
        planned = {kind: training_job_planned_model(job) for kind, job in training.items()}
        trained_cells_check(metrics=computed, trained={**trained, **planned})
    except TrainedModelError as error:
        raise ScoringRequestError(str(error)) from None
    records: dict[str, dict[str, object]] = {kind: run_model_record(model) for kind, model in trained.items()}
    records.update({kind: waiting_record(job) for kind, job in training.items()})
    waiting_for = min(training.values(), key=lambda job: (job.created_at, job.pk), default=None)
    return records, waiting_for


def scoring_run_create_once(*, key: str, create: Callable[[], ScoringRun], failure: Exception) -> ScoringRun:
    """``create()`` in a transaction, or the active run of request ``key`` (``was_existing`` set) when the
    insert hit the constraint that allows one active run per request; ``failure`` is raised when an
    identical run kept starting and finishing between a failed insert and the read of it (three tries)."""
    for _ in range(3):
        try:
            with transaction.atomic():
                return create()
        except IntegrityError:
            existing = ScoringRun.objects.filter(request_key=key, status__in=ACTIVE_RUN_STATUSES).first()
            if existing is not None:
                existing.was_existing = True
                return existing
    raise failure


def scoring_request_key(
    *,
    study_id: int,
    metrics: Sequence[str],
    references: str,
    tokenizer: str,
    models: dict[str, dict[str, object]],
    implementation: str = "",
    options: dict[str, str] | None = None,
    vectors: str = "",
) -> str:
    """What makes two run requests the same work: study, metrics, references, tokenizer, model hashes, and
    the implementations, their options and the word vectors' hash when any is chosen (a run without them
    keeps the key it always had)."""
    payload: dict[str, object] = {
        "study": study_id,
        "metrics": sorted(metrics),
        "references": references,
        "tokenizer": tokenizer,
        "models": {kind: _model_key(record) for kind, record in sorted(models.items())},
    }
    if implementation:
        payload["implementation"] = implementation
    if options:
        payload["options"] = dict(sorted(options.items()))
    if vectors:
        payload["vectors"] = vectors
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _model_key(record: dict[str, object]) -> str:
    """A model's part of the request key: its hash, or the training job a waiting run waits for."""
    if is_waiting_record(record):
        return f"training-job:{record['training_job']}"
    return str(record.get("hash", ""))


def waiting_record(job: TrainingJob) -> dict[str, object]:
    """What a waiting run stores for the kind whose model ``job`` is making (no hash, no path yet: a run
    planned with it would fail loudly rather than score with an unknown model)."""
    return {"name": job.name, "training_job": job.pk}


def is_waiting_record(record: object) -> bool:
    return isinstance(record, dict) and "training_job" in record and "hash" not in record


def scoring_run_send(*, run_id: int) -> bool:
    """Send the run's planning task; on a broker failure the run stays PENDING and says why (recovery sends
    it later). Returns whether the message was sent. A run still waiting for a model is never sent."""
    run = ScoringRun.objects.filter(pk=run_id).only("metrics", "status", "trained_models").first()
    if run is None or run.status != RunStatus.PENDING:
        return False
    if any(is_waiting_record(record) for record in run.trained_models.values()):
        return False
    if task_send(RUN_TASK, args=[run_id]):
        ScoringRun.objects.filter(pk=run_id, status=RunStatus.PENDING).update(
            enqueued_at=timezone.now(), notes=""
        )
        return True
    ScoringRun.objects.filter(pk=run_id, status=RunStatus.PENDING).update(notes=BROKER_DOWN_NOTE)
    return False


def scoring_run_cancel(*, run: ScoringRun, user: AbstractBaseUser | AnonymousUser | None = None) -> bool:
    """Cancel a pending or running run: its unfinished chunks stop at their next heartbeat and store nothing
    more; scores of finished chunks stay. Returns False when the run had already ended."""
    who = f" by {user.get_username()}" if isinstance(user, get_user_model()) else ""
    now = timezone.now()
    with transaction.atomic():
        cancelled = ScoringRun.objects.filter(pk=run.pk, status__in=ACTIVE_RUN_STATUSES).update(
            status=RunStatus.CANCELLED,
            finished_at=now,
            notes=f"cancelled{who} at {now:%Y-%m-%d %H:%M:%S} UTC",
        )
        if cancelled:
            ScoringChunk.objects.filter(
                run_id=run.pk, status__in=[ChunkStatus.PENDING, ChunkStatus.RUNNING]
            ).update(status=ChunkStatus.CANCELLED, finished_at=now)
    run.refresh_from_db()
    return bool(cancelled)


def vectors_hash(name: str) -> str:
    """The content hash of the registered word vectors ``name`` for a request key ("" : none chosen)."""
    if not name:
        return ""
    try:
        return str(word_vectors_record(name).get("hash", ""))
    except WordVectorsError:
        return f"missing:{name}"


def _vectors_record(name: str, *, study: Study) -> dict[str, object]:
    """The registered word vectors ``name`` ("" : none chosen), ready to score the study's language."""
    if not name:
        return {}
    try:
        record = word_vectors_record(name)
    except WordVectorsError as error:
        raise ScoringRequestError(f"vectors: {error}") from None
    if record.get("language") and record["language"] != study.language:
        raise ScoringRequestError(
            f"vectors: {name} are {record['language']!r} vectors; the study's language is {study.language!r}"
        )
    return record


def _validated_metric_names(
    metrics: Sequence[str], *, study: Study, choice: ImplementationChoice | None = None
) -> list[str]:
    names = list(dict.fromkeys(name.strip() for name in metrics if name.strip()))
    if not names:
        known = ", ".join(available_metric_names())
        raise ScoringRequestError(f"choose at least one metric; known metrics: {known}")
    pairwise = pairwise_judge_names(names)  # computed per pair of replies: not the registry's
    try:
        pairwise_judges_check(pairwise)
    except ValueError as error:  # no such pairwise judge, or its model or endpoint is not configured
        raise ScoringRequestError(str(error)) from None
    names = without_pairwise_judges(names)
    if ALL_METRICS in names:
        chosen = choice or ImplementationChoice()
        system_names = [name for name in available_system_metric_names() if included_by_choice(name, chosen)]
        asked = [name for name in names if name != ALL_METRICS]  # an LLM judge's metrics, say
        names = list(
            dict.fromkeys([*metrics_available_for_study(study=study, choice=chosen), *system_names, *asked])
        )
    try:
        response_names, _ = split_metric_names(names)
    except UnknownMetricError as error:
        raise ScoringRequestError(str(error)) from None
    required = [name for spec in metric_specs(response_names) for name in spec.requires]
    return list(dict.fromkeys([*required, *names, *pairwise]))

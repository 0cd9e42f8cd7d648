"""Reads for scoring: runs, stored scores and signatures, the responses a run scores (no N+1), trained models
and the training jobs that make them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from django.db.models import Count, Min, Q, QuerySet, Sum
from django.utils import timezone

from annotation.models import Response, Study
from scoring.metrics.implementation_choice import ImplementationChoice
from scoring.metrics.llm_judge.pairwise import pairwise_judge_names
from scoring.metrics.registry import (
    available_metric_names,
    included_by_choice,
    is_system_metric,
    is_variant,
    metric_spec,
)
from scoring.metrics.signature import signature_implementation
from scoring.metrics.training_progress import BATCH_STAGE, ENCODING_STAGE, EPOCH_STAGE, WORD2VEC_STAGE
from scoring.models import (
    ACTIVE_TRAINING_STATUSES,
    ChunkStatus,
    MetricOrigin,
    MetricScore,
    MetricSignature,
    RunPurpose,
    RunStatus,
    ScoringChunk,
    ScoringRun,
    StudyModelChoice,
    SystemMetricScore,
    TrainedModel,
    TrainingJob,
    TrainingStatus,
)
from scoring.training.model_figures import ModelFigures, figures_compute, training_summary
from stats.display_names import display_names
from stats.judge_names import pairwise_judge_key


def scoring_runs_for_study(*, study: Study) -> QuerySet[ScoringRun]:
    """The study's runs, newest first, with the training job a run waits for; not the runs its reports
    asked for (scoring/services/report_scores.py), which the report page shows while it waits."""
    return (
        ScoringRun.objects.filter(study=study, purpose=RunPurpose.SCORES)
        .select_related("created_by", "waiting_for")
        .order_by("-created_at", "-id")
    )


def scoring_run_get(*, run_id: int) -> ScoringRun:
    """One run with its study; raises ``ScoringRun.DoesNotExist``."""
    return ScoringRun.objects.select_related("study", "created_by", "waiting_for").get(pk=run_id)


def scoring_run_waiting_text(*, run: ScoringRun) -> str:
    """The text "waiting for model X, epoch 3/10" while a pending run waits for a training job, else "".

    Read from the job's latest progress report, so the page and the API show it live."""
    job = run.waiting_for
    if run.status != RunStatus.PENDING or job is None or job.status not in ACTIVE_TRAINING_STATUSES:
        return ""
    return f"waiting for model {job.name}, {training_job_progress_text(job=job)}"


# Chunks done before a run's time left is estimated. The first chunk alone misleads: it pays for loading
# models and warming caches, and its first progress report comes after a few items ("about 15 min
# left" at 20 of 5,020 scores, 10 s before the run ended).
ETA_CHUNKS = 3
ESTIMATING = "estimating…"


@dataclass(frozen=True)
class RunProgress:
    """Where a run stands, in scores (reply x metric, system x metric): done, total, the measured rate and
    the time left at that rate (None until :data:`ETA_CHUNKS` chunks are done), and its chunks per status."""

    done: int
    total: int
    rate_per_second: float | None
    eta_seconds: float | None
    chunks: dict[str, int]
    running: bool = False

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    @property
    def eta_text(self) -> str:
        """ "about 7 min left" while the run runs (ESTIMATING until there is a rate to go by); "" otherwise."""
        if not self.running:
            return ""
        if self.eta_seconds is None:
            return ESTIMATING
        return f"about {duration_text(self.eta_seconds)} left"


def duration_text(seconds: float) -> str:
    """ "40 s", "7 min", "1.5 h": as precise as an estimate deserves."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def scoring_run_progress(*, run: ScoringRun) -> RunProgress:
    """Finished chunks' scores plus what running chunks reported so far (three aggregate queries).

    The rate is the scores done per second since the run's first chunk started (not since the run was
    created, which may have waited for a worker), once :data:`ETA_CHUNKS` chunks are done."""
    chunks = {
        row["status"]: row["count"]
        for row in ScoringChunk.objects.filter(run_id=run.pk).values("status").annotate(count=Count("id"))
    }
    running = run.status == RunStatus.RUNNING
    done, total = run.progress_done, run.progress_total
    if running and chunks.get(ChunkStatus.RUNNING):
        partial = ScoringChunk.objects.filter(run_id=run.pk, status=ChunkStatus.RUNNING).aggregate(
            done=Sum("units_done")
        )["done"]
        done = min(total, done + int(partial or 0))
    rate = eta = None
    if running and done > 0 and chunks.get(ChunkStatus.DONE, 0) >= ETA_CHUNKS:
        began = ScoringChunk.objects.filter(run_id=run.pk).aggregate(began=Min("started_at"))["began"]
        if began is not None:
            elapsed = max(1e-6, (timezone.now() - began).total_seconds())
            rate = done / elapsed
            eta = (total - done) / rate
    return RunProgress(
        done=done, total=total, rate_per_second=rate, eta_seconds=eta, chunks=chunks, running=running
    )


def metric_scores_for_study(*, study: Study) -> QuerySet[MetricScore]:
    """Every stored score of the study's responses, with response, context, system and signature joined."""
    return MetricScore.objects.filter(response__context__study=study).select_related(
        "response", "response__context", "response__system", "signature"
    )


def metric_signatures_for_study(*, study: Study) -> QuerySet[MetricSignature]:
    """The signatures that have at least one score in the study (each once)."""
    scored = MetricScore.objects.filter(response__context__study=study).values("signature_id")
    return MetricSignature.objects.filter(pk__in=scored).order_by("name", "text")


def study_response_count(*, study: Study) -> int:
    return Response.objects.filter(context__study=study).count()


def trained_models_all() -> QuerySet[TrainedModel]:
    """Every registered trained model (they are shared: a model holds no study's data), by kind and name."""
    return TrainedModel.objects.order_by("kind", "name")


def trained_model_for_study(*, study: Study, kind: str) -> TrainedModel | None:
    """The model of ``kind`` the study selected, else the default model of that kind, else None."""
    choice = StudyModelChoice.objects.filter(study=study, kind=kind).select_related("trained_model").first()
    if choice is not None:
        return choice.trained_model
    return TrainedModel.objects.filter(kind=kind, is_default=True).first()


def training_job_awaited(*, study: Study, kind: str) -> TrainingJob | None:
    """The active training job whose model will be the study's model of ``kind`` when it succeeds: one
    started from the study (it becomes the study's choice), else one that will be the default; the
    oldest first (it finishes first)."""
    jobs = TrainingJob.objects.filter(kind=kind, status__in=ACTIVE_TRAINING_STATUSES)
    return (
        jobs.filter(study=study).order_by("created_at", "id").first()
        or jobs.filter(make_default=True).order_by("created_at", "id").first()
    )


def metrics_available_for_study(*, study: Study, choice: ImplementationChoice | None = None) -> list[str]:
    """What "all" means for a study: every metric that is not a variant (``name:variant``), learned ones
    only where the study has a trained model of their kind (its choice, or the default), and, among the
    metrics with implementations, those that have the one ``choice`` picks for them (by default nltk's:
    ``rouge-lsum`` and ``cider-d``, which only rouge-score and nlg-eval define, come with those)."""
    names = []
    available: dict[str, bool] = {}
    for name in available_metric_names():
        spec = metric_spec(name)
        if is_variant(name) or not included_by_choice(name, choice or ImplementationChoice()):
            continue
        if spec.model_kind:
            if spec.model_kind not in available:
                available[spec.model_kind] = (
                    trained_model_for_study(study=study, kind=spec.model_kind) is not None
                )
            if not available[spec.model_kind]:
                continue
        names.append(name)
    return names


def word_vectors_choices() -> list[tuple[str, str]]:
    """(name, label) of the registered word vectors ready to score with, for the run form."""
    from scoring.models import WordVectorsFile

    ready = WordVectorsFile.objects.filter(status="ready").order_by("name")
    return [(entry.name, f"{entry.name} ({entry.dimension}d, {entry.words:,} words)") for entry in ready]


def system_metric_table(*, study: Study) -> dict[str, Any]:
    """System-level scores of the study as a table: ``{"systems": [names], "metrics": [{signature, metric,
    values: [value or None per system], items: [...]}]}``, systems and signatures sorted by name."""
    scores = SystemMetricScore.objects.filter(system__study=study).select_related("system", "signature")
    systems = sorted({score.system.name for score in scores})
    index = {name: position for position, name in enumerate(systems)}
    by_signature: dict[str, dict[str, Any]] = {}
    for score in sorted(scores, key=lambda s: (s.signature.name, s.signature.text)):
        row = by_signature.setdefault(
            score.signature.text,
            {
                "signature": score.signature.text,
                "metric": score.signature.name,
                "implementation": signature_implementation(
                    score.signature.parameters, score.signature.origin
                ),
                "values": [None] * len(systems),
                "items": [0] * len(systems),
            },
        )
        row["values"][index[score.system.name]] = score.value
        row["items"][index[score.system.name]] = score.items
    return {"systems": systems, "metrics": list(by_signature.values())}


@dataclass(frozen=True)
class ReplyMetricScore:
    """One stored metric value of a reply, with the signature that makes it reproducible."""

    metric: str
    signature: str
    value: float
    display: str = ""  # the metric's display name among the scores shown together (stats/display_names.py)


def reply_metric_scores(*, response_ids: list[int]) -> dict[int, list[ReplyMetricScore]]:
    """response id -> its metric scores, by metric name then signature (one query for all the replies), each
    named by its display name among every signature of these replies ("bleu-4" three times).

    A reply has at most one score per signature (the latest run's: runs update it in place), so this is
    the latest score of every signature; the researcher's item browser shows them."""
    rows = list(
        MetricScore.objects.filter(response_id__in=response_ids)
        .order_by("signature__name", "signature__text")
        .values_list("response_id", "signature__name", "signature__text", "value")
    )
    names = display_names({text: name for _, name, text, _ in rows})
    scores: dict[int, list[ReplyMetricScore]] = {}
    for response_id, name, text, value in rows:
        scores.setdefault(response_id, []).append(
            ReplyMetricScore(metric=name, signature=text, value=value, display=names[text].text)
        )
    return scores


# --- trained models and training jobs ---------------------------------------------------------


@dataclass(frozen=True)
class TrainedModelRow:
    """A trained model as the model list shows it: the row and its figures (stored, or computed from the
    artifact for a model registered before the figures were stored)."""

    model: TrainedModel
    figures: ModelFigures


def trained_model_figures(*, model: TrainedModel) -> ModelFigures:
    """The model's training size, the epochs its scoring cell ran and kept, that cell's validation accuracy
    and the size (scoring/training/model_figures.py), from its config and curve; the row's stored figures
    (older rows stored the best cell's) only where those do not have them. The size is the stored one
    (reading the folder costs a walk), else the folder's."""
    computed = figures_compute(
        config=model.config,
        curve=model.curve,
        path=model.path if model.size_bytes is None else None,
        pairs=model.pairs,
        kind=model.kind,
    )
    return replace(
        computed,
        epochs=computed.epochs if computed.epochs is not None else model.epochs,
        validation_accuracy=computed.validation_accuracy
        if computed.validation_accuracy is not None
        else model.validation_accuracy,
        size_bytes=model.size_bytes if model.size_bytes is not None else computed.size_bytes,
    )


def trained_model_rows() -> list[TrainedModelRow]:
    """Every trained model with its figures, by kind and name (one query)."""
    return [TrainedModelRow(model, trained_model_figures(model=model)) for model in trained_models_all()]


def training_jobs_visible_to(*, user: Any) -> QuerySet[TrainingJob]:
    """The training jobs a researcher may see: those they started and those of their studies (superusers
    see all), newest first."""
    jobs = TrainingJob.objects.select_related("study", "trained_model", "created_by").order_by(
        "-created_at", "-id"
    )
    if getattr(user, "is_superuser", False):
        return jobs
    return jobs.filter(Q(created_by=user) | Q(study__owner=user))


def training_jobs_for_study(*, study: Study) -> QuerySet[TrainingJob]:
    """The jobs started from the study's page, newest first."""
    return (
        TrainingJob.objects.filter(study=study).select_related("trained_model").order_by("-created_at", "-id")
    )


def training_job_progress_text(*, job: TrainingJob) -> str:
    """Where a job stands, in words: "epoch 3/10" (with the cell when several are trained), "training
    word2vec", "waiting for a worker", "trained", ..."""
    progress = job.progress or {}
    if job.status == TrainingStatus.PENDING:
        return str(progress.get("note") or "waiting for a worker")
    if job.status == TrainingStatus.SUCCEEDED:
        summary = (
            training_summary(trained_model_figures(model=job.trained_model)) if job.trained_model else ""
        )
        if summary:
            return f"trained: {summary}"
        epochs = max((int(point.get("epoch") or 0) for point in job.curve or []), default=0)
        return f"trained ({epochs} epoch{'s' if epochs != 1 else ''})"
    if job.status == TrainingStatus.FAILED:
        return "failed: " + (job.error.splitlines()[0] if job.error else "no reason recorded")
    if job.status == TrainingStatus.CANCELLED:
        return str(progress.get("note") or "cancelled")
    stage = progress.get("stage")
    cells = int(progress.get("cells") or 0)
    cell = f" ({progress.get('cell')}, {progress.get('cell_index')}/{cells})" if cells > 1 else ""
    if stage in (BATCH_STAGE, EPOCH_STAGE):
        return f"epoch {progress.get('epoch')}/{progress.get('epochs')}{cell}"
    if stage == WORD2VEC_STAGE:
        steps = progress.get("steps")
        return f"training word2vec ({progress.get('step')}/{steps})" if steps else "training word2vec"
    if stage == ENCODING_STAGE:
        return f"encoding the utterances ({progress.get('step')}/{progress.get('steps')})"
    return str(stage or "starting")


@dataclass(frozen=True)
class ExternalMetric:
    """An external metric of a study (scores computed elsewhere and imported): its signature and how many
    of the study's replies have a value of it."""

    signature_id: int
    name: str
    signature: str
    replies: int


def external_metrics_for_study(*, study: Study) -> list[ExternalMetric]:
    """The study's imported metrics (``MetricSignature.origin`` external), by name then signature (one
    query)."""
    rows = (
        MetricScore.objects.filter(response__context__study=study, signature__origin=MetricOrigin.EXTERNAL)
        .values("signature_id", "signature__name", "signature__text")
        .annotate(replies=Count("id"))
        .order_by("signature__name", "signature__text")
    )
    return [
        ExternalMetric(
            signature_id=row["signature_id"],
            name=row["signature__name"],
            signature=row["signature__text"],
            replies=row["replies"],
        )
        for row in rows
    ]


@dataclass(frozen=True)
class RunSummary:
    """What a run covers, in replies and metrics (its progress counts scores: reply x metric)."""

    replies: int  # the study's replies
    metrics: int  # per-reply metrics of the run, the raw components of a blend included
    system_metrics: int  # system-level metrics (one value per system)
    pairwise_judges: int = 0  # pairwise judges (one verdict per pair of replies)

    @property
    def text(self) -> str:
        """E.g. "300 replies × 2 metrics", "+ 3 system-level metrics", "+ 1 pairwise judge" when there are
        some."""
        parts = []
        if self.metrics or not (self.system_metrics or self.pairwise_judges):
            parts.append(f"{_counted(self.replies, 'reply', 'replies')} × {_counted(self.metrics, 'metric')}")
        if self.system_metrics:
            parts.append(f"{_counted(self.system_metrics, 'system-level metric')}")
        if self.pairwise_judges:
            parts.append(f"{_counted(self.pairwise_judges, 'pairwise judge')}")
        return " + ".join(parts)


def scoring_run_summaries(*, study: Study, runs: Iterable[ScoringRun]) -> dict[int, RunSummary]:
    """run id -> what it covers: the study's replies times the run's per-reply metrics (one count query
    for every run of the study)."""
    replies = study_response_count(study=study)
    return {run.pk: scoring_run_summary(run=run, replies=replies) for run in runs}


def scoring_run_summary(*, run: ScoringRun, replies: int | None = None) -> RunSummary:
    """What one run covers; ``replies``: the study's reply count when the caller has it (else one query)."""
    if replies is None:
        replies = Response.objects.filter(context__study_id=run.study_id).count()
    system = [name for name in run.metrics if is_system_metric(name)]
    pairwise = pairwise_judge_names(run.metrics)
    return RunSummary(
        replies=replies,
        metrics=len(run.metrics) - len(system) - len(pairwise),
        system_metrics=len(system),
        pairwise_judges=len(pairwise),
    )


def _counted(count: int, singular: str, plural: str = "") -> str:
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"


def scoring_run_metrics_without_values(*, run: ScoringRun) -> list[str]:
    """The run's per-reply metrics whose signature has no value for any reply of the study (a referenced
    metric on a study without references, a metric undefined everywhere): the report lists them with the
    reason (correlation/report/loading.py), so a run that leaves one bumps the study's data version."""
    ids = {
        name: int(pk)
        for name, pk in (run.signatures or {}).items()
        if not is_system_metric(name) and pairwise_judge_key(name) is None  # a judge's verdicts are per pair
    }
    valued = set(
        MetricScore.objects.filter(signature_id__in=ids.values(), response__context__study_id=run.study_id)
        .values_list("signature_id", flat=True)
        .distinct()
    )
    return [name for name, pk in ids.items() if pk not in valued]

"""Reads for scoring: runs, stored scores and signatures, and the responses a run scores (no N+1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Prefetch, QuerySet, Sum
from django.utils import timezone

from annotation.models import Reference, Response, Study
from scoring.metrics.registry import available_metric_names, is_variant, metric_spec
from scoring.models import (
    ChunkStatus,
    MetricScore,
    MetricSignature,
    RunStatus,
    ScoringChunk,
    ScoringRun,
    StudyModelChoice,
    SystemMetricScore,
    TrainedModel,
)


def scoring_runs_for_study(*, study: Study) -> QuerySet[ScoringRun]:
    """The study's runs, newest first."""
    return ScoringRun.objects.filter(study=study).select_related("created_by").order_by("-created_at", "-id")


def scoring_run_get(*, run_id: int) -> ScoringRun:
    """One run with its study; raises ``ScoringRun.DoesNotExist``."""
    return ScoringRun.objects.select_related("study", "created_by").get(pk=run_id)


@dataclass(frozen=True)
class RunProgress:
    """Where a run stands, in scores (reply x metric, system x metric): done, total, the measured rate and
    the time left at that rate (None until something is done), and its chunks per status."""

    done: int
    total: int
    rate_per_second: float | None
    eta_seconds: float | None
    chunks: dict[str, int]

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0


def scoring_run_progress(*, run: ScoringRun) -> RunProgress:
    """Finished chunks' scores plus what running chunks reported so far (two aggregate queries)."""
    chunks = {
        row["status"]: row["count"]
        for row in ScoringChunk.objects.filter(run_id=run.pk).values("status").annotate(count=Count("id"))
    }
    done, total = run.progress_done, run.progress_total
    if run.status == RunStatus.RUNNING and chunks.get(ChunkStatus.RUNNING):
        partial = ScoringChunk.objects.filter(run_id=run.pk, status=ChunkStatus.RUNNING).aggregate(
            done=Sum("units_done")
        )["done"]
        done = min(total, done + int(partial or 0))
    rate = eta = None
    if run.status == RunStatus.RUNNING and run.started_at is not None and done > 0:
        elapsed = max(1e-6, (timezone.now() - run.started_at).total_seconds())
        rate = done / elapsed
        eta = (total - done) / rate
    return RunProgress(done=done, total=total, rate_per_second=rate, eta_seconds=eta, chunks=chunks)


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


def scoring_responses_for_study(*, study: Study) -> QuerySet[Response]:
    """The responses a scoring run computes, with context and references prefetched (three queries a chunk).

    Ordered by context, so the replies of several systems to one context land in one batch and their
    shared references are tokenized and counted once.
    """
    return (
        Response.objects.filter(context__study=study)
        .select_related("context")
        .prefetch_related(Prefetch("context__references", queryset=Reference.objects.order_by("id")))
        .order_by("context_id", "id")
    )


def trained_models_all() -> QuerySet[TrainedModel]:
    """Every registered trained model (they are shared: a model holds no study's data), by kind and name."""
    return TrainedModel.objects.order_by("kind", "name")


def trained_model_for_study(*, study: Study, kind: str) -> TrainedModel | None:
    """The model of ``kind`` the study selected, else the default model of that kind, else None."""
    choice = StudyModelChoice.objects.filter(study=study, kind=kind).select_related("trained_model").first()
    if choice is not None:
        return choice.trained_model
    return TrainedModel.objects.filter(kind=kind, is_default=True).first()


def metrics_available_for_study(*, study: Study) -> list[str]:
    """What "all" means for a study: every metric that is not a variant (``name:variant``), learned ones
    only where the study has a trained model of their kind (its choice, or the default)."""
    names = []
    available: dict[str, bool] = {}
    for name in available_metric_names():
        spec = metric_spec(name)
        if is_variant(name):
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


def reply_metric_scores(*, response_ids: list[int]) -> dict[int, list[ReplyMetricScore]]:
    """response id -> its metric scores, by metric name then signature (one query for all the replies).

    A reply has at most one score per signature (the latest run's: runs update it in place), so this is
    the latest score of every signature; the researcher's item browser shows them (issue 13)."""
    scores: dict[int, list[ReplyMetricScore]] = {}
    rows = (
        MetricScore.objects.filter(response_id__in=response_ids)
        .order_by("signature__name", "signature__text")
        .values_list("response_id", "signature__name", "signature__text", "value")
    )
    for response_id, name, text, value in rows:
        scores.setdefault(response_id, []).append(ReplyMetricScore(metric=name, signature=text, value=value))
    return scores

"""Reads for scoring: runs, stored scores and signatures, and the responses a run scores (no N+1)."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from annotation.models import Reference, Response, Study
from scoring.models import MetricScore, MetricSignature, ScoringRun


def scoring_runs_for_study(*, study: Study) -> QuerySet[ScoringRun]:
    """The study's runs, newest first."""
    return ScoringRun.objects.filter(study=study).select_related("created_by").order_by("-created_at", "-id")


def scoring_run_get(*, run_id: int) -> ScoringRun:
    """One run with its study; raises ``ScoringRun.DoesNotExist``."""
    return ScoringRun.objects.select_related("study", "created_by").get(pk=run_id)


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

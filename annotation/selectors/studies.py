from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, QuerySet

from annotation.models import (
    Annotator,
    DialogContext,
    ImportedMeanRating,
    Rating,
    Reference,
    Response,
    Study,
    StudyImport,
    System,
)


def studies_visible_to(*, user: Any) -> QuerySet[Study]:
    """The studies a researcher may see: their own (staff superusers see all)."""
    queryset = Study.objects.select_related("owner").prefetch_related("questions")
    if getattr(user, "is_superuser", False):
        return queryset
    return queryset.filter(owner=user)


@dataclass(frozen=True)
class StudyCounts:
    contexts: int
    references: int
    systems: int
    responses: int
    annotators: int
    ratings: int
    imported_means: int
    rated_responses: int


def study_counts(*, study: Study) -> StudyCounts:
    rated_by_annotators = set(
        Rating.objects.filter(response__context__study=study).values_list("response_id", flat=True).distinct()
    )
    rated_by_means = set(
        ImportedMeanRating.objects.filter(response__context__study=study).values_list(
            "response_id", flat=True
        )
    )
    return StudyCounts(
        contexts=DialogContext.objects.filter(study=study).count(),
        references=Reference.objects.filter(context__study=study).count(),
        systems=System.objects.filter(study=study).count(),
        responses=Response.objects.filter(context__study=study).count(),
        annotators=Annotator.objects.filter(study=study).count(),
        ratings=Rating.objects.filter(response__context__study=study).count(),
        imported_means=len(rated_by_means),
        rated_responses=len(rated_by_annotators | rated_by_means),
    )


def systems_with_counts(*, study: Study) -> QuerySet[System]:
    return System.objects.filter(study=study).annotate(response_count=Count("responses")).order_by("name")


def study_imports(*, study: Study) -> QuerySet[StudyImport]:
    return StudyImport.objects.filter(study=study).select_related("created_by")


def studies_for_annotator(*, user: Any) -> QuerySet[Annotator]:
    """The annotator roles of a user, with the number of their own ratings (never anyone else's)."""
    return (
        Annotator.objects.filter(user=user)
        .select_related("study")
        .annotate(own_ratings=Count("ratings"))
        .order_by("-study__created_at")
    )

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


class StudyLookupError(LookupError):
    """No study, or several, answer to a name given on the command line; the message says which."""


def study_by_name_or_id(key: str, *, owner: str | None = None) -> Study:
    """The study a command line means by ``key``: a study name (unique per owner, so ``owner``, a
    username, tells two researchers' "Pilot" apart) or else a numeric id.

    Raises :class:`StudyLookupError` naming the owners when the name is ambiguous."""
    named = Study.objects.filter(name=key.strip()).select_related("owner")
    if owner:
        named = named.filter(owner__username=owner)
    matches = list(named[:10])
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        owners = ", ".join(sorted(study.owner.get_username() for study in matches))
        raise StudyLookupError(
            f"{len(matches)} studies are named {key!r} (owners: {owners}); give the study id or the owner"
        )
    if key.strip().isdigit():
        by_id = Study.objects.filter(pk=int(key.strip()))
        if owner:
            by_id = by_id.filter(owner__username=owner)
        found = by_id.first()
        if found is not None:
            return found
    whose = f" owned by {owner!r}" if owner else ""
    raise StudyLookupError(f"no study with the name or id {key!r}{whose}")


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

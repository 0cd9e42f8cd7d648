"""REST API of a study's annotation progress: per task, per annotator (items done, quality) and per rating
item (n of k), the figures of the researcher's annotation page. Owners only; anyone else gets 404, as for
every study endpoint."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.models import Study
from annotation.selectors.exports import study_work_progress
from annotation.selectors.studies import studies_visible_to
from kernel.permissions import IsResearcher, authenticated_user


def _owned_study(request: Request, study_id: int) -> Study:
    return get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)


ProgressSerializer = inline_serializer(
    "StudyWorkProgress",
    {
        "tasks": inline_serializer(
            "TaskWorkProgress",
            {
                "kind": serializers.CharField(help_text="rate, write, diversity or pair"),
                "items": serializers.IntegerField(),
                "complete": serializers.IntegerField(help_text="items with every answer they want"),
                "done": serializers.IntegerField(),
                "wanted": serializers.IntegerField(),
                "percent": serializers.IntegerField(),
            },
            many=True,
        ),
        "annotators": inline_serializer(
            "AnnotatorWorkProgress",
            {
                "annotator": serializers.CharField(help_text="pseudonym"),
                "blocked": serializers.BooleanField(),
                "report_inclusion": serializers.CharField(help_text="auto, include or exclude"),
                "included_in_reports": serializers.BooleanField(),
                "agreement": serializers.FloatField(allow_null=True, help_text="mean kappa with the others"),
                "rated": serializers.IntegerField(),
                "checks": serializers.IntegerField(),
                "checks_failed": serializers.IntegerField(),
                "wrote": serializers.IntegerField(),
                "judged": serializers.IntegerField(),
                "compared": serializers.IntegerField(help_text="pair items answered"),
                "active": serializers.IntegerField(help_text="items held now"),
            },
            many=True,
        ),
        "items": inline_serializer(
            "RatingItemProgress",
            {
                "work_item": serializers.IntegerField(),
                "item": serializers.CharField(),
                "context": serializers.CharField(),
                "system": serializers.CharField(),
                "done": serializers.IntegerField(help_text="n: answers received"),
                "wanted": serializers.IntegerField(help_text="k"),
                "active": serializers.IntegerField(help_text="held now, not answered yet"),
            },
            many=True,
        ),
    },
)


class StudyProgressApi(APIView):
    """Annotation progress: per task, per annotator (items done, quality) and per rating item (n of k)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=ProgressSerializer)
    def get(self, request: Request, study_id: int) -> ApiResponse:
        study = _owned_study(request, study_id)
        return ApiResponse(study_work_progress(study=study))

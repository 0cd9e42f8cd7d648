"""REST API for metric scores computed elsewhere: list a study's imported metrics, import a
file of scores (all or nothing), delete an imported metric's scores. Researchers only, their own studies
(404 for another researcher's)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.models import Study
from annotation.selectors.studies import studies_visible_to
from annotation.study_data.api import import_input_rejected, upload_data
from kernel.http.api_input import StrictInputSerializer
from kernel.importing.problems import ImportFile, ImportRejected
from kernel.permissions import IsResearcher, authenticated_user
from scoring.external.file_format import FORMATS, external_metric_label
from scoring.selectors import external_metrics_for_study
from scoring.services.external_scores import (
    ExternalMetricNotFound,
    ExternalScoresImport,
    external_metric_delete,
    external_scores_import,
)

ExternalMetricSerializer = inline_serializer(
    "ExternalMetric",
    {
        "signature_id": serializers.IntegerField(),
        "metric": serializers.CharField(help_text="the name given in the imported file"),
        "label": serializers.CharField(help_text='how the report names it: "<metric> (external)"'),
        "signature": serializers.CharField(),
        "replies": serializers.IntegerField(help_text="replies of the study with a value of it"),
    },
    many=True,
)

ImportedMetricsSerializer = inline_serializer(
    "ExternalScoresImport",
    {
        "file": serializers.CharField(),
        "metrics": inline_serializer(
            "ImportedMetric",
            {
                "signature_id": serializers.IntegerField(),
                "metric": serializers.CharField(),
                "label": serializers.CharField(),
                "signature": serializers.CharField(),
                "replies": serializers.IntegerField(),
                "replaced": serializers.IntegerField(help_text="replies whose earlier value was replaced"),
            },
            many=True,
        ),
        "warnings": serializers.ListField(child=serializers.CharField()),
    },
)

ProblemsSerializer = inline_serializer(
    "ExternalScoresProblems",
    {
        "detail": serializers.CharField(),
        "problems": inline_serializer(
            "ExternalScoresProblem",
            {
                "file": serializers.CharField(),
                "line": serializers.IntegerField(allow_null=True),
                "field": serializers.CharField(allow_null=True),
                "message": serializers.CharField(),
            },
            many=True,
        ),
    },
)


class ExternalScoresUploadSerializer(StrictInputSerializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=[*FORMATS, "auto"], default="auto")

    def validate_file(self, upload: Any) -> Any:
        limit = settings.DIALEVAL_MAX_UPLOAD_BYTES
        if upload.size > limit:
            raise serializers.ValidationError(
                f"{upload.name} is {upload.size:,} bytes; the limit is {limit:,}"
            )
        return upload


def _study(request: Request, study_id: int) -> Study:
    return get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)


class StudyExternalScoresApi(APIView):
    """GET: the study's imported metrics. POST multipart: ``file`` (CSV or JSON Lines, see
    docs/import-formats.md) and optional ``format`` (csv, jsonl, auto). All or nothing: 400 with every
    problem (file, line, field) and nothing written; importing a metric again replaces its values for the
    replies in the file."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(responses=ExternalMetricSerializer)
    def get(self, request: Request, study_id: int) -> ApiResponse:
        study = _study(request, study_id)
        return ApiResponse(
            [
                {
                    "signature_id": metric.signature_id,
                    "metric": metric.name,
                    "label": external_metric_label(metric.name),
                    "signature": metric.signature,
                    "replies": metric.replies,
                }
                for metric in external_metrics_for_study(study=study)
            ]
        )

    @extend_schema(
        request=ExternalScoresUploadSerializer,
        responses={201: ImportedMetricsSerializer, 400: OpenApiResponse(ProblemsSerializer)},
    )
    def post(self, request: Request, study_id: int) -> ApiResponse:
        study = _study(request, study_id)
        body, refused = upload_data(request)
        if refused is not None:
            return refused
        serializer = ExternalScoresUploadSerializer(data=body)
        if not serializer.is_valid():
            return import_input_rejected(serializer.errors)
        upload = serializer.validated_data["file"]
        try:
            result = external_scores_import(
                study=study,
                file=ImportFile(name=upload.name or "upload", data=upload.read()),
                format=serializer.validated_data["format"],
            )
        except ImportRejected as rejected:
            problems = [vars(problem) for problem in rejected.problems]
            detail = "the import was rejected and nothing was changed"
            return ApiResponse({"detail": detail, "problems": problems}, status=status.HTTP_400_BAD_REQUEST)
        return ApiResponse(_imported(result), status=status.HTTP_201_CREATED)


class StudyExternalMetricApi(APIView):
    """DELETE: remove the study's scores of one imported metric (by signature id); 404 when the study has
    none (a built-in metric's scores cannot be deleted here)."""

    permission_classes = [IsResearcher]

    @extend_schema(
        request=None,
        responses={200: inline_serializer("ExternalMetricDeleted", {"deleted": serializers.IntegerField()})},
    )
    def delete(self, request: Request, study_id: int, signature_id: int) -> ApiResponse:
        study = _study(request, study_id)
        try:
            deleted = external_metric_delete(study=study, signature_id=signature_id)
        except ExternalMetricNotFound as error:
            return ApiResponse({"detail": str(error)}, status=status.HTTP_404_NOT_FOUND)
        return ApiResponse({"deleted": deleted})


def _imported(result: ExternalScoresImport) -> dict[str, Any]:
    return {
        "file": result.file,
        "metrics": [
            {
                "signature_id": metric.signature_id,
                "metric": metric.name,
                "label": metric.label,
                "signature": metric.signature,
                "replies": metric.replies,
                "replaced": metric.replaced,
            }
            for metric in result.metrics
        ],
        "warnings": list(result.warnings),
    }

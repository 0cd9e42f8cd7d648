"""REST API for researchers: a study's annotations (ratings, collected references, diversity and pairwise
judgments). Owners only; anyone else gets 404, as for every study endpoint. The annotation progress is
annotation/progress/api.py.

``?format=csv`` or ``?format=jsonl`` (or an ``Accept: text/csv`` / ``application/jsonl`` header) streams
the same file as the study page's download links; without it the rows come as paginated JSON
(``?limit=&offset=``), the same dicts the JSONL file holds.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.exports.files import CONTENT_TYPES, encoded, rows_as
from annotation.models import Study
from annotation.selectors.exports import export_rows
from annotation.selectors.studies import studies_visible_to
from kernel.http.api_formats import SafeJSONRenderer
from kernel.permissions import IsResearcher, authenticated_user


class _FileRenderer(BaseRenderer):
    """Selects a file format in content negotiation; the view streams the file itself. Anything else
    rendered with it (an error) is written as JSON, so a client always gets a readable body."""

    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        response = (renderer_context or {}).get("response")
        if response is not None:  # an error body is JSON: say so, not text/csv
            response["Content-Type"] = "application/json"
        return SafeJSONRenderer().render(data)


class CsvRenderer(_FileRenderer):
    media_type = "text/csv"
    format = "csv"


class JsonLinesRenderer(_FileRenderer):
    media_type = "application/jsonl"
    format = "jsonl"


FORMAT_PARAMETER = OpenApiParameter(
    "format",
    str,
    enum=["json", "csv", "jsonl"],
    description="csv or jsonl: the whole export as a streamed file; json (default): paginated rows",
)


def _owned_study(request: Request, study_id: int) -> Study:
    return get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)


class _StudyExportApi(APIView):
    permission_classes = [IsResearcher]
    renderer_classes = [SafeJSONRenderer, CsvRenderer, JsonLinesRenderer]
    what = ""

    def get(self, request: Request, study_id: int) -> ApiResponse | StreamingHttpResponse:
        study = _owned_study(request, study_id)
        columns, rows = export_rows(study=study, what=self.what)
        fmt = request.accepted_renderer.format
        if fmt in CONTENT_TYPES:
            response = StreamingHttpResponse(
                encoded(rows_as(fmt, rows, columns)), content_type=CONTENT_TYPES[fmt]
            )
            response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-{self.what}.{fmt}"'
            return response
        paginator = LimitOffsetPagination()
        limit = paginator.get_limit(request) or 100
        offset = paginator.get_offset(request)
        page = list(islice(rows, offset, offset + limit + 1))  # one more row says whether a next page exists
        return ApiResponse(
            {
                "columns": list(columns),
                "offset": offset,
                "limit": limit,
                "next_offset": offset + limit if len(page) > limit else None,
                "results": page[:limit],
            }
        )


def _export_schema(what: str, description: str) -> Any:
    return extend_schema(
        description=description,
        parameters=[FORMAT_PARAMETER],
        responses={
            (200, "application/json"): inline_serializer(
                f"Study{what.capitalize()}Page",
                {
                    "columns": serializers.ListField(child=serializers.CharField()),
                    "offset": serializers.IntegerField(),
                    "limit": serializers.IntegerField(),
                    "next_offset": serializers.IntegerField(allow_null=True),
                    "results": serializers.ListField(child=serializers.DictField()),
                },
            ),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV file, header row first"),
            (200, "application/jsonl"): OpenApiResponse(OpenApiTypes.STR, description="one object a line"),
        },
    )


class StudyRatingsApi(_StudyExportApi):
    """Every rating of the study, one row each (annotators excluded from reports included)."""

    what = "ratings"

    @_export_schema("ratings", "One row per rating; columns in docs/annotation-api.md.")
    def get(self, request: Request, study_id: int) -> ApiResponse | StreamingHttpResponse:
        return super().get(request, study_id)


class StudyReferencesApi(_StudyExportApi):
    """Every reference collected in the app, one row each."""

    what = "references"

    @_export_schema("references", "One row per collected reference; columns in docs/annotation-api.md.")
    def get(self, request: Request, study_id: int) -> ApiResponse | StreamingHttpResponse:
        return super().get(request, study_id)


class StudyDiversityApi(_StudyExportApi):
    """Every diversity judgment, one row each."""

    what = "diversity"

    @_export_schema("diversity", "One row per diversity judgment; columns in docs/annotation-api.md.")
    def get(self, request: Request, study_id: int) -> ApiResponse | StreamingHttpResponse:
        return super().get(request, study_id)


class StudyPairwiseApi(_StudyExportApi):
    """Every pairwise judgment (which of two systems' replies to a context is better), one row each."""

    what = "pairwise"

    @_export_schema("pairwise", "One row per pairwise judgment; columns in docs/annotation-api.md.")
    def get(self, request: Request, study_id: int) -> ApiResponse | StreamingHttpResponse:
        return super().get(request, study_id)

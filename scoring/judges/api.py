"""REST API of LLM judges' prompt templates and of the models researchers may pick (by name: never a path,
URL or key). Researchers only; each sees and changes only their own templates (another researcher's is a
404), the shipped ones read-only (403 on a change). Previews and estimates: scoring/judges/preview_api.py."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from kernel.permissions import IsResearcher, authenticated_user
from scoring.judges.backends import judges_available
from scoring.judges.serializers import (
    JudgeTemplateCreateSerializer,
    JudgeTemplateInputSerializer,
    JudgeTemplateSerializer,
    template_data,
)
from scoring.judges.templates import (
    TemplateEntry,
    judge_template_delete,
    judge_template_save,
    template_entries,
    template_entry,
    template_error_field,
)
from scoring.metrics.llm_judge.prompts import TemplateError

DETAIL = inline_serializer("JudgeTemplateProblem", {"detail": serializers.CharField()})


class JudgeModelsApi(APIView):
    """The local models and endpoints the operator configured, by name."""

    permission_classes = [IsResearcher]

    @extend_schema(
        responses=inline_serializer(
            "JudgeModels",
            {
                "local_models": serializers.ListField(
                    child=serializers.CharField(), help_text="for backend local"
                ),
                "endpoints": serializers.ListField(
                    child=serializers.CharField(), help_text="for backend server"
                ),
            },
        )
    )
    def get(self, request: Request) -> ApiResponse:
        available = judges_available()
        return ApiResponse({"local_models": list(available.local), "endpoints": list(available.endpoints)})


def _saved(request: Request, name: str, data: dict[str, object], *, create: bool) -> ApiResponse:
    """Save through the service; a TemplateError is a 400 under the field it names (line and column in
    its message)."""
    user = authenticated_user(request)
    try:
        judge_template_save(
            owner=user,
            name=name,
            user=str(data["user"]),
            system=str(data.get("system", "")),
            answer_prefix=str(data.get("answer_prefix", "")),
            pairwise=bool(data.get("pairwise", False)),
            description=str(data.get("description", "")),
            create=create,
        )
    except TemplateError as error:
        return ApiResponse(
            {template_error_field(error) or "non_field_errors": [str(error)]},
            status=status.HTTP_400_BAD_REQUEST,
        )
    entry = template_entry(name, user)
    code = status.HTTP_201_CREATED if create else status.HTTP_200_OK
    return ApiResponse(JudgeTemplateSerializer(template_data(entry)).data, status=code)


class JudgeTemplateListApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=JudgeTemplateSerializer(many=True))
    def get(self, request: Request) -> ApiResponse:
        entries = template_entries(authenticated_user(request))
        return ApiResponse(
            JudgeTemplateSerializer([template_data(entry) for entry in entries], many=True).data
        )

    @extend_schema(
        request=JudgeTemplateCreateSerializer,
        responses={201: JudgeTemplateSerializer},
        description="Creates one of your templates. A 400 names the field that is wrong, with the line and "
        'column of a placeholder it does not know ("user, line 3, column 12: unknown placeholder {foo}"), '
        "a name you already use or a shipped one's.",
    )
    def post(self, request: Request) -> ApiResponse:
        serializer = JudgeTemplateCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        return _saved(request, str(data.pop("name")), data, create=True)


def _own(request: Request, name: str) -> TemplateEntry | ApiResponse:
    """The user's own template ``name``; a 403 answer for a shipped one; a 404 for anything else."""
    entry = template_entry(name, authenticated_user(request))
    if entry is None:
        raise Http404(f"no template {name!r} of yours")
    if entry.shipped:
        return ApiResponse(
            {"detail": f"{name} is shipped (read-only); copy it under another name"},
            status=status.HTTP_403_FORBIDDEN,
        )
    return entry


class JudgeTemplateDetailApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=JudgeTemplateSerializer)
    def get(self, request: Request, name: str) -> ApiResponse:
        entry = template_entry(name, authenticated_user(request))
        if entry is None:
            raise Http404(f"no template {name!r} of yours")
        return ApiResponse(JudgeTemplateSerializer(template_data(entry)).data)

    @extend_schema(
        request=JudgeTemplateInputSerializer,
        responses={200: JudgeTemplateSerializer, 403: OpenApiResponse(DETAIL, description="shipped")},
        description="Replaces the texts of one of your templates (400: the field, line and column).",
    )
    def put(self, request: Request, name: str) -> ApiResponse:
        own = _own(request, name)
        if isinstance(own, ApiResponse):
            return own
        serializer = JudgeTemplateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return _saved(request, name, dict(serializer.validated_data), create=False)

    @extend_schema(
        responses={
            204: OpenApiResponse(description="deleted; the judges runs asked with it keep its text"),
            403: OpenApiResponse(DETAIL, description="shipped"),
        }
    )
    def delete(self, request: Request, name: str) -> ApiResponse:
        own = _own(request, name)
        if isinstance(own, ApiResponse):
            return own
        judge_template_delete(owner=authenticated_user(request), name=name)
        return ApiResponse(status=status.HTTP_204_NO_CONTENT)

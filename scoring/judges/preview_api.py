"""REST API of a judge's preview and estimate, before a run starts (the run form's preview uses it too):

- ``GET /api/studies/<id>/judge-preview/?template=&question=&position=``: the prompt the judge's model
  reads for one reply, rendered in the request (:mod:`scoring.judges.prompt_preview`);
- ``POST`` to the same address: the judge's reading of that reply, computed by a worker (202 with
  ``Location``; 200 when it is already known), followed with ``GET /api/judge-previews/<id>/``
  (:mod:`scoring.judges.previews`);
- ``GET /api/studies/<id>/judge-estimate/?template=&template=``: requests and prompt tokens
  (:mod:`scoring.judges.estimates`).

A judge that cannot be asked, or a reply number the study lacks, is a 400 naming the field.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from annotation.models import Study
from annotation.selectors.studies import studies_visible_to
from kernel.http.rate_limits import ApiUserThrottle
from kernel.permissions import IsResearcher, authenticated_user
from scoring.judges.definitions import JudgeRequestError
from scoring.judges.estimates import METHOD, judge_run_estimate
from scoring.judges.preview_serializers import (
    JudgeEstimateQuerySerializer,
    JudgeEstimateSerializer,
    JudgePreviewInputSerializer,
    JudgePreviewSerializer,
    JudgePromptSerializer,
)
from scoring.judges.previews import judge_preview_of, judge_preview_request
from scoring.judges.prompt_preview import PromptPreview, judge_prompt_preview
from scoring.judges.serializers import judge_request
from scoring.judges.study_items import ReplyPositionError
from scoring.models import JudgePreview, PreviewStatus

RETRY_SECONDS = "1"


class JudgePreviewThrottle(ApiUserThrottle):
    """Preview readings asked per researcher (``DIALEVAL_API_RATE_JUDGE_PREVIEW``): each is a forward pass
    of a local model or a request an endpoint may bill."""

    scope = "judge-preview"
    rate_setting = "DIALEVAL_API_RATE_JUDGE_PREVIEW"


def _study(request: Request, study_id: int) -> Study:
    return get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)


def _problem(error: ValueError) -> ApiResponse:
    """A 400 under the field the message starts with (a judge's ``questions`` is ``question`` here)."""
    field, separator, message = str(error).partition(":")
    if not separator:
        field, message = "non_field_errors", str(error)
    field = "question" if field == "questions" else field
    return ApiResponse({field: [message.strip()]}, status=status.HTTP_400_BAD_REQUEST)


def _preview(request: Request, study: Study, data: Any) -> PromptPreview | ApiResponse:
    serializer = JudgePreviewInputSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    values = serializer.validated_data
    try:
        return judge_prompt_preview(
            study=study,
            request=judge_request(values),
            question=str(values["question"]),
            position=int(values["position"]),
            references=str(values["references"]),
            user=authenticated_user(request),
        )
    except (JudgeRequestError, ReplyPositionError) as error:
        return _problem(error)


def prompt_data(preview: PromptPreview) -> dict[str, Any]:
    definition, reply, prompt = preview.definition, preview.reply, preview.prompt
    return {
        "judge": definition.metric_name,
        "template": definition.template.name,
        "question": definition.question.name,
        "backend": definition.backend,
        "model": definition.model,
        "read": definition.read,
        "position": reply.position,
        "replies": reply.count,
        "response_id": reply.response_id,
        "item": {
            "context": list(reply.item.context),
            "reply": reply.item.reply,
            "references": list(reply.item.references),
        },
        "system": prompt.system,
        "user": prompt.user,
        "answer_prefix": prompt.answer_prefix,
        "formatted": prompt.formatted,
        "formatted_note": prompt.formatted_note,
    }


def preview_answer(row: JudgePreview, *, code: int = status.HTTP_200_OK) -> ApiResponse:
    answer = ApiResponse(JudgePreviewSerializer(row).data, status=code)
    if row.status in (PreviewStatus.PENDING, PreviewStatus.RUNNING):
        answer["Location"] = reverse("api-judge-preview-detail", args=[row.pk])
        answer["Retry-After"] = RETRY_SECONDS
    return answer


class StudyJudgePreviewApi(APIView):
    permission_classes = [IsResearcher]

    def get_throttles(self) -> list[BaseThrottle]:
        throttles = list(super().get_throttles())
        return [*throttles, JudgePreviewThrottle()] if self.request.method == "POST" else throttles

    @extend_schema(
        parameters=[JudgePreviewInputSerializer],
        responses=JudgePromptSerializer,
        description="The prompt a judge's model reads for the study's reply number `position`: the system "
        "message, the user message, the answer prefix, and the text sent where the app formats it.",
    )
    def get(self, request: Request, study_id: int) -> ApiResponse:
        preview = _preview(request, _study(request, study_id), request.query_params)
        if isinstance(preview, ApiResponse):
            return preview
        return ApiResponse(JudgePromptSerializer(prompt_data(preview)).data)

    @extend_schema(
        request=JudgePreviewInputSerializer,
        responses={202: JudgePreviewSerializer, 200: JudgePreviewSerializer},
        description="Asks a worker for the judge's reading of that reply: 202 with Location and Retry-After "
        "while it is computed (GET the Location), 200 when this reading is already known. Limited per "
        "researcher (DIALEVAL_API_RATE_JUDGE_PREVIEW).",
    )
    def post(self, request: Request, study_id: int) -> ApiResponse:
        preview = _preview(request, _study(request, study_id), request.data)
        if isinstance(preview, ApiResponse):
            return preview
        row = judge_preview_request(user=authenticated_user(request), preview=preview)
        done = row.status in (PreviewStatus.DONE, PreviewStatus.FAILED)
        return preview_answer(row, code=status.HTTP_200_OK if done else status.HTTP_202_ACCEPTED)


class JudgePreviewDetailApi(APIView):
    """A preview reading you asked for (anyone else's is a 404)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=JudgePreviewSerializer)
    def get(self, request: Request, preview_id: int) -> ApiResponse:
        try:
            row = judge_preview_of(user=authenticated_user(request), preview_id=preview_id)
        except JudgePreview.DoesNotExist:
            return ApiResponse({"detail": "No such preview of yours."}, status=status.HTTP_404_NOT_FOUND)
        return preview_answer(row)


class StudyJudgeEstimateApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(parameters=[JudgeEstimateQuerySerializer], responses=JudgeEstimateSerializer)
    def get(self, request: Request, study_id: int) -> ApiResponse:
        study = _study(request, study_id)
        serializer = JudgeEstimateQuerySerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        try:
            estimate = judge_run_estimate(
                study=study,
                requests=serializer.judge_requests(),
                user=authenticated_user(request),
                references=str(serializer.validated_data["references"]),
            )
        except JudgeRequestError as error:
            return _problem(error)
        data = {**asdict(estimate), "method": METHOD, "text": estimate.text}
        return ApiResponse(JudgeEstimateSerializer(data).data)

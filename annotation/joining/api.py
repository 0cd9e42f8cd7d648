"""REST API for a volunteer's first steps in a study: join it by its invite token, read and accept
the consent, then the qualification round (the next training item; an answer and its feedback).

The work endpoints (annotation/work/api.py) answer 403 until these steps are done. Like them, a study the
user is not an annotator of is 404. Errors: 400 ``{"field": ..., "detail": ...}``; 403 ``{"detail": ...}``
for training before the consent; 409 ``{"detail": ...}`` for an answer after the round is over.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.models import Annotator
from annotation.selectors.admission import (
    CONSENT,
    admission_step,
    consent_text,
    study_has_training,
    training_item_payload,
    training_next,
    training_score,
)
from annotation.selectors.work import annotator_tasks
from annotation.services.annotators import InviteInvalid, InviteUnknown, annotator_join
from annotation.services.joining import annotator_consent
from annotation.services.qualification import (
    PENDING,
    QualificationClosed,
    TrainingFeedback,
    TrainingInvalid,
    qualification_decide,
    training_answer_submit,
)
from annotation.work.serializers import (
    WorkDetailSerializer,
    WorkErrorSerializer,
    WorkJoinInputSerializer,
    WorkJoinSerializer,
    first_error,
)
from kernel.http.api_input import StrictInputSerializer
from kernel.permissions import authenticated_user

NOT_FOUND = OpenApiResponse(WorkDetailSerializer, description="not an annotator of this study")
INVALID = OpenApiResponse(WorkErrorSerializer, description="the input named by `field` is invalid")
NO_CONSENT = OpenApiResponse(WorkDetailSerializer, description="accept the consent first")


class ConsentSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="the study's consent text (else its description and instructions)")
    consented = serializers.BooleanField()
    consented_at = serializers.DateTimeField(allow_null=True)
    next = serializers.ChoiceField(
        choices=["consent", "training", "failed", "work"], help_text="the step that comes next"
    )


class ConsentInputSerializer(StrictInputSerializer):
    agree = serializers.BooleanField(help_text="true: the volunteer accepts the consent text")


class TrainingScoreSerializer(serializers.Serializer):
    answered = serializers.IntegerField()
    correct = serializers.IntegerField()
    total = serializers.IntegerField()


class TrainingNextSerializer(serializers.Serializer):
    done = serializers.BooleanField(help_text="true when no training item is left to answer")
    qualification = serializers.ChoiceField(choices=["pending", "passed", "failed"])
    score = TrainingScoreSerializer()
    item = serializers.DictField(
        allow_null=True,
        help_text="training_item (id), turns, reply and question (name, prompt, kind, scale, points)",
    )


class TrainingAnswerInputSerializer(StrictInputSerializer):
    value = serializers.IntegerField(help_text="a point of the question's scale")


class TrainingFeedbackSerializer(serializers.Serializer):
    correct = serializers.BooleanField()
    value = serializers.IntegerField()
    gold_min = serializers.IntegerField()
    gold_max = serializers.IntegerField()
    explanation = serializers.CharField()
    finished = serializers.BooleanField(help_text="every training item is answered")
    qualification = serializers.ChoiceField(choices=["pending", "passed", "failed"])
    score = TrainingScoreSerializer()


def _annotator(request: Request, study_id: int) -> Annotator:
    annotator = (
        Annotator.objects.select_related("study")
        .filter(study_id=study_id, user=authenticated_user(request))
        .first()
    )
    if annotator is None:
        raise Http404("You are not an annotator of this study.")
    return annotator


def _next_step(annotator: Annotator) -> str:
    step = admission_step(annotator=annotator)
    return step.step if step is not None else "work"


def _score(annotator: Annotator) -> dict[str, int]:
    score = training_score(annotator=annotator)
    return {"answered": score.answered, "correct": score.correct, "total": score.total}


def _in_training(annotator: Annotator) -> None:
    """Training needs the consent first, and a study with training items."""
    step = admission_step(annotator=annotator)
    if step is not None and step.step == CONSENT:
        raise PermissionDenied(
            f"Accept the study's consent first: POST /api/work/{annotator.study_id}/consent/."
        )
    if not study_has_training(study_id=annotator.study_id):
        raise Http404("This study has no qualification round.")


class ConsentApi(APIView):
    """GET: the consent text and whether it was accepted. POST ``{"agree": true}``: accept it."""

    @extend_schema(responses={200: ConsentSerializer, 404: NOT_FOUND})
    def get(self, request: Request, study_id: int) -> ApiResponse:
        annotator = _annotator(request, study_id)
        return self._state(annotator)

    @extend_schema(
        request=ConsentInputSerializer, responses={200: ConsentSerializer, 400: INVALID, 404: NOT_FOUND}
    )
    def post(self, request: Request, study_id: int) -> ApiResponse:
        annotator = _annotator(request, study_id)
        body = ConsentInputSerializer(data=request.data)
        if not body.is_valid() or not body.validated_data["agree"]:
            return ApiResponse(
                {
                    "field": "agree",
                    "detail": "send true to accept the consent text; without it you cannot start",
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        return self._state(annotator_consent(annotator=annotator))

    @staticmethod
    def _state(annotator: Annotator) -> ApiResponse:
        return ApiResponse(
            {
                "text": consent_text(study=annotator.study),
                "consented": annotator.consented_at is not None,
                "consented_at": annotator.consented_at,
                "next": _next_step(annotator),
            }
        )


class TrainingNextApi(APIView):
    """The next training item to answer (in position order), or ``done`` with the round's result."""

    @extend_schema(responses={200: TrainingNextSerializer, 403: NO_CONSENT, 404: NOT_FOUND})
    def get(self, request: Request, study_id: int) -> ApiResponse:
        annotator = _annotator(request, study_id)
        _in_training(annotator)
        item = training_next(annotator=annotator) if annotator.qualification == PENDING else None
        if item is None and annotator.qualification == PENDING:
            qualification_decide(annotator=annotator)
        return ApiResponse(
            {
                "done": item is None,
                "qualification": annotator.qualification,
                "score": _score(annotator),
                "item": training_item_payload(item=item) if item is not None else None,
            }
        )


def _feedback(feedback: TrainingFeedback) -> dict[str, Any]:
    score = feedback.score
    return {
        "correct": feedback.correct,
        "value": feedback.value,
        "gold_min": feedback.item.gold_min,
        "gold_max": feedback.item.gold_max,
        "explanation": feedback.item.explanation,
        "finished": feedback.finished,
        "qualification": feedback.qualification,
        "score": {"answered": score.answered, "correct": score.correct, "total": score.total},
    }


class TrainingAnswerApi(APIView):
    """Answer one training item: whether it was right, the right range and the explanation, and the
    round's result once every item is answered (answering again returns the first answer's feedback)."""

    @extend_schema(
        request=TrainingAnswerInputSerializer,
        responses={
            200: TrainingFeedbackSerializer,
            400: INVALID,
            403: NO_CONSENT,
            404: NOT_FOUND,
            409: OpenApiResponse(WorkDetailSerializer, description="the round is over"),
        },
    )
    def post(self, request: Request, study_id: int, item_id: int) -> ApiResponse:
        annotator = _annotator(request, study_id)
        _in_training(annotator)
        body = TrainingAnswerInputSerializer(data=request.data)
        if not body.is_valid():
            return ApiResponse(
                {"field": "value", "detail": "send the score as an integer of the question's scale"},
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            feedback = training_answer_submit(
                annotator=annotator, training_item_id=item_id, value=body.validated_data["value"]
            )
        except TrainingInvalid as invalid:
            if invalid.field == "training_item":
                raise Http404(invalid.message) from None
            return ApiResponse(
                {"field": invalid.field, "detail": invalid.message}, status=status.HTTP_400_BAD_REQUEST
            )
        except QualificationClosed as closed:
            return ApiResponse({"detail": str(closed)}, status=status.HTTP_409_CONFLICT)
        return ApiResponse(_feedback(feedback))


class JoinApi(APIView):
    """Become an annotator of the study whose invite token this is (again: the same role, no error)."""

    @extend_schema(
        request=WorkJoinInputSerializer,
        responses={
            200: WorkJoinSerializer,
            400: INVALID,
            404: OpenApiResponse(WorkErrorSerializer, description="no study has this invite token"),
        },
    )
    def post(self, request: Request) -> ApiResponse:
        body = WorkJoinInputSerializer(data=request.data)
        if not body.is_valid():
            field, detail = first_error(body.errors)
            return ApiResponse({"field": field, "detail": detail}, status=status.HTTP_400_BAD_REQUEST)
        try:
            annotator = annotator_join(token=body.validated_data["token"], user=authenticated_user(request))
        except InviteUnknown as unknown:  # no such invite: a resource not found, as the schema says
            return ApiResponse({"field": "token", "detail": str(unknown)}, status=status.HTTP_404_NOT_FOUND)
        except InviteInvalid as refused:
            return ApiResponse({"field": "token", "detail": str(refused)}, status=status.HTTP_400_BAD_REQUEST)
        return ApiResponse(
            {
                "study": annotator.study_id,
                "name": annotator.study.name,
                "annotator": annotator.pseudonym,
                "tasks": annotator_tasks(annotator=annotator),
            }
        )

"""REST API for annotators' comments and flags on their items:
``POST /api/work/<study>/assignments/<assignment>/notes/``.

Like the rest of the annotators' API (annotation/work/api.py): a study the user is not an annotator of,
and an assignment that is not theirs, are 404; bad input is 400 ``{"field": ..., "detail": ...}``. A
note is not an answer: the queue does not move. The answer is the same for every item, attention checks
included, so that a check never gives itself away (annotation/services/notes.py).
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.models import Annotator, Assignment, FlagReason, NoteKind
from annotation.services.notes import MAX_NOTE_CHARACTERS, NoteInvalid, item_note_add
from annotation.work.serializers import WorkDetailSerializer, WorkErrorSerializer, first_error
from kernel.http.api_input import StrictInputSerializer
from kernel.permissions import authenticated_user


class WorkNoteInputSerializer(StrictInputSerializer):
    kind = serializers.ChoiceField(choices=NoteKind.values, help_text="comment or flag")
    reason = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text=f"flags only: one of {', '.join(FlagReason.values)}",
    )
    # Longer texts reach the service, whose message says how long they were.
    text = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        trim_whitespace=False,
        max_length=4 * MAX_NOTE_CHARACTERS,
    )


class WorkNoteSerializer(serializers.Serializer):
    recorded = serializers.BooleanField()
    kind = serializers.CharField()


class WorkNoteApi(APIView):
    """A comment (free text) or a flag (a reason, optional text) on the item of one of your assignments."""

    @extend_schema(
        request=WorkNoteInputSerializer,
        responses={
            201: WorkNoteSerializer,
            400: OpenApiResponse(WorkErrorSerializer, description="the input named by `field` is invalid"),
            404: OpenApiResponse(
                WorkDetailSerializer, description="not an annotator of this study / not your item"
            ),
        },
    )
    def post(self, request: Request, study_id: int, assignment_id: int) -> ApiResponse:
        annotator = Annotator.objects.filter(study_id=study_id, user=authenticated_user(request)).first()
        if annotator is None:
            raise Http404("You are not an annotator of this study.")
        body = WorkNoteInputSerializer(data=request.data)
        if not body.is_valid():
            field, detail = first_error(body.errors)
            return ApiResponse({"field": field, "detail": detail}, status=status.HTTP_400_BAD_REQUEST)
        try:
            item_note_add(
                annotator=annotator,
                assignment_id=assignment_id,
                kind=body.validated_data["kind"],
                reason=body.validated_data["reason"],
                text=body.validated_data["text"],
            )
        except Assignment.DoesNotExist:
            raise Http404("No such item of yours.") from None
        except NoteInvalid as invalid:
            return ApiResponse(
                {"field": invalid.field, "detail": invalid.message}, status=status.HTTP_400_BAD_REQUEST
            )
        return ApiResponse(
            {"recorded": True, "kind": body.validated_data["kind"]}, status=status.HTTP_201_CREATED
        )

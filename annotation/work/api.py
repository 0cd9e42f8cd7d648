"""REST API for annotators: get the next item, answer it, skip it, go back. Everyone sees only their own
work: a study they are not an annotator of, and an assignment that is not theirs, are 404 (not 403, which
would confirm that it exists). Joining a study by its invite token, the consent and the qualification round
are annotation/joining/api.py.

Errors have one shape: 400 ``{"field": ..., "detail": ...}`` naming the input at fault; 409
``{"detail": ...}`` when the item is no longer the annotator's to answer (it timed out and went to
others, or was skipped); 403 ``{"detail": ...}`` while a volunteer has the consent to accept or the
qualification round to do, saying where. Responses are blind (annotation.selectors.work): no system name,
no response id of a rating item, no other annotator's answer.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from annotation.models import Annotator, Assignment, AssignmentStatus, WorkKind
from annotation.selectors.admission import admission_api_message, admission_step, with_training_flag
from annotation.selectors.work import (
    OwnCounts,
    annotator_progress,
    annotator_tasks,
    item_payload,
    progress_from_counts,
)
from annotation.services.assignment import (
    NoWork,
    SlotLost,
    assignment_for,
    assignment_skip,
    assignment_visit,
    next_assignment,
    previous_assignment,
)
from annotation.services.pairwise import pairwise_submit
from annotation.services.submissions import (
    SubmissionInvalid,
    SubmitResult,
    diversity_submit,
    rating_submit,
    reference_add,
)
from annotation.work.serializers import (
    KindQuerySerializer,
    PreviousQuerySerializer,
    WorkDetailSerializer,
    WorkDiversityInputSerializer,
    WorkErrorSerializer,
    WorkPairwiseInputSerializer,
    WorkRatingInputSerializer,
    WorkReferenceInputSerializer,
    WorkScreenSerializer,
    WorkSkipSerializer,
    WorkSubmitSerializer,
    first_error,
)
from kernel.permissions import authenticated_user

NOT_FOUND = OpenApiResponse(
    WorkDetailSerializer, description="not an annotator of this study / not your item"
)
INVALID = OpenApiResponse(WorkErrorSerializer, description="the input named by `field` is invalid")
CONFLICT = OpenApiResponse(WorkDetailSerializer, description="the item is no longer yours to answer")


def invalid(field: str, detail: str) -> ApiResponse:
    return ApiResponse({"field": field, "detail": detail}, status=status.HTTP_400_BAD_REQUEST)


def conflict(detail: str) -> ApiResponse:
    return ApiResponse({"detail": detail}, status=status.HTTP_409_CONFLICT)


def _annotator(request: Request, study_id: int) -> Annotator:
    """The requesting user's annotator role in the study; 404 when they have none."""
    annotator = (
        with_training_flag(Annotator.objects.select_related("study"))
        .filter(study_id=study_id, user=authenticated_user(request))
        .first()
    )
    if annotator is None:
        raise Http404("You are not an annotator of this study.")
    step = admission_step(annotator=annotator, has_training=annotator.study_has_training)  # type: ignore[attr-defined]
    if step is not None:  # consent, qualification
        raise PermissionDenied(admission_api_message(annotator=annotator, step=step))
    return annotator


def _assignment(annotator: Annotator, assignment_id: int) -> Assignment:
    try:
        return assignment_for(annotator=annotator, assignment_id=assignment_id)
    except Assignment.DoesNotExist:
        raise Http404("No such item of yours.") from None


def _progress(annotator: Annotator, kind: str, counts: OwnCounts | None = None) -> dict[str, int]:
    """The annotator's progress in a task (from ``counts`` when the hand-out read them)."""
    if counts is None:
        progress = annotator_progress(annotator=annotator, kind=kind)
    else:
        progress = progress_from_counts(annotator=annotator, kind=kind, counts=counts)
    return {
        "done": progress.done,
        "total": progress.total,
        "percent": progress.percent,
        "skipped": progress.skipped,
    }


def _valid(serializer: Serializer) -> ApiResponse | None:
    if serializer.is_valid():
        return None
    return invalid(*first_error(serializer.errors))


def _task_kind(assignment: Assignment) -> str:
    """The task an item belongs to (attention checks are part of rating)."""
    kind = str(assignment.item.kind)
    return WorkKind.RATE.value if kind == WorkKind.CHECK else kind


def _submitted(annotator: Annotator, assignment: Assignment, result: SubmitResult) -> ApiResponse:
    return ApiResponse(
        {
            "warnings": list(result.warnings),
            "blocked": result.blocked,
            "remaining": result.remaining,
            "progress": _progress(annotator, _task_kind(assignment)),
        }
    )


class WorkNextApi(APIView):
    """The annotator's current item of a task, or a new one (fewest answers first, their own shuffle)."""

    @extend_schema(
        parameters=[KindQuerySerializer],
        responses={200: WorkScreenSerializer, 400: INVALID, 404: NOT_FOUND},
    )
    def get(self, request: Request, study_id: int) -> ApiResponse:
        annotator = _annotator(request, study_id)
        query = KindQuerySerializer(data=request.query_params)
        if (problem := _valid(query)) is not None:
            return problem
        kind = query.validated_data["kind"]
        if kind not in annotator_tasks(annotator=annotator):
            return invalid("kind", f"this study has no {kind} task")
        try:
            handout = next_assignment(annotator=annotator, kind=kind)
        except NoWork as no_work:
            return ApiResponse(
                {
                    "done": True,
                    "reason": no_work.reason,
                    "message": no_work.message,
                    "progress": _progress(annotator, kind),
                }
            )
        assignment_visit(assignment=handout.assignment)
        return ApiResponse(
            {
                **item_payload(assignment=handout.assignment),
                "done": False,
                "resumed": handout.resumed,
                "progress": _progress(annotator, kind, handout.counts),
            }
        )


class WorkPreviousApi(APIView):
    """The annotator's last answered item (before assignment ``before``), to change the answer."""

    @extend_schema(
        parameters=[PreviousQuerySerializer],
        responses={200: WorkScreenSerializer, 400: INVALID, 404: NOT_FOUND},
    )
    def get(self, request: Request, study_id: int) -> ApiResponse:
        annotator = _annotator(request, study_id)
        query = PreviousQuerySerializer(data=request.query_params)
        if (problem := _valid(query)) is not None:
            return problem
        kind = query.validated_data["kind"]
        earlier = previous_assignment(
            annotator=annotator, kind=kind, before=query.validated_data.get("before")
        )
        progress = _progress(annotator, kind)
        if earlier is None:
            return ApiResponse(
                {
                    "done": False,
                    "assignment": None,
                    "message": "There is no earlier item.",
                    "progress": progress,
                }
            )
        assignment_visit(assignment=earlier)  # reopening an answered item starts a new visit
        return ApiResponse({**item_payload(assignment=earlier), "done": False, "progress": progress})


SUBMIT_RESPONSES = {200: WorkSubmitSerializer, 400: INVALID, 404: NOT_FOUND, 409: CONFLICT}


class _SubmitApi(APIView):
    """An answer to one of the annotator's items: the body checked by ``input_serializer``, whose fields are
    the keyword arguments of ``submit`` (the task's submission service, which names the field it rejects);
    409 when the item is no longer theirs. Each task's view says what its answer is (its docstring is its
    OpenAPI description)."""

    input_serializer: type[Serializer]
    submit: Callable[..., SubmitResult]

    def post(self, request: Request, study_id: int, assignment_id: int) -> ApiResponse:
        annotator = _annotator(request, study_id)
        assignment = _assignment(annotator, assignment_id)
        body = self.input_serializer(data=request.data)
        if (problem := _valid(body)) is not None:
            return problem
        try:
            result = self.submit(
                annotator=annotator, assignment_id=assignment.pk, loaded=assignment, **body.validated_data
            )
        except SubmissionInvalid as rejected:
            return invalid(rejected.field, rejected.message)
        except SlotLost as lost:
            return conflict(str(lost))
        return _submitted(annotator, assignment, result)


@extend_schema(request=WorkRatingInputSerializer, responses=SUBMIT_RESPONSES)
class RatingSubmitApi(_SubmitApi):
    """Scores for every question of the study about the item's reply (again: replaces the answer)."""

    input_serializer = WorkRatingInputSerializer
    submit = staticmethod(rating_submit)


@extend_schema(request=WorkReferenceInputSerializer, responses=SUBMIT_RESPONSES)
class ReferenceAddApi(_SubmitApi):
    """One reference for the item's context; ``remaining`` says how many are still to write."""

    input_serializer = WorkReferenceInputSerializer
    submit = staticmethod(reference_add)


@extend_schema(request=WorkDiversityInputSerializer, responses=SUBMIT_RESPONSES)
class DiversitySubmitApi(_SubmitApi):
    """Which of the replies shown are appropriate, and how many meanings they carry."""

    input_serializer = WorkDiversityInputSerializer
    submit = staticmethod(diversity_submit)


@extend_schema(request=WorkPairwiseInputSerializer, responses=SUBMIT_RESPONSES)
class PairwiseSubmitApi(_SubmitApi):
    """Which of the two replies shown is better: "left" (Reply A), "right" (Reply B) or "tie"."""

    input_serializer = WorkPairwiseInputSerializer
    submit = staticmethod(pairwise_submit)


class AssignmentSkipApi(APIView):
    """Pass on the item held now: it goes back to the pool and never comes back to this annotator."""

    @extend_schema(request=None, responses={200: WorkSkipSerializer, 404: NOT_FOUND, 409: CONFLICT})
    def post(self, request: Request, study_id: int, assignment_id: int) -> ApiResponse:
        annotator = _annotator(request, study_id)
        assignment = _assignment(annotator, assignment_id)
        if assignment.status != AssignmentStatus.ACTIVE:
            return conflict(
                f"This item is {assignment.get_status_display()}; only an item you hold can be skipped."
            )
        assignment_skip(annotator=annotator, assignment_id=assignment.pk)
        return ApiResponse({"skipped": True})

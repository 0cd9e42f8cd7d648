"""REST API for studies: list, create, one study with its counts. Serializers translate; the services do the
work. Imports into a study are annotation/study_data/api.py."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.models import Language, Question, Study
from annotation.scales import QUESTION_KINDS, SCALE_PRESETS, QuestionSpec, scale_problem
from annotation.selectors.studies import studies_visible_to, study_counts
from annotation.services.studies import study_create
from kernel.http.api_formats import SafeJSONParser
from kernel.http.api_input import StrictInputSerializer
from kernel.permissions import IsResearcher, authenticated_user


class QuestionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Question
        fields = ["name", "prompt", "scale_min", "scale_max", "labels"]


class StudyOutputSerializer(serializers.ModelSerializer):
    questions = QuestionSerializer(many=True, read_only=True)
    owner = serializers.CharField(source="owner.username", read_only=True)

    class Meta:
        model = Study
        fields = [
            "id", "name", "description", "language", "instructions", "ratings_per_item", "show_reference",
            "owner", "questions", "created_at",
        ]  # fmt: skip


class QuestionInputSerializer(StrictInputSerializer):
    name = serializers.SlugField(max_length=60)
    scale_min = serializers.IntegerField()
    scale_max = serializers.IntegerField()
    labels = serializers.ListField(child=serializers.CharField(max_length=100), required=False, default=list)
    prompt = serializers.CharField(required=False, allow_blank=True, default="")
    kind = serializers.ChoiceField(choices=list(QUESTION_KINDS), default="ordinal")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        problem = scale_problem(attrs["scale_min"], attrs["scale_max"], attrs["kind"], attrs["labels"])
        if problem is not None:
            field = "labels" if "label" in problem else "scale_max"
            raise serializers.ValidationError({field: problem})
        return attrs


class StudyCreateSerializer(StrictInputSerializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    language = serializers.ChoiceField(choices=Language.choices, default=Language.ENGLISH)
    scale = serializers.ChoiceField(choices=list(SCALE_PRESETS), default="0-2")
    instructions = serializers.CharField(required=False, allow_blank=True, default="")
    ratings_per_item = serializers.IntegerField(min_value=1, max_value=50, default=3)
    questions = QuestionInputSerializer(
        many=True,
        required=False,
        help_text="several questions; when absent, one on `scale` (appropriateness)",
    )

    def validate_questions(self, questions: list[dict[str, Any]]) -> list[QuestionSpec]:
        names = [question["name"] for question in questions]
        if len(set(names)) != len(names):
            raise serializers.ValidationError("question names must be distinct")
        return [QuestionSpec(**question) for question in questions]

    def validate_name(self, value: str) -> str:
        """Unique among the requesting researcher's own studies (others' names are not revealed)."""
        owner = self.context.get("owner")
        if owner is not None and Study.objects.filter(owner=owner, name=value.strip()).exists():
            raise serializers.ValidationError("you already have a study with this name")
        return value.strip()


class StudyListCreateApi(APIView):
    permission_classes = [IsResearcher]
    # JSON only: a form-encoded body cannot carry the nested questions, which were then silently dropped.
    parser_classes = [SafeJSONParser]

    @extend_schema(responses=StudyOutputSerializer(many=True))
    def get(self, request: Request) -> ApiResponse:
        studies = studies_visible_to(user=authenticated_user(request))
        return ApiResponse(StudyOutputSerializer(studies, many=True).data)

    @extend_schema(request=StudyCreateSerializer, responses={201: StudyOutputSerializer})
    def post(self, request: Request) -> ApiResponse:
        serializer = StudyCreateSerializer(data=request.data, context={"owner": authenticated_user(request)})
        serializer.is_valid(raise_exception=True)
        study = study_create(owner=authenticated_user(request), **serializer.validated_data)
        return ApiResponse(StudyOutputSerializer(study).data, status=status.HTTP_201_CREATED)


class StudyDetailApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        responses=inline_serializer(
            "StudyDetail",
            {
                "study": StudyOutputSerializer(),
                "counts": serializers.DictField(child=serializers.IntegerField()),
            },
        )
    )
    def get(self, request: Request, study_id: int) -> ApiResponse:
        study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
        counts = study_counts(study=study)
        return ApiResponse({"study": StudyOutputSerializer(study).data, "counts": vars(counts)})

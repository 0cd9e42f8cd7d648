"""REST API for studies and imports. Serializers translate; the services do the work."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.importers import IMPORT_FORMATS, ImportFile, ImportRejected
from annotation.models import Language, Question, Study, StudyImport
from annotation.scales import QUESTION_KINDS, SCALE_PRESETS, QuestionSpec, scale_problem
from annotation.selectors.studies import studies_visible_to, study_counts, study_imports
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from config.api_formats import SafeJSONParser
from config.api_input import StrictInputSerializer
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


class StudyImportOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = StudyImport
        fields = ["id", "format", "filenames", "counts", "warnings", "created_at"]


class StudyImportInputSerializer(StrictInputSerializer):
    format = serializers.ChoiceField(choices=list(IMPORT_FORMATS))
    files = serializers.ListField(child=serializers.FileField(), allow_empty=False)
    question = serializers.CharField(required=False, allow_blank=True, default="")

    def validate_files(self, files: list[Any]) -> list[Any]:
        limit = settings.DIALEVAL_MAX_UPLOAD_BYTES
        for upload in files:
            if upload.size > limit:
                raise serializers.ValidationError(
                    f"{upload.name} is {upload.size} bytes; the limit is {limit}"
                )
        return files


ImportProblemSerializer = inline_serializer(
    "ImportProblems",
    {
        "detail": serializers.CharField(),
        "problems": inline_serializer(
            "ImportProblem",
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


def import_input_rejected(errors: Any, *, file: str = "") -> ApiResponse:
    """The 400 of an upload whose form fields (not its files' content) are wrong, in the import's own
    documented shape ``{detail, problems}``: one problem per field and message (issue 24)."""
    if not isinstance(errors, dict):
        errors = {"non_field_errors": errors}
    problems = []
    for field, messages in errors.items():
        for message in messages if isinstance(messages, list) else [messages]:
            if isinstance(message, dict):  # a list field's item: {index: [messages]}
                message = "; ".join(str(item) for items in message.values() for item in items)
            named = None if field in {"non_field_errors", "detail"} else str(field)
            problems.append({"file": file, "line": None, "field": named, "message": str(message)})
    return ApiResponse(
        {"detail": "the upload was refused and nothing was changed", "problems": problems},
        status=status.HTTP_400_BAD_REQUEST,
    )


def upload_data(request: Request) -> tuple[Any, ApiResponse | None]:
    """``request.data``, or the 400 (in the import's shape) when the multipart body cannot be parsed."""
    try:
        return request.data, None
    except ParseError as error:
        return None, import_input_rejected({"detail": [str(error.detail)]})
    except SuspiciousOperation as error:  # more files or fields than DATA_UPLOAD_MAX_NUMBER_* allow
        return None, import_input_rejected({"detail": [str(error)]})


class StudyImportApi(APIView):
    """POST multipart: `format`, one or more `files`, optional `question`. All-or-nothing."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(responses=StudyImportOutputSerializer(many=True))
    def get(self, request: Request, study_id: int) -> ApiResponse:
        study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
        return ApiResponse(StudyImportOutputSerializer(study_imports(study=study), many=True).data)

    @extend_schema(
        request=StudyImportInputSerializer,
        responses={201: StudyImportOutputSerializer, 400: OpenApiResponse(ImportProblemSerializer)},
    )
    def post(self, request: Request, study_id: int) -> ApiResponse:
        study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
        body, refused = upload_data(request)
        if refused is not None:
            return refused
        data = {
            "format": body.get("format"),
            "files": request.FILES.getlist("files"),
            "question": body.get("question", ""),
        }
        serializer = StudyImportInputSerializer(data=data)
        if not serializer.is_valid():
            return import_input_rejected(serializer.errors)
        files = [ImportFile(name=f.name, data=f.read()) for f in serializer.validated_data["files"]]
        try:
            record = study_import(
                study=study,
                format=serializer.validated_data["format"],
                files=files,
                user=authenticated_user(request),
                question=serializer.validated_data["question"] or None,
            )
        except ImportRejected as rejected:
            problems = [vars(problem) for problem in rejected.problems]
            detail = "the import was rejected and nothing was changed"
            return ApiResponse({"detail": detail, "problems": problems}, status=status.HTTP_400_BAD_REQUEST)
        return ApiResponse(StudyImportOutputSerializer(record).data, status=status.HTTP_201_CREATED)

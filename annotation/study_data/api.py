"""REST API of the data round trip. Owners only; anyone else gets 404, as for every study endpoint.

- ``GET /api/studies/<id>/contexts/?format=jsonl|csv``: the contexts file to run systems on (the same bytes
  as the study page's link); without ``format`` the rows as paginated JSON.
- ``POST /api/studies/<id>/imports/``: as before for small uploads (201 with the import); an upload over
  ``DIALEVAL_IMPORT_INLINE_MAX_BYTES`` is queued for a worker: 202 with the job, to follow at
  ``GET /api/studies/<id>/import-jobs/<job>/``.
- ``GET`` / ``DELETE /api/studies/<id>/imports/<import>/``: the import with what undoing it deletes, leaves
  and cannot restore; DELETE undoes it (409 with the reason when it cannot be undone).
- ``GET`` / ``DELETE /api/studies/<id>/systems/<system>/``: the system with what deleting it removes; DELETE
  deletes it with its replies and scores.

A DELETE may carry ``?fingerprint=`` from the GET: then it is refused (409, nothing deleted) when what
would go has changed in between.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.exports.api import CsvRenderer, JsonLinesRenderer
from annotation.exports.files import CONTENT_TYPES, encoded
from annotation.importers import IMPORT_FORMATS, ImportRejected
from annotation.models import ImportJob, Study, StudyImport, System
from annotation.selectors.contexts_download import (
    CONTEXT_COLUMNS,
    context_rows,
    contexts_file_chunks,
    contexts_filename,
)
from annotation.selectors.import_jobs import import_job_view
from annotation.selectors.studies import studies_visible_to, study_imports
from annotation.services.deletion_counts import DeletionPreview, DeletionRefused, counts_lines
from annotation.services.import_jobs import import_upload
from annotation.services.import_undo import import_undo, import_undo_preview
from annotation.services.system_deletion import system_delete, system_deletion_preview
from kernel.http.api_formats import SafeJSONRenderer
from kernel.http.api_input import StrictInputSerializer
from kernel.importing.problems import MAX_PROBLEMS, PROBLEMS_SHOWN
from kernel.permissions import IsResearcher, authenticated_user

FINGERPRINT = OpenApiParameter(
    "fingerprint", str, description="the GET's fingerprint: refuse (409) if what would go has changed since"
)
PreviewSerializer = inline_serializer(
    "DeletionPreview",
    {
        "subject": serializers.CharField(),
        "allowed": serializers.BooleanField(),
        "counts": serializers.DictField(child=serializers.IntegerField(), help_text="model label -> rows"),
        "lines": serializers.ListField(child=serializers.CharField(), help_text="the counts in words"),
        "notes": serializers.ListField(child=serializers.CharField(), help_text="what stays, what is lost"),
        "refusals": serializers.ListField(child=serializers.CharField(), help_text="why it cannot be done"),
        "fingerprint": serializers.CharField(),
    },
)
DeletedSerializer = inline_serializer(
    "Deleted",
    {
        "deleted": serializers.DictField(child=serializers.IntegerField()),
        "lines": serializers.ListField(child=serializers.CharField()),
    },
)
JobSerializer = inline_serializer(
    "ImportJob",
    {
        "id": serializers.IntegerField(),
        "status": serializers.CharField(help_text="pending, running, succeeded or failed"),
        "status_label": serializers.CharField(),
        "stage": serializers.CharField(help_text="reading, checking or writing (while running)"),
        "stage_words": serializers.CharField(),
        "done": serializers.IntegerField(),
        "total": serializers.IntegerField(),
        "finished": serializers.BooleanField(),
        "problems": serializers.ListField(
            child=serializers.CharField(),
            help_text="why it was rejected: problems with the same message in the same file and field as one "
            f'entry with their lines ("lines 2, 5, 9–40"), at most {PROBLEMS_SHOWN} entries',
        ),
        "problems_summary": serializers.CharField(
            help_text='how many problems there are in all and how many the entries leave out: "80 problems in '
            'all." or "120 problems in all; 50 of 120 shown, 70 not shown."; "" when none'
        ),
        "problems_truncated": serializers.BooleanField(
            help_text=f"the check stopped after {MAX_PROBLEMS:,} problems, so there may be more"
        ),
        "error": serializers.CharField(),
        "summary": serializers.CharField(help_text="the import's counts in words"),
        "warnings": serializers.ListField(child=serializers.CharField()),
        "import_id": serializers.IntegerField(allow_null=True),
        "url": serializers.CharField(help_text="this resource"),
    },
)


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
            help_text="every problem found, each with its file, line and field",
        ),
        "problems_total": serializers.IntegerField(
            required=False, help_text="how many problems were found (a rejected file's content)"
        ),
        "problems_truncated": serializers.BooleanField(
            required=False,
            help_text=f"the check stopped after {MAX_PROBLEMS:,} problems, so there may be more",
        ),
        "summary": serializers.CharField(required=False, help_text='"80 problems in all."'),
    },
)


def import_rejected_response(rejected: ImportRejected) -> ApiResponse:
    """The 400 of a file whose content was rejected: every problem (not only as many as a page shows, so
    that a client can group or count them its own way), how many, and the sentence a person reads."""
    everything = rejected.report(limit=len(rejected.problems))
    return ApiResponse(
        {
            "detail": "the import was rejected and nothing was changed",
            "problems": [vars(problem) for problem in rejected.problems],
            "problems_total": everything.total,
            "problems_truncated": rejected.truncated,
            "summary": everything.summary,
        },
        status=status.HTTP_400_BAD_REQUEST,
    )


def import_input_rejected(errors: Any, *, file: str = "") -> ApiResponse:
    """The 400 of an upload whose form fields (not its files' content) are wrong, in the import's own
    documented shape ``{detail, problems}``: one problem per field and message."""
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


def _owned_study(request: Request, study_id: int) -> Study:
    return get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)


def _preview_data(preview: DeletionPreview) -> dict[str, Any]:
    return {
        "subject": preview.subject,
        "allowed": preview.allowed,
        "counts": preview.counts,
        "lines": preview.lines,
        "notes": preview.notes,
        "refusals": preview.refusals,
        "fingerprint": preview.fingerprint,
    }


def _deleted(deleted: dict[str, int]) -> ApiResponse:
    return ApiResponse({"deleted": deleted, "lines": counts_lines(deleted)})


def _refused(refused: DeletionRefused) -> ApiResponse:
    return ApiResponse({"detail": refused.message}, status=status.HTTP_409_CONFLICT)


def _job_data(request: Request, job: ImportJob) -> dict[str, Any]:
    url = reverse("api-study-import-job", args=[job.study_id, job.pk])
    return {**import_job_view(job=job).as_json(), "url": request.build_absolute_uri(url)}


class StudyContextsApi(APIView):
    """The study's contexts, to run systems on: ``context_id``, ``turns``, ``references`` per context."""

    permission_classes = [IsResearcher]
    renderer_classes = [SafeJSONRenderer, CsvRenderer, JsonLinesRenderer]

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "csv", "jsonl"])],
        responses={
            (200, "application/json"): inline_serializer(
                "StudyContextsPage",
                {
                    "columns": serializers.ListField(child=serializers.CharField()),
                    "offset": serializers.IntegerField(),
                    "limit": serializers.IntegerField(),
                    "next_offset": serializers.IntegerField(allow_null=True),
                    "results": serializers.ListField(child=serializers.DictField()),
                },
            ),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="turns, references: JSON cells"),
            (200, "application/jsonl"): OpenApiResponse(OpenApiTypes.STR, description="one context a line"),
        },
    )
    def get(self, request: Request, study_id: int) -> ApiResponse | StreamingHttpResponse:
        study = _owned_study(request, study_id)
        fmt = request.accepted_renderer.format
        if fmt in CONTENT_TYPES:
            response = StreamingHttpResponse(
                encoded(contexts_file_chunks(study=study, fmt=fmt)), content_type=CONTENT_TYPES[fmt]
            )
            response["Content-Disposition"] = (
                f'attachment; filename="{contexts_filename(study=study, fmt=fmt)}"'
            )
            return response
        paginator = LimitOffsetPagination()
        limit = paginator.get_limit(request) or 100
        offset = paginator.get_offset(request)
        page = list(islice(context_rows(study=study), offset, offset + limit + 1))
        return ApiResponse(
            {
                "columns": list(CONTEXT_COLUMNS),
                "offset": offset,
                "limit": limit,
                "next_offset": offset + limit if len(page) > limit else None,
                "results": page[:limit],
            }
        )


class StudyImportUploadApi(APIView):
    """POST multipart: ``format``, one or more ``files``, optional ``question``. All-or-nothing; 201 with the
    import when done in the request, 202 with the job when the upload is large enough for a worker."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(responses=StudyImportOutputSerializer(many=True))
    def get(self, request: Request, study_id: int) -> ApiResponse:
        study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
        return ApiResponse(StudyImportOutputSerializer(study_imports(study=study), many=True).data)

    @extend_schema(
        request=StudyImportInputSerializer,
        responses={
            201: StudyImportOutputSerializer,
            202: JobSerializer,
            400: OpenApiResponse(ImportProblemSerializer),
        },
    )
    def post(self, request: Request, study_id: int) -> ApiResponse:
        study = _owned_study(request, study_id)
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
        try:
            outcome = import_upload(
                study=study,
                format=serializer.validated_data["format"],
                uploads=serializer.validated_data["files"],
                user=authenticated_user(request),
                question=serializer.validated_data["question"] or None,
            )
        except ImportRejected as rejected:
            return import_rejected_response(rejected)
        if isinstance(outcome, ImportJob):
            return ApiResponse(_job_data(request, outcome), status=status.HTTP_202_ACCEPTED)
        return ApiResponse(StudyImportOutputSerializer(outcome).data, status=status.HTTP_201_CREATED)


class StudyImportJobApi(APIView):
    """An import a worker runs: status, progress, and its outcome once finished."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=JobSerializer)
    def get(self, request: Request, study_id: int, job_id: int) -> ApiResponse:
        study = _owned_study(request, study_id)
        job = get_object_or_404(ImportJob.objects.select_related("result"), study=study, pk=job_id)
        return ApiResponse(_job_data(request, job))


class StudyImportRecordApi(APIView):
    """One accepted import: GET shows what undoing it deletes; DELETE undoes it."""

    permission_classes = [IsResearcher]

    def _record(self, request: Request, study_id: int, import_id: int) -> tuple[Study, StudyImport]:
        study = _owned_study(request, study_id)
        return study, get_object_or_404(StudyImport, study=study, pk=import_id)

    @extend_schema(
        responses=inline_serializer(
            "StudyImportWithUndo",
            {
                "id": serializers.IntegerField(),
                "format": serializers.CharField(),
                "filenames": serializers.ListField(child=serializers.CharField()),
                "counts": serializers.DictField(child=serializers.IntegerField()),
                "undone_at": serializers.DateTimeField(allow_null=True),
                "undo": PreviewSerializer,
            },
        )
    )
    def get(self, request: Request, study_id: int, import_id: int) -> ApiResponse:
        _, record = self._record(request, study_id, import_id)
        return ApiResponse(
            {
                "id": record.pk,
                "format": record.format,
                "filenames": record.filenames,
                "counts": record.counts,
                "undone_at": record.undone_at,
                "undo": _preview_data(import_undo_preview(record=record)),
            }
        )

    @extend_schema(parameters=[FINGERPRINT], responses={200: DeletedSerializer, 409: OpenApiTypes.OBJECT})
    def delete(self, request: Request, study_id: int, import_id: int) -> ApiResponse:
        study, record = self._record(request, study_id, import_id)
        try:
            deleted = import_undo(
                study=study,
                import_id=record.pk,
                user=authenticated_user(request),
                fingerprint=request.query_params.get("fingerprint") or None,
            )
        except DeletionRefused as refused:
            return _refused(refused)
        return _deleted(deleted)


class StudySystemApi(APIView):
    """One system: GET shows what deleting it removes; DELETE deletes it with its replies and scores."""

    permission_classes = [IsResearcher]

    def _system(self, request: Request, study_id: int, system_id: int) -> tuple[Study, System]:
        study = _owned_study(request, study_id)
        return study, get_object_or_404(System, study=study, pk=system_id)

    @extend_schema(
        responses=inline_serializer(
            "SystemWithDeletion",
            {
                "id": serializers.IntegerField(),
                "name": serializers.CharField(),
                "is_human": serializers.BooleanField(),
                "delete": PreviewSerializer,
            },
        )
    )
    def get(self, request: Request, study_id: int, system_id: int) -> ApiResponse:
        _, system = self._system(request, study_id, system_id)
        preview = system_deletion_preview(system=system)
        return ApiResponse(
            {
                "id": system.pk,
                "name": system.name,
                "is_human": system.is_human,
                "delete": _preview_data(preview),
            }
        )

    @extend_schema(parameters=[FINGERPRINT], responses={200: DeletedSerializer, 409: OpenApiTypes.OBJECT})
    def delete(self, request: Request, study_id: int, system_id: int) -> ApiResponse:
        study, system = self._system(request, study_id, system_id)
        try:
            deleted = system_delete(
                study=study, system_id=system.pk, fingerprint=request.query_params.get("fingerprint") or None
            )
        except DeletionRefused as refused:
            return _refused(refused)
        return _deleted(deleted)

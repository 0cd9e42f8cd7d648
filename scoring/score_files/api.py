"""POST /api/score/: score a small batch of replies without a study (``manage.py score_files`` as a request).

The batch is scored in the request, by the same registry, implementations and signatures as a scoring run;
nothing is stored. It is bounded (``DIALEVAL_SCORE_API_MAX_LINES`` replies, 1,000 by default): a larger set
belongs in a study, scored by the workers.
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.models import Language
from kernel.permissions import IsResearcher
from scoring.models import TokenizerChoice
from scoring.services.file_scoring import FileScoringError, texts_score


class ScoreBatchSerializer(serializers.Serializer):
    replies = serializers.ListField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=10_000),
        allow_empty=False,
        help_text="the replies to score",
    )
    references = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(max_length=10_000), allow_empty=True),
        required=False,
        default=list,
        help_text="per reply, its references (as many lists as replies; [] where a reply has none)",
    )
    contexts = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(max_length=10_000), allow_empty=True),
        required=False,
        default=list,
        help_text="per reply, the turns of its dialog context, oldest first (learned metrics read them)",
    )
    metrics = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    implementation = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    options = serializers.DictField(child=serializers.CharField(max_length=40), required=False, default=dict)
    tokenizer = serializers.ChoiceField(choices=TokenizerChoice.choices, default=TokenizerChoice.DEFAULT)
    language = serializers.ChoiceField(choices=Language.choices, default=Language.ENGLISH)
    models = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    vectors = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)

    def validate(self, attrs: dict) -> dict:
        replies = attrs["replies"]
        limit = int(settings.DIALEVAL_SCORE_API_MAX_LINES)
        if len(replies) > limit:
            raise serializers.ValidationError(
                {"replies": [f"{len(replies)} replies; at most {limit} per request (score a study for more)"]}
            )
        for field in ("references", "contexts"):
            if attrs[field] and len(attrs[field]) != len(replies):
                raise serializers.ValidationError(
                    {field: [f"{len(attrs[field])} lists for {len(replies)} replies: give one per reply"]}
                )
        return attrs


class ScoreBatchApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        request=ScoreBatchSerializer,
        responses={
            200: inline_serializer(
                "ScoredBatch",
                {
                    "lines": serializers.IntegerField(),
                    "signatures": serializers.DictField(child=serializers.CharField()),
                    "implementations": serializers.DictField(child=serializers.CharField()),
                    "corpus": serializers.DictField(child=serializers.DictField()),
                    "sentences": serializers.ListField(child=serializers.DictField()),
                    "notes": serializers.ListField(child=serializers.CharField()),
                },
            )
        },
        description="Scores the replies with the metrics (sentence level and corpus level, with their "
        "signatures), as manage.py score_files does; nothing is stored.",
    )
    def post(self, request: Request) -> ApiResponse:
        serializer = ScoreBatchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        replies = data["replies"]
        try:
            scores = texts_score(
                replies=replies,
                references=data["references"] or [[] for _ in replies],
                contexts=data["contexts"] or [[] for _ in replies],
                metrics=data["metrics"],
                implementation=data["implementation"],
                options=data["options"],
                tokenizer=data["tokenizer"],
                language=data["language"],
                models=data["models"],
                vectors=data["vectors"],
            )
        except FileScoringError as error:
            return ApiResponse({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return ApiResponse(scores.as_dict())

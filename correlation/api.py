"""REST endpoint for a study's correlation report (the same rows as the page and ``study_report``)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from correlation.selectors import studies_reportable_by, study_question_by_name
from correlation.services import correlation_report, correlation_rows_as_dicts, system_level_rows_as_dicts


class _CorrelationFields(serializers.Serializer):
    question = serializers.CharField()
    metric = serializers.CharField(help_text="MetricSignature.name, e.g. bleu-2")
    references = serializers.CharField(help_text='"single" or "multi": the signature\'s "refs" parameter')
    signature = serializers.CharField(help_text="the full signature text that makes the score reproducible")
    n = serializers.IntegerField(help_text="items correlated (responses, or systems at system level)")
    pearson = serializers.FloatField(allow_null=True)
    pearson_p = serializers.FloatField(allow_null=True)
    pearson_ci = serializers.ListField(
        child=serializers.FloatField(allow_null=True),
        min_length=2,
        max_length=2,
        help_text="95% Fisher-z interval",
    )
    spearman = serializers.FloatField(allow_null=True)
    spearman_p = serializers.FloatField(allow_null=True)
    spearman_ci = serializers.ListField(
        child=serializers.FloatField(allow_null=True),
        min_length=2,
        max_length=2,
        help_text="95% Fisher-z interval with the Bonett-Wright variance 1.06/(n-3)",
    )
    note = serializers.CharField(allow_blank=True, help_text="why a statistic is null, e.g. 'too few items'")


class _SystemMeansSerializer(serializers.Serializer):
    system = serializers.CharField()
    human_mean = serializers.FloatField()
    metric_mean = serializers.FloatField()
    n = serializers.IntegerField()


class _SystemLevelRowSerializer(_CorrelationFields):
    systems = _SystemMeansSerializer(many=True)


class StudyCorrelationsOutputSerializer(serializers.Serializer):
    study = serializers.IntegerField()
    question = serializers.CharField(allow_null=True, help_text="the question asked for, or null for all")
    rows = _CorrelationFields(many=True)
    system_level = _SystemLevelRowSerializer(many=True)


class StudyCorrelationsApi(APIView):
    """Metric-vs-human correlations of one study (its owner only; 404 for everyone else)."""

    @extend_schema(
        operation_id="study_correlations",
        parameters=[
            OpenApiParameter("question", str, description="a question name; all questions when left out")
        ],
        responses=StudyCorrelationsOutputSerializer,
    )
    def get(self, request: Request, study_id: int) -> Response:
        study = get_object_or_404(studies_reportable_by(user=request.user), pk=study_id)
        name = request.query_params.get("question") or None
        question = None
        if name is not None:
            question = study_question_by_name(study=study, name=name)
            if question is None:
                raise ValidationError({"question": [f"no question named {name!r} in this study"]})
        report = correlation_report(study=study, question=question)
        payload = {
            "study": study.pk,
            "question": name,
            "rows": correlation_rows_as_dicts(report),
            "system_level": system_level_rows_as_dicts(report),
        }
        return Response(StudyCorrelationsOutputSerializer(payload).data)

"""``GET /api/benchmarks/?studies=1,2&metrics=bleu-2,meteor&statistic=pearson&grouping=context``: the
benchmark table of the requester's studies (404 when any study is not theirs), as ``metric_benchmark
--format json`` prints it."""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from correlation.benchmark.query import OPTION_FIELDS, BenchmarkQuery, benchmark_query_parse
from correlation.benchmark.selectors import BenchmarkInputError, benchmark_for_user
from kernel.http.api_input import StrictInputSerializer
from kernel.permissions import authenticated_user
from stats.benchmark.options import GROUPINGS, STATISTICS


def _interval() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.FloatField(), min_length=2, max_length=2, allow_null=True, help_text="95% interval"
    )


class BenchmarkCellSerializer(serializers.Serializer):
    study = serializers.CharField()
    value = serializers.FloatField(allow_null=True, help_text="null: no value on this study (see note)")
    significant = serializers.BooleanField(help_text="p < 0.05 (the table's label says against what)")
    p_value = serializers.FloatField(allow_null=True, help_text="the flat correlation's test")
    ci = _interval()
    n = serializers.IntegerField(help_text="replies (flat), groups used (grouped) or pairs (accuracy)")
    note = serializers.CharField(allow_blank=True, help_text="why there is no value, e.g. 'not scored'")
    best = serializers.BooleanField(help_text="the best of its study column")


class BenchmarkRowSerializer(serializers.Serializer):
    metric = serializers.CharField(help_text="the metric's display name among the table's (as display)")
    display = serializers.CharField(
        help_text="the metric's name and the parts of its signature that tell it apart from the table's others"
    )
    signature = serializers.CharField(help_text="what matches the metric across studies")
    cells = BenchmarkCellSerializer(many=True)
    mean = serializers.FloatField(allow_null=True)
    mean_rank = serializers.FloatField(allow_null=True, help_text="1: the highest on every study")
    studies = serializers.IntegerField(help_text="studies where the metric has a value")
    best_mean = serializers.BooleanField(help_text="the best mean among the metrics on every study")
    best_rank = serializers.BooleanField(help_text="the best mean rank among the metrics on every study")
    on_every_study = serializers.BooleanField(
        help_text="false: the metric misses a study; it is ranked apart (among every value of its studies) "
        "and never best"
    )


class BenchmarkOutputSerializer(serializers.Serializer):
    statistic = serializers.ChoiceField(choices=STATISTICS)
    grouping = serializers.ChoiceField(choices=GROUPINGS)
    statistic_label = serializers.CharField(help_text="what the table shows, in words")
    options = serializers.DictField()
    studies = serializers.ListField(child=serializers.CharField())
    rows = BenchmarkRowSerializer(many=True)


class _Repeatable(serializers.CharField):
    """A text parameter that may also be repeated (``studies=1,2`` or ``studies=1&studies=2``): every value
    it was sent with, joined by commas. Raw (``trim_whitespace=False``), as the query parser reads it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)

    def get_value(self, dictionary: Any) -> Any:
        if (
            isinstance(dictionary, QueryDict)
            and self.field_name is not None
            and self.field_name in dictionary
        ):
            return ",".join(dictionary.getlist(self.field_name))
        return super().get_value(dictionary)


def _option() -> serializers.CharField:
    """An option as sent (empty: the default); correlation/benchmark/query.py checks it, naming the field."""
    return serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class BenchmarkQuerySerializer(StrictInputSerializer):
    """The query string, read into a :class:`BenchmarkQuery` (``validated_data["query"]``)."""

    # Absent or empty as the parser words it ("name at least one study"), as the page does.
    studies = _Repeatable(required=False, allow_blank=True)
    metrics = _Repeatable(required=False, allow_blank=True)
    statistic = _option()
    grouping = _option()
    question = _option()
    resamples = _option()
    seed = _option()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        try:
            query = benchmark_query_parse(
                studies=[attrs.get("studies") or ""],
                metrics=[attrs.get("metrics") or ""],
                options={name: attrs.get(name) for name in OPTION_FIELDS},
            )
        except BenchmarkInputError as error:
            raise ValidationError({error.field: [error.message]}) from None
        return {"query": query}


class BenchmarkApi(APIView):
    """The benchmark table (a researcher's own studies only; 404 for any other study)."""

    @extend_schema(
        operation_id="metric_benchmark",
        parameters=[
            OpenApiParameter("studies", str, required=True, description="study ids, comma-separated: 1,2,3"),
            OpenApiParameter(
                "metrics", str, description="metric names or signatures, comma-separated (default: all)"
            ),
            OpenApiParameter("statistic", str, enum=list(STATISTICS), description="default pearson"),
            OpenApiParameter(
                "grouping", str, enum=list(GROUPINGS), description="correlations only; default none"
            ),
            OpenApiParameter("question", str, description="a question every study has (default: each first)"),
            OpenApiParameter("resamples", int, description="bootstrap resamples of the intervals (0: none)"),
            OpenApiParameter("seed", int, description="seed of the bootstrap resamples"),
        ],
        responses=BenchmarkOutputSerializer,
    )
    def get(self, request: Request) -> Response:
        serializer = BenchmarkQuerySerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        query: BenchmarkQuery = serializer.validated_data["query"]
        try:
            table = benchmark_for_user(
                user=authenticated_user(request),
                study_ids=query.study_ids,
                options=query.options,
                metrics=query.metrics,
                question=query.question,
            )
        except BenchmarkInputError as error:
            raise ValidationError({error.field: [error.message]}) from None
        if table is None:
            raise NotFound("No such study.")
        return Response(table.as_dict())

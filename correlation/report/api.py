"""REST endpoint for a study's correlation report: the same document as ``study_report --format json``."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from correlation.report.served import served_report, stale_asked
from correlation.selectors import studies_reportable_by, study_question_by_name
from stats.report.document import document_for_question, report_document_from_json
from stats.report.types import OptionError, ReportOptions


def _interval(help_text: str) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.FloatField(allow_null=True), min_length=2, max_length=2, help_text=help_text
    )


class _RowSerializer(serializers.Serializer):
    question = serializers.CharField()
    metric = serializers.CharField(help_text="MetricSignature.name, e.g. bleu-2")
    references = serializers.CharField(
        help_text='"single", "multi", or "none" for a metric that reads no reference'
    )
    signature = serializers.CharField(help_text="the full signature text that makes the score reproducible")
    group = serializers.CharField(
        help_text="row block of the paper-style table: Referenced, Unreferenced, Hybrid, LLM judge, Other"
    )
    n = serializers.IntegerField(help_text="replies correlated (with a human score and a metric value)")
    pearson = serializers.FloatField(allow_null=True)
    pearson_p = serializers.FloatField(allow_null=True)
    pearson_ci = _interval("95% Fisher-z interval")
    pearson_ci_bootstrap = _interval("95% percentile interval, paired bootstrap of replies")
    spearman = serializers.FloatField(allow_null=True)
    spearman_p = serializers.FloatField(allow_null=True)
    spearman_ci = _interval("95% Fisher-z interval, Bonett-Wright variance 1.06/(n-3)")
    spearman_ci_bootstrap = _interval("95% percentile interval, paired bootstrap")
    kendall = serializers.FloatField(allow_null=True, help_text="Kendall's tau-b")
    kendall_p = serializers.FloatField(allow_null=True)
    kendall_ci = _interval("95% Fisher-z interval, variance 0.437/(n-4)")
    left_out = serializers.DictField(child=serializers.IntegerField(), help_text="{no_metric_score: replies}")
    note = serializers.CharField(allow_blank=True, help_text="why a statistic is null, e.g. 'too few items'")
    rank = serializers.IntegerField(
        allow_null=True,
        required=False,
        help_text="significance cluster (1 = best); see significance_clusters",
    )
    grouped = serializers.DictField(
        required=False,
        help_text="with ?grouping=context or system: Pearson, Spearman, Kendall within each group averaged over "
        "groups, their bootstrap intervals over groups, groups used and left out, note",
    )
    judge = serializers.DictField(
        required=False,
        help_text="an LLM judge's only: template, model, the question it asked (own_question: this row's), read, "
        "label_mass (its model's mean probability on the scale's labels), label_mass_replies, note",
    )
    display = serializers.CharField(
        required=False,
        help_text="the metric's display name: its name and the parts of its signature that tell it apart from "
        "the report's other metrics (e.g. 'bleu-1 (nlg-eval)'), as the page, figures and exports show it; "
        "every entry naming a metric has one (first_display, second_display in metric_comparisons)",
    )


class StudyReportOutputSerializer(serializers.Serializer):
    """The report document (docs/report.md describes every section)."""

    document_version = serializers.IntegerField()
    study = serializers.IntegerField()
    study_name = serializers.CharField()
    question = serializers.CharField(allow_null=True, help_text="the question asked for, or null for all")
    data_version = serializers.IntegerField(help_text="the study's data version the report was computed at")
    code_version = serializers.CharField()
    options = serializers.DictField(help_text="filter, normalise, resamples, seed, grouping")
    questions = serializers.ListField(
        child=serializers.DictField(), help_text="replies, human-scored, left out"
    )
    filter = serializers.ListField(
        child=serializers.DictField(), help_text="per question: the rater filter and what it removed"
    )
    human = serializers.ListField(child=serializers.DictField(), help_text="Human (Avg) and Human (Max) rows")
    agreement = serializers.ListField(
        child=serializers.DictField(), help_text="per question: alpha, Fleiss, ICC, Cohen, per rater"
    )
    rows = _RowSerializer(many=True)
    per_system = serializers.ListField(child=serializers.DictField())
    metric_comparisons = serializers.ListField(
        child=serializers.DictField(),
        help_text="per pair of metrics: Williams and bootstrap p; PERM-BOTH and PERM-INPUTS p (perm_both_p, "
        "perm_inputs_p) with the two statistics they compared (first_statistic, second_statistic: "
        "permutation_statistic of each metric on the replies both scored)",
    )
    system_level = serializers.ListField(child=serializers.DictField())
    quantiles = serializers.ListField(child=serializers.DictField())
    references_curve = serializers.ListField(child=serializers.DictField())
    single_vs_multi = serializers.ListField(child=serializers.DictField())
    diversity = serializers.DictField(allow_null=True)
    pairwise = serializers.DictField(
        allow_null=True,
        required=False,
        help_text="pairwise judgments (null without any): the systems' win rates with Wilson intervals, the win-rate "
        "matrix, position, the metrics against the win rates, and judges: each pairwise LLM judge's win rates "
        "beside the people's, Spearman across systems, agreement on the same pairs (share, kappa), position "
        "bias, consistency and ties",
    )
    notes = serializers.ListField(child=serializers.CharField())
    pairwise_accuracy = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="per metric: accuracy of system pairs (Kocmi et al.) and acc_eq within contexts with tie "
        "calibration (epsilon), with bootstrap intervals",
    )
    significance_clusters = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="per question: how the rows' rank was assigned (statistic, test, rule: 'any' is the WMT "
        "metrics task's, mt-metrics-eval's AssignRanks; rule_description says it in words)",
    )
    metric_names = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="the legend of the display names: signature, metric, detail (the distinguishing parts), display",
    )
    more_ratings = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="per question: how many more ratings, in sentences",
    )


class ReportPendingSerializer(serializers.Serializer):
    """A report a worker is computing (202), or one that failed and was queued again (503)."""

    detail = serializers.CharField()
    status = serializers.CharField(help_text="pending, running or failed")
    progress = serializers.IntegerField(required=False, help_text="percent of the build done")
    stage = serializers.CharField(required=False, allow_blank=True, help_text="what the worker is computing")
    data_version = serializers.IntegerField(help_text="the study's data version the report is computed for")
    stale_available = serializers.BooleanField(
        required=False, help_text="an older report can be had with stale=ok"
    )
    location = serializers.CharField(
        required=False, help_text="where to ask again (also the Location header)"
    )


class StudyCorrelationsApi(APIView):
    """The correlation report of one study (its owner only; 404 for everyone else)."""

    @extend_schema(
        operation_id="study_correlations",
        parameters=[
            OpenApiParameter("question", str, description="a question name; all questions when left out"),
            OpenApiParameter(
                "filter", str, description='"study" (default), "none", or a kappa threshold such as 0.3'
            ),
            OpenApiParameter("normalise", str, description='"none" (default) or "z" (per-rater z-scores)'),
            OpenApiParameter("resamples", int, description="bootstrap resamples (default 1000; 0 for none)"),
            OpenApiParameter("seed", int, description="seed of the bootstrap resamples"),
            OpenApiParameter(
                "grouping",
                str,
                description='grouped correlations: "none" (default), "context" (item-grouped) or "system"',
            ),
            OpenApiParameter(
                "stale",
                str,
                description='"ok": while the report of the current data is computed, the newest older report '
                "(200, header X-Report-Stale: true) instead of 202",
            ),
        ],
        responses={
            200: StudyReportOutputSerializer,
            202: OpenApiResponse(
                ReportPendingSerializer,
                description="The report of the current data is being computed by a worker (never in the request): "
                "ask again at Location after Retry-After seconds.",
            ),
            503: OpenApiResponse(
                ReportPendingSerializer,
                description="The report could not be computed; it has been queued again (Retry-After).",
            ),
        },
    )
    def get(self, request: Request, study_id: int) -> Response:
        study = get_object_or_404(studies_reportable_by(user=request.user), pk=study_id)
        name = request.query_params.get("question") or None
        if name is not None and study_question_by_name(study=study, name=name) is None:
            raise ValidationError({"question": [f"no question named {name!r} in this study"]})
        try:
            options = ReportOptions.parse(request.query_params)
        except OptionError as error:
            field, _, message = str(error).partition(": ")
            raise ValidationError({field: [message]}) from None
        served = served_report(
            study=study,
            options=options,
            stale_ok=stale_asked(request.query_params),
            location=request.get_full_path(),
        )
        if served.snapshot is None:
            return Response(served.body, status=served.status, headers=served.headers)
        document = report_document_from_json(served.snapshot.document)
        return Response(document_for_question(document, name), headers=served.headers)

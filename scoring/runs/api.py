"""REST API for scoring runs, the metrics they can compute and the scores they stored. The trained models
learned metrics use are scoring/training/api.py."""

from __future__ import annotations

from collections.abc import Mapping

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.selectors.studies import studies_visible_to
from kernel.http.api_input import StrictInputSerializer
from kernel.permissions import IsResearcher, authenticated_user
from scoring.judges.serializers import JudgeRequestSerializer, JudgeUsageSerializer, judge_request
from scoring.judges.usage import JudgeUsage, judge_usage_for_run, judge_usage_for_runs
from scoring.metrics.registry import (
    available_metric_names,
    available_system_metric_names,
    metric_spec,
    system_metric_spec,
)
from scoring.metrics.spec import DEFAULT_IMPLEMENTATION
from scoring.models import MetricScore, ReferencesMode, RunStatus, ScoringRun, TokenizerChoice
from scoring.selectors import (
    RunProgress,
    metric_scores_for_study,
    scoring_run_progress,
    scoring_run_summary,
    scoring_run_waiting_text,
    scoring_runs_for_study,
)
from scoring.services import JudgeChoiceError, ScoringRequestError, scoring_run_cancel, scoring_run_create


class ScoringRunSerializer(serializers.ModelSerializer):
    progress_done = serializers.SerializerMethodField(
        help_text="scores computed so far (reply x metric, system x metric), running chunks included"
    )
    progress_percent = serializers.SerializerMethodField()
    progress_unit = serializers.SerializerMethodField(help_text='what progress counts: "scores"')
    scope = serializers.SerializerMethodField(
        help_text='what the run covers, in replies (not scores): {"replies", "metrics", "system_metrics", '
        '"text": "300 replies × 2 metrics"}'
    )
    rate_per_second = serializers.SerializerMethodField(
        help_text="scores per second since the run's first chunk started; null until a few chunks are done"
    )
    eta_seconds = serializers.SerializerMethodField(
        help_text="seconds left at the measured rate; null until a few chunks are done"
    )
    eta_text = serializers.SerializerMethodField(
        help_text='the time left as the study page shows it: "about 7 min left", "estimating…" before there '
        'is a rate to go by, "" once the run is not running'
    )
    chunks = serializers.SerializerMethodField(help_text="the run's chunks, counted per status")
    existing = serializers.SerializerMethodField(
        help_text="true when an identical run was already pending or running and is returned instead"
    )
    trained_models = serializers.SerializerMethodField(
        help_text="the trained models of the learned metrics, by kind: name and content hash (a model still "
        "being trained: its name and training_job, no hash yet)"
    )
    waiting = serializers.SerializerMethodField(
        help_text='while the run waits for a model being trained: "waiting for model X, epoch 3/10"; else ""'
    )
    judge_usage = serializers.SerializerMethodField(
        help_text="what its LLM judges' endpoints cost: the answers it paid for (answers from the cache cost "
        "nothing; a local model sends no request), the requests sent for them and their tokens"
    )

    class Meta:
        model = ScoringRun
        fields = [
            "id", "study", "metrics", "references", "tokenizer", "implementation", "implementations", "options",
            "vectors", "recompute", "trained_models", "status",
            "waiting_for", "waiting", "progress_done", "progress_total", "progress_percent", "progress_unit", "rate_per_second",
            "eta_seconds", "eta_text", "chunks", "error", "notes", "failures", "timings", "attempts", "existing",
            "created_at", "started_at", "finished_at", "scope", "judge_usage",
        ]  # fmt: skip

    def _progress(self, run: ScoringRun) -> RunProgress:
        cache = self.context.setdefault("progress", {})
        if run.pk not in cache:
            cache[run.pk] = scoring_run_progress(run=run)
        return cache[run.pk]

    def get_progress_done(self, run: ScoringRun) -> int:
        return self._progress(run).done

    def get_progress_percent(self, run: ScoringRun) -> int:
        return 100 if run.status == RunStatus.SUCCEEDED else self._progress(run).percent

    def get_progress_unit(self, run: ScoringRun) -> str:
        return "scores"

    @extend_schema_field(serializers.DictField())
    def get_scope(self, run: ScoringRun) -> dict[str, object]:
        replies = self.context.setdefault("replies", {})  # one count per study, however many runs
        if run.study_id not in replies:
            replies[run.study_id] = scoring_run_summary(run=run).replies
        summary = scoring_run_summary(run=run, replies=replies[run.study_id])
        return {
            "replies": summary.replies,
            "metrics": summary.metrics,
            "system_metrics": summary.system_metrics,
            "text": summary.text,
        }

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_rate_per_second(self, run: ScoringRun) -> float | None:
        return self._progress(run).rate_per_second

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_eta_seconds(self, run: ScoringRun) -> float | None:
        return self._progress(run).eta_seconds

    def get_eta_text(self, run: ScoringRun) -> str:
        return self._progress(run).eta_text

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_chunks(self, run: ScoringRun) -> dict[str, int]:
        return self._progress(run).chunks

    def get_existing(self, run: ScoringRun) -> bool:
        return run.was_existing

    @extend_schema_field(serializers.DictField(child=serializers.DictField(child=serializers.CharField())))
    def get_trained_models(self, run: ScoringRun) -> dict[str, dict[str, str]]:
        # the artifact's path on the server is not the client's business
        shown = {}
        for kind, model in run.trained_models.items():
            if "hash" in model:
                shown[kind] = {"name": str(model["name"]), "hash": str(model["hash"])}
            else:  # waiting for the training job that makes it
                shown[kind] = {"name": str(model["name"]), "training_job": str(model.get("training_job", ""))}
        return shown

    def get_waiting(self, run: ScoringRun) -> str:
        return scoring_run_waiting_text(run=run)

    @extend_schema_field(JudgeUsageSerializer)
    def get_judge_usage(self, run: ScoringRun) -> dict[str, int]:
        known: dict[int, JudgeUsage] = self.context.get("judge_usage", {})  # a list's, in one query
        usage = known[run.pk] if run.pk in known else judge_usage_for_run(run_id=run.pk)
        return usage.as_dict()


class ScoringRunCreateSerializer(StrictInputSerializer):
    metrics = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        default=list,
        help_text="metric names (GET /api/metrics/), or ['all']; may be empty when the run asks for judges",
    )
    judges = JudgeRequestSerializer(
        many=True,
        required=False,
        default=list,
        help_text="LLM judges: each scores every reply on each of its questions with its prompt template, as "
        "the metrics llm-judge:<key> (the score) and llm-judge-mass:<key> (the probability on valid labels)",
    )
    references = serializers.ChoiceField(choices=ReferencesMode.choices, default=ReferencesMode.MULTI)
    tokenizer = serializers.ChoiceField(
        choices=TokenizerChoice.choices,
        default=TokenizerChoice.DEFAULT,
        help_text="how the metrics that tokenize split text: 'default', the study language's tokenizer "
        "(en-v1, zh-jieba), or 'none', whitespace split with no other change, for pre-tokenized text "
        "(signature tok:none, as sacrebleu's tokenize='none'); learned metrics keep their model's tokenizer",
        error_messages={
            "invalid_choice": f'"{{input}}" is not a tokenizer; choose one of {", ".join(TokenizerChoice.values)}'
        },
    )
    models = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        default=list,
        help_text="trained models (by name) for the learned metrics; default: the study's, else the default",
    )
    recompute = serializers.BooleanField(
        default=False,
        help_text="score every reply again; by default only replies without a score of the run's signatures",
    )
    implementation = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=200,
        help_text="the tools that compute the word-overlap and embedding baselines, named in every signature "
        "(impl:): '' each metric's default (nltk's formulas), one of nltk, nlg-eval, sacrebleu, rouge-score "
        "for every family, or per family, e.g. 'bleu=sacrebleu,meteor=nlg-eval'. Under it, 'all' means the "
        "metrics that implementation has (and every metric computed one way only)",
    )
    options = serializers.DictField(
        child=serializers.CharField(max_length=40),
        required=False,
        default=dict,
        help_text="parameters of the chosen implementations, e.g. {'tok': 'intl', 'smooth': 'floor'} for "
        "sacrebleu, {'stem': 'yes'} for rouge-score, {'oov': 'mean'} for the embedding metrics",
    )
    vectors = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=100,
        help_text="registered word vectors (GET /api/word-vectors/) for the embedding metrics; '' GloVe 6B 50d",
    )


class MetricScoreSerializer(serializers.ModelSerializer):
    response_id = serializers.IntegerField()
    context_id = serializers.CharField(source="response.context.external_id")
    system = serializers.CharField(source="response.system.name")
    metric = serializers.CharField(source="signature.name")
    references = serializers.CharField(source="signature.references_mode")
    signature = serializers.CharField(source="signature.text")
    implementation = serializers.CharField(
        source="signature.implementation",
        help_text="the tool that computed the score: nltk, nlg-eval, sacrebleu, rouge-score (impl: in the "
        "signature); dialeval for the project's own metrics; external; plugin:<distribution>@<version>",
    )

    class Meta:
        model = MetricScore
        fields = [
            "response_id", "context_id", "system", "metric", "references", "signature", "implementation", "value",
        ]  # fmt: skip


class MetricListApi(APIView):
    @extend_schema(
        responses=inline_serializer(
            "Metric",
            {
                "name": serializers.CharField(),
                "description": serializers.CharField(),
                "needs_references": serializers.BooleanField(),
                "needs_model": serializers.CharField(help_text="the kind of trained model it needs, or ''"),
                "level": serializers.CharField(help_text="'response' (a score per response) or 'system'"),
                "family": serializers.CharField(
                    help_text="the name a run's per-family implementation choice uses ('' : none)"
                ),
                "implementations": serializers.ListField(
                    child=serializers.CharField(),
                    help_text="the tools that can compute it, its default first ([] : computed one way only)",
                ),
            },
            many=True,
        )
    )
    def get(self, request: Request) -> ApiResponse:
        rows = []
        for name in available_metric_names():
            spec = metric_spec(name)
            rows.append(
                {
                    "name": name,
                    "description": spec.description,
                    "needs_references": spec.needs_references,
                    "needs_model": spec.model_kind,
                    "level": "response",
                    "family": spec.group_name if spec.implementations else "",
                    "implementations": _ordered_implementations(spec.implementations),
                }
            )
        for name in available_system_metric_names():
            system_spec = system_metric_spec(name)
            rows.append(
                {
                    "name": name,
                    "description": system_spec.description,
                    "needs_references": system_spec.needs_references,
                    "needs_model": "",
                    "level": "system",
                    "family": system_spec.group_name if system_spec.implementations else "",
                    "implementations": _ordered_implementations(system_spec.implementations),
                }
            )
        return ApiResponse(rows)


class StudyScoringRunsApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=ScoringRunSerializer(many=True))
    def get(self, request: Request, study_id: int) -> ApiResponse:
        study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
        runs = list(scoring_runs_for_study(study=study))
        context = {"judge_usage": judge_usage_for_runs(run_ids=[run.pk for run in runs])}
        return ApiResponse(ScoringRunSerializer(runs, many=True, context=context).data)

    @extend_schema(
        request=ScoringRunCreateSerializer,
        responses={202: ScoringRunSerializer, 200: ScoringRunSerializer},
        description="Creates a run (202), or returns the identical run already pending or running (200, "
        '"existing": true). A run created while the task broker is down stays pending, says so in "notes", '
        "and starts once the broker is back. A run whose learned metric needs a model that a training job is still "
        'making waits for it: pending, with "waiting_for" (the job) and "waiting" ("waiting for model X, epoch '
        '3/10"); the success of the job sends it, its failure fails it.',
    )
    def post(self, request: Request, study_id: int) -> ApiResponse:
        study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
        serializer = ScoringRunCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        values = dict(serializer.validated_data)
        judges = [judge_request(judge) for judge in values.pop("judges", [])]
        try:
            run = scoring_run_create(study=study, user=authenticated_user(request), judges=judges, **values)
        except (
            JudgeChoiceError
        ) as error:  # under the judge's index and field, as DRF nests the shape's errors
            problem = {error.field or "non_field_errors": [error.detail]}
            return ApiResponse({"judges": {str(error.index): problem}}, status=status.HTTP_400_BAD_REQUEST)
        except ScoringRequestError as error:
            return ApiResponse({_error_field(str(error)): [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        # The send after commit may have written the run's notes (BROKER_DOWN_NOTE while Redis is down).
        run.refresh_from_db(fields=["status", "notes", "enqueued_at"])
        code = status.HTTP_200_OK if run.was_existing else status.HTTP_202_ACCEPTED
        return ApiResponse(ScoringRunSerializer(run).data, status=code)


def _error_field(message: str) -> str:
    """The request field a run-creation error is about (its message starts with the field's name)."""
    for field in ("implementation", "option", "vectors"):
        if message.startswith(field):
            return "options" if field == "option" else field
    return "metrics"


def _ordered_implementations(implementations: Mapping[str, object]) -> list[str]:
    """Implementation names with the default (nltk where there is one) first."""
    return sorted(implementations, key=lambda name: name != DEFAULT_IMPLEMENTATION)


def _visible_run(request: Request, run_id: int) -> ScoringRun:
    visible = ScoringRun.objects.filter(
        study__in=studies_visible_to(user=authenticated_user(request))
    ).select_related("waiting_for")
    return get_object_or_404(visible, pk=run_id)


class ScoringRunDetailApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=ScoringRunSerializer)
    def get(self, request: Request, run_id: int) -> ApiResponse:
        return ApiResponse(ScoringRunSerializer(_visible_run(request, run_id)).data)


class ScoringRunCancelApi(APIView):
    """Cancel a pending or running run: unfinished chunks stop at their next heartbeat; finished chunks'
    scores stay. 409 when the run had already ended."""

    permission_classes = [IsResearcher]

    @extend_schema(request=None, responses={200: ScoringRunSerializer, 409: ScoringRunSerializer})
    def post(self, request: Request, run_id: int) -> ApiResponse:
        run = _visible_run(request, run_id)
        cancelled = scoring_run_cancel(run=run, user=authenticated_user(request))
        code = status.HTTP_200_OK if cancelled else status.HTTP_409_CONFLICT
        return ApiResponse(ScoringRunSerializer(run).data, status=code)


class PageQuerySerializer(StrictInputSerializer):
    """?limit=&offset= of a paginated list, checked (DRF's paginator would ignore a bad value)."""

    limit = serializers.IntegerField(
        required=False, min_value=1, max_value=10_000, help_text="rows per page (100)"
    )
    offset = serializers.IntegerField(required=False, min_value=0, max_value=2**62, help_text="the first row")


class StudyScoresApi(APIView):
    """Stored metric scores of a study, paginated (?limit=&offset=), optionally ?metric=bleu-2."""

    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            OpenApiParameter("metric", str, description="only this metric's scores (e.g. bleu-2)"),
            PageQuerySerializer,
        ],
        responses=inline_serializer(
            "PaginatedMetricScoreList",
            {
                "count": serializers.IntegerField(),
                "next": serializers.URLField(allow_null=True),
                "previous": serializers.URLField(allow_null=True),
                "results": MetricScoreSerializer(many=True),
            },
        ),
    )
    def get(self, request: Request, study_id: int) -> ApiResponse:
        study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
        scores = metric_scores_for_study(study=study).order_by("response_id", "signature__text")
        PageQuerySerializer(data=request.query_params).is_valid(raise_exception=True)
        metric = request.query_params.get("metric")
        if metric:
            scores = scores.filter(signature__name=metric)
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(scores, request, view=self)
        return paginator.get_paginated_response(MetricScoreSerializer(page, many=True).data)

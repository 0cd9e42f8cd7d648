"""The API's shapes of a judge's preview (its prompt, its reading) and of an estimate, before a run starts
(scoring/judges/preview_api.py)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from scoring.judges.definitions import JudgeRequest
from scoring.judges.serializers import JudgeFields, JudgeModelFields, judge_request
from scoring.metrics.llm_judge.definition import JudgeDefinition
from scoring.models import PreviewStatus, ReferencesMode


class JudgePreviewInputSerializer(JudgeFields):
    """One judge on one question and one reply of the study."""

    question = serializers.CharField(
        max_length=60, allow_blank=True, default="", help_text="the question (by name); '' the study's first"
    )
    position = serializers.IntegerField(
        min_value=1, max_value=2**31 - 1, default=1, help_text="the reply's number, 1 the first (by id)"
    )
    references = serializers.ChoiceField(choices=ReferencesMode.choices, default=ReferencesMode.MULTI)


class JudgeEstimateQuerySerializer(JudgeModelFields):
    template = serializers.ListField(
        child=serializers.CharField(max_length=60),
        min_length=1,
        max_length=20,
        help_text="the templates (repeat the parameter for several); one judge per template and question",
    )
    question = serializers.ListField(
        child=serializers.CharField(max_length=60),
        required=False,
        default=list,
        max_length=100,
        help_text="the questions (repeatable); none: every question of the study",
    )
    references = serializers.ChoiceField(choices=ReferencesMode.choices, default=ReferencesMode.MULTI)

    def judge_requests(self) -> list[JudgeRequest]:
        data = self.validated_data
        return [
            judge_request({**data, "template": template, "questions": data.get("question") or ()})
            for template in data["template"]
        ]


class JudgeItemSerializer(serializers.Serializer):
    context = serializers.ListField(  # type: ignore[assignment]  # a field: DRF's metaclass takes it off the class
        child=serializers.CharField(), help_text="the turns, oldest first"
    )
    reply = serializers.CharField()
    references = serializers.ListField(child=serializers.CharField())


class JudgePromptSerializer(serializers.Serializer):
    judge = serializers.CharField(help_text="the metric the judge scores as in a run: llm-judge:<key>")
    template = serializers.CharField()
    question = serializers.CharField()
    backend = serializers.CharField()
    model = serializers.CharField()
    read = serializers.CharField()
    position = serializers.IntegerField(help_text="the reply's number in the study, 1 the first")
    replies = serializers.IntegerField(help_text="the study's replies")
    response_id = serializers.IntegerField()
    item = JudgeItemSerializer()
    system = serializers.CharField()
    user = serializers.CharField()
    answer_prefix = serializers.CharField()
    formatted = serializers.CharField(
        allow_null=True,
        help_text="the text the model reads, where it is known without the model (an endpoint's completions "
        "API); null for a local model (it comes with the reading) or a chat API (the server formats it)",
    )
    formatted_note = serializers.CharField()


class JudgeReadingSerializer(serializers.Serializer):
    labels = serializers.ListField(child=serializers.CharField(), help_text="what the judge answers with")
    points = serializers.ListField(
        child=serializers.FloatField(), help_text="each label's point of the scale"
    )
    probabilities = serializers.ListField(
        child=serializers.FloatField(), help_text="each label's probability, renormalised to sum to 1"
    )
    expected = serializers.FloatField(allow_null=True, help_text="the expectation over the labels' points")
    likeliest = serializers.FloatField(allow_null=True, help_text="the point of the most likely label")
    mass = serializers.FloatField(help_text="the probability the model put on valid labels (0 to 1)")
    read = serializers.CharField()
    score = serializers.FloatField(allow_null=True, help_text="what a run stores: expected or likeliest")
    formatted = serializers.CharField(allow_null=True, help_text="the text the model read")
    formatted_note = serializers.CharField()
    usage = serializers.DictField(
        allow_null=True, child=serializers.IntegerField(), help_text="an endpoint's request: tokens"
    )
    seconds = serializers.FloatField()


class JudgePreviewSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=PreviewStatus.choices)
    study = serializers.IntegerField(source="study_id")
    position = serializers.IntegerField()
    response_id = serializers.IntegerField(allow_null=True)
    judge = serializers.SerializerMethodField(help_text="llm-judge:<key>")
    url = serializers.SerializerMethodField(help_text="where to follow it")
    reading = serializers.SerializerMethodField()
    error = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_url(self, preview: Any) -> str:
        return reverse("api-judge-preview-detail", args=[preview.pk])

    def get_judge(self, preview: Any) -> str:
        return JudgeDefinition.from_json(preview.definition).metric_name

    @extend_schema_field(JudgeReadingSerializer(allow_null=True))
    def get_reading(self, preview: Any) -> dict[str, Any] | None:
        return dict(preview.result) if preview.status == PreviewStatus.DONE else None


class JudgeEstimateSerializer(serializers.Serializer):
    replies = serializers.IntegerField()
    judges = serializers.IntegerField(help_text="templates × questions")
    local_passes = serializers.IntegerField(
        help_text="forward passes of local models (one per reply and judge)"
    )
    server_requests = serializers.IntegerField(help_text="requests to endpoints, cached answers included")
    cached = serializers.IntegerField(
        allow_null=True, help_text="of those, answered from the cache; null: not counted (too many prompts)"
    )
    prompt_tokens = serializers.IntegerField(help_text="estimated tokens of the prompts still to send")
    sampled = serializers.IntegerField(help_text="replies the token estimate was measured on")
    method = serializers.CharField()
    text = serializers.CharField()

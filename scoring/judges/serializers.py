"""The API's shapes of LLM judges: a judge asked for (in a run, a preview, an estimate), a prompt template
and a run's usage. A preview's and an estimate's: scoring/judges/preview_serializers.py."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from kernel.http.api_input import StrictInputSerializer
from scoring.judges.definitions import JudgeRequest
from scoring.metrics.llm_judge.definition import BACKEND_LOCAL, BACKENDS
from scoring.metrics.llm_judge.judging import READ_EXPECTATION, READS
from scoring.metrics.llm_judge.prompts import MAX_TEMPLATE_CHARACTERS

TEMPLATE_HELP = (
    "a shipped template (g-eval, llm-eval, single-answer) or one of yours (GET /api/judge-templates/)"
)
MODEL_HELP = (
    "a local model (backend local) or an endpoint (backend server) by name, as GET /api/judge-models/ lists "
    "them; '' the only one there is"
)


class JudgeModelFields(StrictInputSerializer):
    """Whom a judge asks and what it reads: every judge request has them (a run's, a preview's, an
    estimate's)."""

    backend = serializers.ChoiceField(choices=BACKENDS, default=BACKEND_LOCAL)
    model = serializers.CharField(max_length=100, allow_blank=True, default="", help_text=MODEL_HELP)
    read = serializers.ChoiceField(
        choices=READS,
        default=READ_EXPECTATION,
        help_text="expectation: the probability-weighted mean of the labels' points (G-EVAL); argmax: the "
        "point of the most likely label",
    )


class JudgeFields(JudgeModelFields):
    """A judge of one template (one question or several)."""

    template = serializers.CharField(max_length=60, help_text=TEMPLATE_HELP)


class JudgeRequestSerializer(JudgeFields):
    """A judge a run asks for: one per question of ``questions`` (empty: every question of the study)."""

    questions = serializers.ListField(
        child=serializers.CharField(max_length=60),
        required=False,
        default=list,
        max_length=100,
        help_text="the study's questions to judge (by name); empty: all of them",
    )

    def judge_request(self) -> JudgeRequest:
        return judge_request(self.validated_data)


def judge_request(data: dict[str, Any]) -> JudgeRequest:
    return JudgeRequest(
        template=str(data["template"]),
        backend=str(data.get("backend") or BACKEND_LOCAL),
        model=str(data.get("model") or ""),
        questions=tuple(str(name) for name in data.get("questions") or ()),
        read=str(data.get("read") or READ_EXPECTATION),
    )


class JudgeTemplateInputSerializer(StrictInputSerializer):
    """A template's texts (its name is in the path when it is replaced)."""

    description = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    system = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=MAX_TEMPLATE_CHARACTERS,
        trim_whitespace=False,
    )
    user = serializers.CharField(max_length=MAX_TEMPLATE_CHARACTERS, trim_whitespace=False)
    answer_prefix = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=500, trim_whitespace=False
    )
    pairwise = serializers.BooleanField(required=False, default=False)


class JudgeTemplateCreateSerializer(JudgeTemplateInputSerializer):
    name = serializers.SlugField(max_length=60, help_text="unique among your templates; not a shipped one's")


class JudgeTemplateSerializer(serializers.Serializer):
    name = serializers.CharField()
    shipped = serializers.BooleanField(help_text="a shipped recipe (read-only: copy it to edit it)")
    description = serializers.CharField()
    system = serializers.CharField()
    user = serializers.CharField()
    answer_prefix = serializers.CharField()
    pairwise = serializers.BooleanField()
    content_hash = serializers.CharField(help_text="what the signatures of a judge's scores record")
    updated_at = serializers.DateTimeField(allow_null=True)


def template_data(entry: Any) -> dict[str, Any]:
    """A :class:`~scoring.judges.templates.TemplateEntry` as :class:`JudgeTemplateSerializer` reads it."""
    template = entry.template
    return {
        "name": template.name,
        "shipped": entry.shipped,
        "description": template.description,
        "system": template.system,
        "user": template.user,
        "answer_prefix": template.answer_prefix,
        "pairwise": template.pairwise,
        "content_hash": template.content_hash(),
        "updated_at": entry.updated_at,
    }


class JudgeUsageSerializer(serializers.Serializer):
    answers = serializers.IntegerField(help_text="endpoints' answers the run paid for (not cached ones)")
    requests = serializers.IntegerField(help_text="requests sent for them, retries included")
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()

"""The tables of LLM judges: researchers' prompt templates, the judges runs asked for, and the answers of
servers (kept so that a rerun or a chunk computed again asks no server twice). Imported by
:mod:`scoring.models`."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class JudgeTemplate(models.Model):
    """A researcher's prompt template (the recipes shipped are in ``scoring.metrics.llm_judge.recipes``)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judge_templates"
    )
    name = models.SlugField(max_length=60, help_text="unique among the owner's templates")
    description = models.TextField(blank=True)
    system = models.TextField(blank=True, help_text="the system message")
    user = models.TextField(help_text="the user message, with the item's placeholders")
    answer_prefix = models.CharField(
        max_length=500, blank=True, help_text="the text the judge's reply starts with"
    )
    pairwise = models.BooleanField(default=False, help_text="compares two replies ({reply_a}, {reply_b})")
    content_hash = models.CharField(max_length=16, help_text="what the signatures of its scores record")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="judge_template_unique_name_per_owner")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.content_hash})"


class JudgeRecord(models.Model):
    """One judge a run asked for (template, question, backend, model, reading), named by its content: the
    metric ``llm-judge:<key>``. Never changed once written."""

    key = models.CharField(max_length=16, unique=True)
    definition = models.JSONField(help_text="scoring.metrics.llm_judge.definition.JudgeDefinition.as_json()")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        template = self.definition.get("template", {}).get("name", "?")
        question = self.definition.get("question", {}).get("name", "?")
        return f"llm-judge:{self.key} ({template}, {question}, {self.definition.get('model', '?')})"


class JudgeAnswer(models.Model):
    """A server's answer to one request, by the hash of endpoint, model, request and prompt; ``run`` the
    scoring run that paid for it (None: scored outside a run), with the tokens it used."""

    key = models.CharField(max_length=64, unique=True)
    endpoint = models.CharField(max_length=100)
    answer = models.JSONField()
    run = models.ForeignKey(
        "scoring.ScoringRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="judge_answers"
    )
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    requests = models.PositiveSmallIntegerField(default=1, help_text="requests sent, retries included")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"answer {self.key[:12]} from {self.endpoint}"


class PreviewStatus(models.TextChoices):
    PENDING = "pending", "waiting for a worker"
    RUNNING = "running", "reading"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class JudgePreview(models.Model):
    """One judge's reading of one reply of a study, asked for before a run starts (the run form's preview),
    computed by a worker (``scoring.judge_preview``) under a lease like every background work. ``key``
    names the judge, the reply as the judge reads it and the model's file or endpoint, so asking again
    for the same reading returns this row; only ``requested_by`` sees it."""

    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judge_previews"
    )
    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="+")
    response = models.ForeignKey(
        "annotation.Response", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    position = models.PositiveIntegerField(default=1, help_text="the reply's number in the study (1: first)")
    key = models.CharField(max_length=64)
    definition = models.JSONField(help_text="scoring.metrics.llm_judge.definition.JudgeDefinition.as_json()")
    item = models.JSONField(help_text="the reply as the judge reads it: context, reply, references")
    status = models.CharField(max_length=10, choices=PreviewStatus.choices, default=PreviewStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True, help_text="the reading (scoring/judges/previews.py)")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["requested_by", "key"], name="judge_preview_unique_per_user")
        ]

    def __str__(self) -> str:
        return f"judge preview {self.pk} ({self.status})"

"""The tables of LLM judges: researchers' prompt templates, the judges runs asked for, the answers of
servers (kept so that a rerun or a chunk computed again asks no server twice), and the pairwise judges'
verdicts per pair of replies. Imported by :mod:`scoring.models`."""

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
    metric ``llm-judge:<key>``, or ``llm-pairwise:<key>`` for a pairwise template. Never changed once
    written."""

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


# What a row holds of the judge's verdict, in the order of ``stats.judge_pairwise.PairVerdict``'s fields (the
# two masses its ``mass``).
PAIR_VERDICT_VALUES = (
    "first_better",
    "second_better",
    "tie",
    "verdict",
    "position_bias",
    "consistent",
    "mass_first",
    "mass_second",
)


class PairVerdictChoice(models.TextChoices):
    FIRST = "first", "the first reply (response_a) is better"
    SECOND = "second", "the second reply (response_b) is better"
    TIE = "tie", "a tie"


class JudgePairVerdict(models.Model):
    """A pairwise judge's verdict on two replies to one context (``response_a`` the lower id, as in
    ``annotation.PairwiseJudgment``), asked in both orders (Zheng et al., 2023;
    scoring/metrics/llm_judge/pairwise.py), under the signature of everything that made it. The
    probabilities and the verdict are null where the judge put no probability on any label (the masses say
    so), so that the pair is not asked again."""

    signature = models.ForeignKey(
        "scoring.MetricSignature", on_delete=models.PROTECT, related_name="pair_verdicts"
    )
    response_a = models.ForeignKey("annotation.Response", on_delete=models.CASCADE, related_name="+")
    response_b = models.ForeignKey("annotation.Response", on_delete=models.CASCADE, related_name="+")
    first_better = models.FloatField(null=True, blank=True, help_text="P(response_a is better), both orders")
    second_better = models.FloatField(null=True, blank=True, help_text="P(response_b is better), both orders")
    tie = models.FloatField(null=True, blank=True, help_text="P(a tie), both orders")
    verdict = models.CharField(max_length=6, choices=PairVerdictChoice.choices, blank=True)
    position_bias = models.FloatField(
        null=True, blank=True, help_text="P(the reply shown first wins) - P(the second wins), both orders"
    )
    consistent = models.BooleanField(null=True, blank=True, help_text="both orders picked the same reply")
    mass_first = models.FloatField(help_text="probability on the three labels, response_a shown first")
    mass_second = models.FloatField(help_text="probability on the three labels, response_b shown first")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["signature", "response_a", "response_b"], name="pair_verdict_unique_per_signature"
            ),
            models.CheckConstraint(
                condition=models.Q(response_a__lt=models.F("response_b")), name="pair_verdict_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.signature_id}: {self.verdict or 'no verdict'} on {self.response_a_id} vs {self.response_b_id}"


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

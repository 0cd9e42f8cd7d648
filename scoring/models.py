"""Stored automatic scores and the runs that compute them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models import Response, Study


class MetricSignature(models.Model):
    """Everything that makes a score reproducible (sacrebleu style): name, parameters, artifact, version.

    ``text`` is the canonical string, e.g. ``bleu-2|refs:multi|tok:en-13a|smooth:method1|version:0.1.0``.
    """

    text = models.CharField(max_length=500, unique=True)
    name = models.CharField(max_length=120, db_index=True)
    parameters = models.JSONField(default=dict)
    artifact_hash = models.CharField(max_length=64, blank=True)
    version = models.CharField(max_length=40)

    class Meta:
        ordering = ["name", "text"]

    def __str__(self) -> str:
        return self.text

    @property
    def references_mode(self) -> str:
        return str(self.parameters.get("refs", "single"))


class MetricScore(models.Model):
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="metric_scores")
    signature = models.ForeignKey(MetricSignature, on_delete=models.PROTECT, related_name="scores")
    value = models.FloatField()
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["response", "signature"], name="score_unique_per_response_signature"
            )
        ]

    def __str__(self) -> str:
        return f"{self.signature_id}: {self.value} for response {self.response_id}"


class RunStatus(models.TextChoices):
    PENDING = "pending", "waiting for a worker"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "finished"
    FAILED = "failed", "failed"


class ReferencesMode(models.TextChoices):
    SINGLE = "single", "single reference (the original reply)"
    MULTI = "multi", "every reference of the context (best-matching reference, seed 003 eq. 1)"


class ScoringRun(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="scoring_runs")
    metrics = models.JSONField(default=list, help_text="metric names, as in `manage.py list_metrics`")
    references = models.CharField(max_length=10, choices=ReferencesMode.choices, default=ReferencesMode.MULTI)
    status = models.CharField(
        max_length=10, choices=RunStatus.choices, default=RunStatus.PENDING, db_index=True
    )
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, help_text="why a failed run failed")
    notes = models.TextField(blank=True, help_text="warnings of a run that finished, e.g. skipped responses")
    timings = models.JSONField(default=dict, help_text="seconds spent per metric")
    attempts = models.PositiveSmallIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.study} ({self.status})"

    @property
    def progress_percent(self) -> int:
        if not self.progress_total:
            return 100 if self.status == RunStatus.SUCCEEDED else 0
        return int(100 * self.progress_done / self.progress_total)

    @property
    def is_finished(self) -> bool:
        return self.status in {RunStatus.SUCCEEDED, RunStatus.FAILED}

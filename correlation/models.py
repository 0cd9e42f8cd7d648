"""Computed correlation reports, cached per study, report options and data version."""

from __future__ import annotations

from django.db import models

from annotation.models import Study


class SnapshotStatus(models.TextChoices):
    PENDING = "pending", "waiting for a worker"
    RUNNING = "running", "computing"
    READY = "ready", "ready"
    FAILED = "failed", "failed"


class ReportSnapshot(models.Model):
    """The report document of one study, for one set of options, at one data version.

    ``Study.data_version`` changes with every write that can change the report (annotation/services/
    data_version.py), so a snapshot is current exactly while its ``data_version`` is the study's: never
    stale, never recomputed for an unchanged study. One row per (study, options, version): computing the
    same report twice at once (two tabs, a page and the API) is one computation.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="report_snapshots")
    options_key = models.CharField(max_length=200)
    data_version = models.PositiveBigIntegerField()
    status = models.CharField(max_length=10, choices=SnapshotStatus.choices, default=SnapshotStatus.PENDING)
    stage = models.CharField(max_length=120, blank=True, help_text="what is being computed now")
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    document = models.JSONField(null=True, blank=True)
    plots = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    compute_seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-data_version", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "options_key", "data_version"], name="report_snapshot_unique_per_version"
            )
        ]
        indexes = [models.Index(fields=["study", "options_key", "status"], name="report_snapshot_lookup")]

    def __str__(self) -> str:
        return f"report of {self.study_id} at version {self.data_version} ({self.status})"

    @property
    def progress_percent(self) -> int:
        if self.status == SnapshotStatus.READY:
            return 100
        if not self.progress_total:
            return 0
        return min(99, int(100 * self.progress_done / self.progress_total))


class ReportBundle(models.Model):
    """The reproducibility bundle of one report snapshot (correlation/bundle/archive.py), built by a worker on
    request (rendering every figure takes a browser and tens of seconds) and kept in the database, so the
    web process and the workers need no shared disk. It goes with its snapshot."""

    snapshot = models.OneToOneField(ReportSnapshot, on_delete=models.CASCADE, related_name="bundle")
    status = models.CharField(max_length=10, choices=SnapshotStatus.choices, default=SnapshotStatus.PENDING)
    stage = models.CharField(max_length=120, blank=True)
    content = models.BinaryField(null=True, blank=True, help_text="the zip, once built")
    size = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"bundle of {self.snapshot_id} ({self.status})"

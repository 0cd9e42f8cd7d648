"""An import too large for the web request, waiting for or running in a Celery worker.

The upload is saved under ``settings.DIALEVAL_IMPORT_DIR/<folder>/`` and the job row is the source of
truth: a worker claims it with a conditional UPDATE, runs the same all-or-nothing import as the web form
(annotation.services.imports.study_import, one transaction) and finishes it in that transaction, so
"succeeded" and the imported rows commit together or not at all. The periodic check
(annotation/services/import_jobs.py) sends jobs whose message was lost and retries, or fails, jobs whose
worker died.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models.study import Study, StudyImport


class ImportJobStatus(models.TextChoices):
    PENDING = "pending", "waiting for a worker"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "imported"
    FAILED = "failed", "rejected or failed; nothing was changed"


class ImportJob(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="import_jobs")
    format = models.CharField(max_length=30)
    question = models.CharField(max_length=60, blank=True, help_text="the form's question (empty: default)")
    filenames = models.JSONField(default=list, help_text="the uploaded files' names, in upload order")
    folder = models.CharField(max_length=64, help_text="under DIALEVAL_IMPORT_DIR: the saved upload")
    total_bytes = models.PositiveBigIntegerField(default=0)
    status = models.CharField(
        max_length=10, choices=ImportJobStatus.choices, default=ImportJobStatus.PENDING, db_index=True
    )
    stage = models.CharField(max_length=20, blank=True, help_text="reading, checking or writing")
    progress_done = models.PositiveBigIntegerField(default=0)
    progress_total = models.PositiveBigIntegerField(default=0)
    problems = models.JSONField(
        default=list, help_text="why it was rejected: [{file, line, field, message}] (as an inline import)"
    )
    problems_truncated = models.BooleanField(default=False)
    error = models.TextField(blank=True, help_text="a failure that is not a problem of the files")
    result = models.ForeignKey(
        StudyImport, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    enqueued_at = models.DateTimeField(null=True, blank=True, help_text="last time a task message was sent")
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import job {self.pk} into {self.study_id} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (ImportJobStatus.SUCCEEDED, ImportJobStatus.FAILED)

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet

from annotation.report_data_admin import ReportDataAdmin
from scoring.models import (
    MetricScore,
    MetricSignature,
    ScoringRun,
    SystemMetricScore,
    TrainedModel,
    TrainingJob,
    WordVectorsFile,
)


@admin.register(ScoringRun)
class ScoringRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "study",
        "purpose",
        "status",
        "progress_done",
        "progress_total",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", "purpose"]


@admin.register(MetricSignature)
class MetricSignatureAdmin(ReportDataAdmin):
    list_display = ["text", "name", "version"]

    def report_study_ids(self, queryset: QuerySet[Any]) -> set[int]:
        # A signature is shared: its name and text appear in the report of every study scored with it.
        signatures = queryset.values("pk")
        scored = MetricScore.objects.filter(signature__in=signatures).order_by()
        system_scored = SystemMetricScore.objects.filter(signature__in=signatures).order_by()
        return set(scored.values_list("response__context__study", flat=True).distinct()) | set(
            system_scored.values_list("system__study", flat=True).distinct()
        )


@admin.register(MetricScore)
class MetricScoreAdmin(ReportDataAdmin):
    study_lookup = "response__context__study"
    list_display = ["response", "signature", "value"]
    raw_id_fields = ["response"]


@admin.register(TrainedModel)
class TrainedModelAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "is_default", "language", "created_at"]
    list_filter = ["kind", "is_default"]
    readonly_fields = ["path", "content_hash", "config", "curve"]  # the artifact is what the hash says


@admin.register(SystemMetricScore)
class SystemMetricScoreAdmin(ReportDataAdmin):
    study_lookup = "system__study"
    list_display = ["system", "signature", "value", "items"]


@admin.register(TrainingJob)
class TrainingJobAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "kind", "status", "study", "created_by", "created_at", "finished_at"]
    list_filter = ["status", "kind"]
    raw_id_fields = ["study", "trained_model"]


@admin.register(WordVectorsFile)
class WordVectorsFileAdmin(admin.ModelAdmin):
    list_display = ["name", "format", "status", "dimension", "words", "language", "created_by", "created_at"]
    list_filter = ["status", "format", "language"]
    # the store is what the hash says, and scores' signatures name it: delete through the page or the API,
    # which refuse while such scores exist
    readonly_fields = [
        "source",
        "source_path",
        "store_path",
        "content_hash",
        "dimension",
        "words",
        "size_bytes",
    ]

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False

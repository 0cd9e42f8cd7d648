from django.contrib import admin

from scoring.models import MetricScore, MetricSignature, ScoringRun, SystemMetricScore, TrainedModel


@admin.register(ScoringRun)
class ScoringRunAdmin(admin.ModelAdmin):
    list_display = ["id", "study", "status", "progress_done", "progress_total", "created_at", "finished_at"]
    list_filter = ["status"]


@admin.register(MetricSignature)
class MetricSignatureAdmin(admin.ModelAdmin):
    list_display = ["text", "name", "version"]


@admin.register(MetricScore)
class MetricScoreAdmin(admin.ModelAdmin):
    list_display = ["response", "signature", "value"]
    raw_id_fields = ["response"]


@admin.register(TrainedModel)
class TrainedModelAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "is_default", "language", "created_at"]
    list_filter = ["kind", "is_default"]
    readonly_fields = ["path", "content_hash", "config", "curve"]  # the artifact is what the hash says


@admin.register(SystemMetricScore)
class SystemMetricScoreAdmin(admin.ModelAdmin):
    list_display = ["system", "signature", "value", "items"]

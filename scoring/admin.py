from django.contrib import admin

from scoring.models import MetricScore, MetricSignature, ScoringRun


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

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.forms import BaseInlineFormSet, ModelForm
from django.http import HttpRequest

from annotation.models import (
    Adjudication,
    Annotator,
    DialogContext,
    ImportedMeanRating,
    ItemNote,
    PairwiseJudgment,
    Question,
    Rating,
    Reference,
    Response,
    Study,
    StudyImport,
    System,
    TrainingItem,
)
from annotation.report_data_admin import ReportDataAdmin
from kernel.data_version import study_data_changed


class QuestionInline(admin.TabularInline):
    model = Question
    extra = 0


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "language", "ratings_per_item", "created_at"]
    search_fields = ["name"]
    inlines = [QuestionInline]

    def save_model(self, request: HttpRequest, obj: Study, form: ModelForm[Study], change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        # data_version moves only by its conditional UPDATE (study_data_changed); a full save would write
        # back the value read with the object and undo a bump committed in between.
        obj.save(
            update_fields=[
                field.name
                for field in Study._meta.concrete_fields
                if not field.primary_key and field.name != "data_version"
            ]
        )

    def save_related(
        self,
        request: HttpRequest,
        form: ModelForm[Study],
        formsets: list[BaseInlineFormSet[Any, Study, Any]],
        change: bool,
    ) -> None:
        super().save_related(request, form, formsets, change)
        # Once per save, after the questions: the name, the kappa threshold and the questions are reported.
        study_data_changed(study_id=form.instance.pk)


@admin.register(DialogContext)
class DialogContextAdmin(ReportDataAdmin):
    list_display = ["external_id", "study", "query"]
    list_filter = ["study"]
    search_fields = ["external_id"]


@admin.register(Reference)
class ReferenceAdmin(ReportDataAdmin):
    study_lookup = "context__study"
    list_display = ["text", "origin", "context"]
    list_filter = ["origin"]
    raw_id_fields = ["context", "author"]


@admin.register(System)
class SystemAdmin(ReportDataAdmin):
    list_display = ["name", "study", "is_human"]
    list_filter = ["study"]


@admin.register(Response)
class ResponseAdmin(ReportDataAdmin):
    study_lookup = "context__study"
    list_display = ["text", "system", "context"]
    list_filter = ["system__study"]
    raw_id_fields = ["context", "system"]


@admin.register(Annotator)
class AnnotatorAdmin(ReportDataAdmin):
    list_display = ["pseudonym", "study", "user", "origin"]
    list_filter = ["origin", "study"]


@admin.register(Rating)
class RatingAdmin(ReportDataAdmin):
    study_lookup = "question__study"
    list_display = ["annotator", "response", "question", "value", "seconds_spent", "created_at"]
    raw_id_fields = ["annotator", "response", "question"]


@admin.register(ImportedMeanRating)
class ImportedMeanRatingAdmin(ReportDataAdmin):
    study_lookup = "question__study"


admin.site.register(StudyImport)


@admin.register(Adjudication)
class AdjudicationAdmin(ReportDataAdmin):
    """The researcher's decisions on replies (exclusion, gold values): the report reads them."""

    study_lookup = "response__context__study"
    list_display = ["response", "excluded", "gold", "decided_by", "decided_at"]
    list_filter = ["excluded"]
    raw_id_fields = ["response", "decided_by"]


@admin.register(PairwiseJudgment)
class PairwiseJudgmentAdmin(ReportDataAdmin):
    """Pairwise comparisons: the report's win rates read them."""

    study_lookup = "annotator__study"
    list_display = ["annotator", "response_a", "response_b", "choice", "created_at"]
    list_filter = ["choice"]
    raw_id_fields = ["annotator", "response_a", "response_b", "shown_first"]


@admin.register(ItemNote)
class ItemNoteAdmin(admin.ModelAdmin):
    list_display = ["kind", "reason", "annotator", "response", "response_b", "created_at"]
    list_filter = ["kind", "reason"]
    raw_id_fields = ["annotator", "response", "response_b", "context", "system"]


@admin.register(TrainingItem)
class TrainingItemAdmin(admin.ModelAdmin):
    list_display = ["study", "response", "question", "gold_min", "gold_max", "position"]
    list_filter = ["study"]
    raw_id_fields = ["response"]

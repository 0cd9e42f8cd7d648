from django.contrib import admin

from annotation.models import (
    Annotator,
    DialogContext,
    ImportedMeanRating,
    Question,
    Rating,
    Reference,
    Response,
    Study,
    StudyImport,
    System,
)


class QuestionInline(admin.TabularInline):
    model = Question
    extra = 0


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "language", "ratings_per_item", "created_at"]
    search_fields = ["name"]
    inlines = [QuestionInline]


@admin.register(DialogContext)
class DialogContextAdmin(admin.ModelAdmin):
    list_display = ["external_id", "study", "query"]
    list_filter = ["study"]
    search_fields = ["external_id"]


@admin.register(Reference)
class ReferenceAdmin(admin.ModelAdmin):
    list_display = ["text", "origin", "context"]
    list_filter = ["origin"]
    raw_id_fields = ["context", "author"]


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["name", "study", "is_human"]
    list_filter = ["study"]


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ["text", "system", "context"]
    list_filter = ["system__study"]
    raw_id_fields = ["context", "system"]


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ["pseudonym", "study", "user", "origin"]
    list_filter = ["origin", "study"]


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ["annotator", "response", "question", "value", "seconds_spent", "created_at"]
    raw_id_fields = ["annotator", "response", "question"]


admin.site.register(ImportedMeanRating)
admin.site.register(StudyImport)

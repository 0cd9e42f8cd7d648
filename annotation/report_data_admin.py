"""Admin edits of what a correlation report shows bump the study's data version, as the services do.

Staff can change ratings, replies, references, metric scores... in the admin too; these hooks make each
admin save, deletion and "delete selected" bump every study it touches once, after the admin's
transaction commits (kernel/data_version.py). The studies are read before a deletion (the
rows are gone afterwards), and before and after a save (an edit can move a row to another study).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from kernel.data_version import study_data_changed


def studies_changed(study_ids: Iterable[int | None]) -> None:
    for study_id in sorted({study_id for study_id in study_ids if study_id is not None}):
        study_data_changed(study_id=study_id)


class ReportDataAdmin(admin.ModelAdmin):
    """A ModelAdmin for a model whose rows a report reads; ``study_lookup`` leads from a row to its study."""

    study_lookup = "study"

    def report_study_ids(self, queryset: QuerySet[Any]) -> set[int]:
        return set(queryset.order_by().values_list(self.study_lookup, flat=True).distinct())

    def _row_study_ids(self, obj: Model) -> set[int]:
        if obj.pk is None:
            return set()
        return self.report_study_ids(self.model._default_manager.filter(pk=obj.pk))

    def save_model(self, request: HttpRequest, obj: Model, form: ModelForm[Any], change: bool) -> None:
        before = self._row_study_ids(obj) if change else set()
        super().save_model(request, obj, form, change)
        studies_changed(before | self._row_study_ids(obj))

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        study_ids = self._row_study_ids(obj)
        super().delete_model(request, obj)
        studies_changed(study_ids)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        study_ids = self.report_study_ids(queryset)
        super().delete_queryset(request, queryset)
        studies_changed(study_ids)

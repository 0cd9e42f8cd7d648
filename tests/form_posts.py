"""What a browser posts back for a rendered form, for tests that submit real pages (the admin included)
with one value changed."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import Model

from annotation.form_checkboxes import MarkedCheckboxInput, marker_name


def form_values(*every: forms.BaseForm) -> dict[str, Any]:
    """The values a browser posts back for these forms as rendered (an unticked box posts nothing)."""
    data: dict[str, Any] = {}
    for form in every:
        for field in form:
            value = field.value()
            if isinstance(field.field, forms.BooleanField):
                if value:
                    data[field.html_name] = "on"
                if isinstance(field.field.widget, MarkedCheckboxInput):
                    data[marker_name(field.html_name)] = "1"  # the hidden input rendered beside the box
            elif value is not None:
                data[field.html_name] = field.field.prepare_value(value)
    return data


def admin_post_data(page: Any) -> dict[str, Any]:
    """What an admin change page posts back when nothing is edited: its form's and inlines' values."""
    every = [page.context["adminform"].form]
    for inline in page.context["inline_admin_formsets"]:
        every += [inline.formset.management_form, *inline.formset.forms]
    return form_values(*every)


def admin_url(obj: Model, action: str = "change") -> str:
    return f"/admin/{obj._meta.app_label}/{obj._meta.model_name}/{obj.pk}/{action}/"

"""The form of a researcher's own prompt template (the templates page); the checks of the text are the
service's (:func:`scoring.judges.templates.judge_template_save`), shown under the field they name."""

from __future__ import annotations

from typing import Any

from django import forms

from scoring.judges.templates import TemplateEntry
from scoring.metrics.llm_judge.prompts import MAX_TEMPLATE_CHARACTERS

RESERVED_NAMES = {"new"}  # the page that makes a template: /scoring/judge-templates/new/


class JudgeTemplateForm(forms.Form):
    name = forms.SlugField(
        max_length=60, help_text="letters, digits, '-' and '_'; unique among your templates"
    )
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)
    system = forms.CharField(
        required=False,
        label="System message",
        max_length=MAX_TEMPLATE_CHARACTERS,
        widget=forms.Textarea(attrs={"rows": 6, "class": "template-text"}),
        strip=False,
    )
    user = forms.CharField(
        label="User message",
        max_length=MAX_TEMPLATE_CHARACTERS,
        widget=forms.Textarea(attrs={"rows": 16, "class": "template-text"}),
        strip=False,
        help_text="must show {reply} (a pairwise template: {reply_a} and {reply_b})",
    )
    answer_prefix = forms.CharField(
        required=False,
        max_length=500,
        strip=False,
        help_text="the text the judge's reply starts with, so that its next token is the rating",
    )
    pairwise = forms.BooleanField(
        required=False,
        label="Compares two replies (pairwise)",
        help_text="runs do not ask pairwise judges yet",
    )

    def __init__(self, *args: Any, editing: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.editing = editing
        if editing:
            self.fields["name"].disabled = True
            self.fields["name"].help_text = "a template keeps its name; copy it to rename it"

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for field in ("description", "system", "user", "answer_prefix"):
            if isinstance(cleaned.get(field), str):  # a browser sends a textarea's lines ended by CR LF
                cleaned[field] = cleaned[field].replace("\r\n", "\n").replace("\r", "\n")
        return cleaned

    def clean_name(self) -> str:
        name = str(self.cleaned_data["name"])
        if not self.editing and name in RESERVED_NAMES:
            raise forms.ValidationError(f"{name!r} is the address of this page; choose another name")
        return name


def template_initial(entry: TemplateEntry, *, copy: bool) -> dict[str, Any]:
    """The form's values from ``entry``; a copy gets a name of its own."""
    template = entry.template
    return {
        "name": f"{template.name}-copy" if copy else template.name,
        "description": template.description,
        "system": template.system,
        "user": template.user,
        "answer_prefix": template.answer_prefix,
        "pairwise": template.pairwise,
    }

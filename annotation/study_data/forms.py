"""The study page's import form: a format, one or more files, and the question that receives ratings when the
format names none (annotation/study_data/views.py)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.urls import reverse_lazy
from django.utils.html import format_html, format_html_join
from django.utils.text import format_lazy

from annotation.importers import IMPORT_FORMATS
from annotation.models import Question, Study


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented pattern for `multiple` file inputs)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> Any:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(item, initial) for item in data]
        return [single(data, initial)]


class StudyImportForm(forms.Form):
    # The select names the formats and the help under it says what each reads: "name — description" options
    # were too long for the import card, whose select cut them short.
    format = forms.ChoiceField(
        choices=[(name, name) for name in IMPORT_FORMATS],
        help_text=format_html(
            '<ul class="import-formats" id="import-formats">{}</ul>',
            format_html_join("", "<li><code>{}</code>: {}</li>", IMPORT_FORMATS.items()),
        ),
    )
    # The metaclass moves declared fields off the class, so this does not shadow BaseForm.files at run time.
    files = MultipleFileField(  # type: ignore[assignment]
        help_text=format_lazy(
            'one or more files; see <a href="{}" id="import-formats-link">the import formats</a> '
            "(docs/import-formats.md)",
            reverse_lazy("doc-page", args=["import-formats"]),
        )
    )
    question = forms.ChoiceField(
        required=False, help_text="which question receives ratings for formats without question names"
    )

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        questions = list(Question.objects.filter(study=study).values_list("name", flat=True))
        question_field = self.fields["question"]
        assert isinstance(question_field, forms.ChoiceField)
        question_field.choices = [(name, name) for name in questions]
        if len(questions) <= 1:
            # No choice to make: the field goes (the import then uses the one question, if any). A hidden
            # input instead still printed its label and help text, beside nothing.
            del self.fields["question"]

    def clean_files(self) -> list[Any]:
        files = self.cleaned_data["files"]
        limit = settings.DIALEVAL_MAX_UPLOAD_BYTES
        for upload in files:
            if upload.size > limit:
                raise forms.ValidationError(
                    f"{upload.name} is {upload.size:,} bytes; the upload limit is {limit:,} bytes."
                )
        return list(files)

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.urls import reverse_lazy
from django.utils.text import format_lazy

from annotation.importers import IMPORT_FORMATS
from annotation.models import Language, Question, Study
from annotation.scales import SCALE_PRESETS, QuestionSpec, question_specs_from_text


class StudyCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    language = forms.ChoiceField(choices=Language.choices, initial=Language.ENGLISH)
    scale = forms.ChoiceField(
        choices=[(name, f"{name}: {' / '.join(p.labels)}") for name, p in SCALE_PRESETS.items()],
        initial="0-2",
        help_text="0-2 as in RUBER; 1-5 as in the multi-reference and BERT-RUBER studies.",
    )
    ratings_per_item = forms.IntegerField(
        min_value=1, max_value=50, initial=3, label="Ratings wanted per item"
    )
    instructions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
        label="Rating instructions",
        help_text="Shown to raters before their first item; the other tasks have their own.",
    )
    questions = forms.CharField(
        widget=forms.Textarea(
            attrs={"rows": 3, "placeholder": "fluency 1-5\nengaging 0-2 no / somewhat / yes"}
        ),
        required=False,
        label="Questions (optional)",
        help_text="Leave empty for one question, appropriateness, on the scale above. To ask several, write one "
        "per line: name min-max, then optionally one label per point separated by /.",
    )

    def clean_questions(self) -> list[QuestionSpec]:
        try:
            return question_specs_from_text(str(self.cleaned_data.get("questions") or ""))
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None

    def __init__(self, *args: Any, owner: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner

    def clean_name(self) -> str:
        """Names are unique among one researcher's studies only: another researcher's "Pilot" is none of
        this researcher's business (and must not be revealed by the form)."""
        name = str(self.cleaned_data["name"]).strip()
        if self.owner is not None and Study.objects.filter(owner=self.owner, name=name).exists():
            raise forms.ValidationError("You already have a study with this name; choose another name.")
        return name


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
    format = forms.ChoiceField(choices=[(name, f"{name} — {text}") for name, text in IMPORT_FORMATS.items()])
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
        if len(questions) <= 1:  # the common case stays light: no choice to make
            self.fields["question"].widget = forms.HiddenInput()

    def clean_files(self) -> list[Any]:
        files = self.cleaned_data["files"]
        limit = settings.DIALEVAL_MAX_UPLOAD_BYTES
        for upload in files:
            if upload.size > limit:
                raise forms.ValidationError(
                    f"{upload.name} is {upload.size:,} bytes; the upload limit is {limit:,} bytes."
                )
        return list(files)

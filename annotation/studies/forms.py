"""The new-study form: name, language, scale and the questions typed one per line."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import Language, Study
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

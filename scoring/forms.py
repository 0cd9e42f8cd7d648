from __future__ import annotations

from typing import Any

from django import forms

from scoring.metrics.registry import available_metric_names
from scoring.models import ReferencesMode


class ScoringRunForm(forms.Form):
    metrics = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    references = forms.ChoiceField(
        choices=ReferencesMode.choices, initial=ReferencesMode.MULTI, widget=forms.RadioSelect
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = available_metric_names()
        metrics_field = self.fields["metrics"]
        assert isinstance(metrics_field, forms.MultipleChoiceField)
        metrics_field.choices = [(name, name) for name in names]
        self.fields["metrics"].initial = names

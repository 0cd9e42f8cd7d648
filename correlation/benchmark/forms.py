"""The benchmark page's choices (a GET form): the requester's studies, metrics, the statistic and grouping.
It renders the choices and keeps what was picked; the query is checked by the selector, as the API's."""

from __future__ import annotations

from typing import Any, cast

from django import forms

from correlation.selectors import studies_reportable_by
from stats.benchmark.options import GROUPING_LABELS, STATISTIC_LABELS


class BenchmarkForm(forms.Form):
    studies = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, required=True)
    metrics = forms.CharField(
        required=False,
        help_text="metric names or signatures, comma-separated; every metric of the studies when empty",
    )
    statistic = forms.ChoiceField(choices=list(STATISTIC_LABELS.items()), initial="pearson")
    grouping = forms.ChoiceField(
        choices=list(GROUPING_LABELS.items()),
        initial="none",
        help_text="for the correlations; the accuracies name their own level",
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        studies = studies_reportable_by(user=user).order_by("name", "id")
        field = cast(forms.MultipleChoiceField, self.fields["studies"])
        field.choices = [(str(study.pk), study.name) for study in studies]

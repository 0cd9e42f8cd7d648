"""The filter form of the researcher's item browser (annotation/items/views.py): GET parameters in,
:class:`~annotation.selectors.item_browser.ItemFilters` out, each bad value named by its field."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.selectors.item_browser import (
    EXCLUDED_HIDDEN,
    EXCLUDED_ONLY,
    SORT_DISAGREEMENT,
    SORT_ID,
    ItemFilters,
)

EXCLUDED_CHOICES = [("", "all replies"), (EXCLUDED_ONLY, "excluded only"), (EXCLUDED_HIDDEN, "hide excluded")]
SORT_CHOICES = [(SORT_ID, "import order"), (SORT_DISAGREEMENT, "disagreement, highest first")]


class ItemFilterForm(forms.Form):
    system = forms.TypedChoiceField(coerce=int, empty_value=None, required=False, label="System")
    min_disagreement = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1_000_000,
        label="Disagreement ≥",
        help_text="highest minus lowest rating, on the question where raters differ most",
        widget=forms.NumberInput(attrs={"step": "any", "size": 4}),
    )
    flagged = forms.BooleanField(required=False, label="flagged")
    commented = forms.BooleanField(required=False, label="commented")
    excluded = forms.ChoiceField(choices=EXCLUDED_CHOICES, required=False, label="Adjudication")
    sort = forms.ChoiceField(choices=SORT_CHOICES, required=False, label="Sort by")

    def __init__(self, *args: Any, systems: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["system"]
        assert isinstance(field, forms.TypedChoiceField)
        field.choices = [("", "every system"), *((str(pk), name) for pk, name in systems)]

    def item_filters(self) -> ItemFilters:
        """The filters of a valid form."""
        data = self.cleaned_data
        return ItemFilters(
            system=data.get("system"),
            min_disagreement=data.get("min_disagreement"),
            flagged=bool(data.get("flagged")),
            commented=bool(data.get("commented")),
            excluded=data.get("excluded") or "",
            sort=data.get("sort") or SORT_ID,
        )

"""Settings forms that tell "emptied" from "not on the page that was posted".

A POST can lack a field for three reasons: the user emptied it, the page was rendered before the field
existed, or the client posts only the fields it changes. Read as "empty", the last two silently clear a
setting or reset it to its default. :class:`KeptValuesForm` keeps the initial value (the object's current
one) of every optional field whose widget says its value was *omitted* from the data
(``Widget.value_omitted_from_data``, the hook Django's model forms use for the same purpose):

* a text, number or textarea field posts its key even when empty, so only a missing key keeps the value;
  a key posted empty clears the field as before;
* an unticked HTML checkbox posts nothing, exactly like a missing one, so :class:`MarkedCheckboxInput`
  renders a hidden marker ``<name>_present=1`` right after the box: the box is unticked when its marker
  came back without it, and kept when neither came back. A plain ``CheckboxInput`` is never kept.

Required fields are not kept: a POST without one is refused, naming it. A widget that posts nothing when
empty (radio buttons, a multiple select) needs a marker like the checkbox's before it can be kept.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.html import format_html
from django.utils.safestring import SafeString

MARKER_SUFFIX = "_present"


def marker_name(html_name: str) -> str:
    """The name of the hidden marker that goes with the checkbox posted as ``html_name``."""
    return f"{html_name}{MARKER_SUFFIX}"


class MarkedCheckboxInput(forms.CheckboxInput):
    """A checkbox followed by a hidden ``<name>_present=1``, which says the box was on the page."""

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        box = super().render(name, value, attrs, renderer)
        return format_html('{}<input type="hidden" name="{}" value="1">', box, marker_name(name))

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        """Neither the box nor its marker came back: the box was not on the page (an unticked box of the
        page sends its marker alone, and is not omitted)."""
        return name not in data and marker_name(name) not in data


def _as_posted(field: forms.Field, value: Any) -> str | None:
    """What the page would have posted for ``value`` in ``field`` (None: nothing, as an unticked box)."""
    if isinstance(field.widget, forms.CheckboxInput):
        return "on" if value else None
    shown = field.widget.format_value(field.prepare_value(value))
    if isinstance(shown, list):  # a single <select> formats its value as the list of chosen options
        shown = shown[0] if shown else None
    return "" if shown is None else str(shown)


class KeptValuesForm(forms.Form):
    """A form whose optional fields keep their initial value when the posted data omits them (see the
    module's docstring); a field posted empty, or a marked box unticked on the current page, is still
    cleared.

    The data is completed once, here, so validation, the re-rendered page after an error and
    ``cleaned_data`` all see the same value."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.is_bound:
            self.data = self._with_omitted_values_kept(self.data)

    def _with_omitted_values_kept(self, data: Any) -> Any:
        kept: dict[str, str] = {}
        for name, field in self.fields.items():
            html_name = self.add_prefix(name)
            if field.required or not field.widget.value_omitted_from_data(data, self.files, html_name):
                continue
            posted = _as_posted(field, self.get_initial_for_field(field, name))
            if posted is not None:
                kept[html_name] = posted
        if not kept:
            return data
        completed = data.copy()  # a QueryDict from a request is immutable
        for html_name, value in kept.items():
            completed[html_name] = value
        return completed


__all__ = ["MARKER_SUFFIX", "KeptValuesForm", "MarkedCheckboxInput", "marker_name"]

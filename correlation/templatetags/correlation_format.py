"""Template filters that print correlation statistics the same way everywhere on the report page."""

from __future__ import annotations

from collections.abc import Sequence

from django import template

register = template.Library()

MISSING = "—"
SIGNIFICANCE_LEVEL = 0.05


@register.filter
def statistic(value: float | None, digits: int = 3) -> str:
    """A coefficient or mean to ``digits`` decimals; a dash when undefined."""
    if value is None:
        return MISSING
    return f"{value:.{digits}f}"


@register.filter
def p_value(value: float | None) -> str:
    if value is None:
        return MISSING
    if value < 0.001:
        return "<\u00a00.001"  # no-break space: keep it on one line in a narrow column
    return f"{value:.3f}"


@register.filter
def interval(bounds: Sequence[float | None] | None) -> str:
    """``[lo, hi]`` of a ``[low, high]`` pair, or nothing when it is undefined."""
    if not bounds or bounds[0] is None or bounds[1] is None:
        return ""
    return f"[{bounds[0]:.2f}, {bounds[1]:.2f}]"


@register.filter
def significance(p: float | None) -> str:
    """The CSS class for a statistic significant at the 5% level (two-sided), else ``""``."""
    if p is not None and p < SIGNIFICANCE_LEVEL:
        return "significant"
    return ""


@register.filter
def sort_key(value: float | None) -> str:
    """A ``data-sort`` value for report.js's table sorting (empty sorts last)."""
    # "": a key the entry lacks (a document from before the key existed) reads as the empty string
    return "" if value is None or value == "" else repr(float(value))


@register.filter
def get_item(mapping: dict, key: str) -> object:
    return mapping.get(key) if mapping else None


# The tools a baseline can be computed by: a row computed by one of them names it.
TOOL_IMPLEMENTATIONS = ("nltk", "nlg-eval", "sacrebleu", "rouge-score")


@register.filter
def tool(implementation: str | None) -> str:
    """The tool that computed a row (nltk, nlg-eval, sacrebleu, rouge-score), or "" for the project's own
    metrics, external scores and plugins, which the row marks otherwise."""
    return implementation if implementation in TOOL_IMPLEMENTATIONS else ""


@register.filter
def metric_name(entry: dict | None, which: str = "") -> str:
    """An entry's display name (unique in the report, stats/display_names.py): ``display``, or
    ``first_display``/``second_display``/``single_display`` with ``which``; the metric's name in a document
    from before display names."""
    if not entry:
        return ""
    prefix = f"{which}_" if which else ""
    value = entry.get(f"{prefix}display") or entry.get(f"{prefix}metric") or entry.get("metric")
    return str(value or "")


@register.filter
def p_equals(value: float | None) -> str:
    """ "p = 0.012", "p < 0.001" (never "p = < 0.001"), or "p —" when undefined."""
    text = p_value(value)
    return f"p {text}" if text.startswith("<") or text == MISSING else f"p = {text}"

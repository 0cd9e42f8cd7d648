"""Template filters that print correlation statistics the same way everywhere on the report page."""

from __future__ import annotations

from django import template

from correlation.stats import CorrelationResult

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
def interval(result: CorrelationResult) -> str:
    """``[lo, hi]`` of a result's confidence interval, or nothing when it is undefined."""
    if result.ci_low is None or result.ci_high is None:
        return ""
    return f"[{result.ci_low:.2f}, {result.ci_high:.2f}]"


@register.filter
def significance(result: CorrelationResult) -> str:
    """The CSS class for a statistic significant at the 5% level (two-sided), else ``""``."""
    if result.p_value is not None and result.p_value < SIGNIFICANCE_LEVEL:
        return "significant"
    return ""


@register.filter
def sort_key(value: float | None) -> str:
    """A ``data-sort`` value for report.js's table sorting (empty sorts last)."""
    return "" if value is None else repr(float(value))

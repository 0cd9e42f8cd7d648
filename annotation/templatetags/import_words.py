"""``{{ record.counts|import_summary }}``: an import's counters in words on the study page, as the message
after an inline import and the import job page say them."""

from __future__ import annotations

from django import template

from annotation.selectors.import_jobs import import_counts_text

register = template.Library()


@register.filter
def import_summary(counts: dict[str, int]) -> str:
    return import_counts_text(counts or {}) or "nothing new"

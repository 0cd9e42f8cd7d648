"""``{% page_sections slot obj %}`` and ``{% provided name argument as variable %}``: what upper apps add to a
lower app's page (kernel/extensions.py), and ``mapping|item_of:key`` to read one entry of provided data."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from kernel import extensions

register = template.Library()


@register.simple_tag(takes_context=True)
def page_sections(context: template.Context, slot: str, obj: Any) -> SafeString:
    return extensions.sections(slot, context, obj)


@register.simple_tag
def provided(name: str, argument: Any) -> Any:
    return extensions.provided(name, argument)


@register.filter
def item_of(mapping: Any, key: Any) -> Any:
    """``scores|item_of:row.response_id``: one entry of a provided mapping (an empty list when absent)."""
    if not mapping:
        return []
    return mapping.get(key, [])

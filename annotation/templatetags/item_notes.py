"""``{% item_note_form study kind assignment_id %}``: the comment / flag form under an annotator's item
(templates/annotation/work/_note_form.html), with the flag reasons of the data model."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

from annotation.models import FlagReason, Study
from annotation.services.notes import MAX_NOTE_CHARACTERS

register = template.Library()


@register.inclusion_tag("annotation/work/_note_form.html", takes_context=True)
def item_note_form(context: template.Context, study: Study, kind: str, assignment_id: int) -> dict[str, Any]:
    return {
        "note_url": reverse("work:note", args=[study.pk, kind, assignment_id]),
        "reasons": FlagReason.choices,
        "max_characters": MAX_NOTE_CHARACTERS,
        "csrf_token": context.get("csrf_token"),
    }

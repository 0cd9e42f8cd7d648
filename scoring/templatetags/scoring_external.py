"""The study page's "Metric scores computed elsewhere" section: the import form, the problems
of a rejected import (kept in the session across the redirect, shown once), and the study's external
metrics with a delete button each. Included by templates/scoring/_study_scoring.html."""

from __future__ import annotations

from typing import Any

from django import template

from annotation.models import Study
from scoring.external.file_format import external_metric_label
from scoring.selectors import external_metrics_for_study

register = template.Library()

PROBLEMS_SESSION_KEY = "external-scores-problems"


def problems_key(study_id: int) -> str:
    return f"{PROBLEMS_SESSION_KEY}:{study_id}"


@register.inclusion_tag("scoring/_external_scores.html", takes_context=True)
def external_scores_section(context: template.Context, study: Study) -> dict[str, Any]:
    request = context.get("request")
    session = getattr(request, "session", None)
    problems = session.pop(problems_key(study.pk), None) if session is not None else None
    return {
        "study": study,
        "external_metrics": [
            {"metric": metric, "label": external_metric_label(metric.name)}
            for metric in external_metrics_for_study(study=study)
        ],
        "problems": problems or [],
        "csrf_token": context.get("csrf_token"),
        "request": request,
    }

"""Reads for correlation reports: questions, metric signatures, metric values and response labels of one
study (the human scores are computed by correlation/report/loading.py).

Each selector is one query whatever the size of the study (no per-response queries), so a report over
the 500 rated responses of the multi-reference study (Gupta et al., 2019, section 5.1.1) times ten metrics costs
the same handful of queries as one over five.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from annotation.models import Question, Response, Study
from annotation.selectors.studies import studies_visible_to
from kernel.roles import user_is_researcher
from scoring.models import MetricScore, MetricSignature


@dataclass(frozen=True)
class ResponseLabel:
    """What a plot shows about a response besides its scores."""

    text: str
    system: str
    context: str = ""  # the context's external id, when it has one


def studies_reportable_by(*, user: Any) -> QuerySet[Study]:
    """Studies whose report ``user`` may read: researchers see their own, superusers all, others none."""
    if not user_is_researcher(user):
        return Study.objects.none()
    return studies_visible_to(user=user)


def study_questions(*, study: Study) -> list[Question]:
    return list(Question.objects.filter(study=study).order_by("position", "id"))


def study_metric_signatures(*, study: Study) -> list[MetricSignature]:
    """The signatures with at least one score on a response of the study, by name then text."""
    scored = MetricScore.objects.filter(response__context__study=study).values("signature_id")
    return list(MetricSignature.objects.filter(pk__in=scored).order_by("name", "text"))


def study_metric_values(*, study: Study) -> dict[int, dict[int, float]]:
    """signature id -> response id -> metric value (one query); non-finite values count as missing."""
    values: dict[int, dict[int, float]] = {}
    rows = MetricScore.objects.filter(response__context__study=study).values_list(
        "signature_id", "response_id", "value"
    )
    for signature_id, response_id, value in rows:
        if value is not None and math.isfinite(value):
            values.setdefault(signature_id, {})[response_id] = float(value)
    return values


def study_response_labels(*, study: Study) -> dict[int, ResponseLabel]:
    """response id -> text and system name (one query)."""
    rows = Response.objects.filter(context__study=study).values_list(
        "id", "text", "system__name", "context__external_id"
    )
    return {
        response_id: ResponseLabel(text=text, system=system, context=context)
        for response_id, text, system, context in rows
    }


def study_question_by_name(*, study: Study, name: str) -> Question | None:
    return Question.objects.filter(study=study, name=name).first()

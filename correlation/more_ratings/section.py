"""The annotation page's "How many more ratings?" section: for each question with ratings, plain sentences
from stats/meta/more_ratings.py (via stats/report/rating_plan.py) on the ratings the report counts so far.
Registered with the kernel's page extensions (kernel/extensions.py): the annotation app's page shows it
without importing this app."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from annotation.models import Study
from correlation.report.loading import report_inputs
from stats.report.document_types import MoreRatingsEntry
from stats.report.rating_plan import more_ratings_entry

ANNOTATION_SLOT = "study-annotation"  # templates/annotation/progress.html: {% page_sections ... study %}


def study_rating_plans(*, study: Study) -> list[MoreRatingsEntry]:
    """Each question's plan, from the ratings the report counts with the study's own filter."""
    inputs = report_inputs(study=study, recompute=False)
    return [more_ratings_entry(inputs, question) for question in inputs.questions]


def rating_plan_html(context: Any, study: Study) -> str:
    """The section for ``study``'s annotation page."""
    return render_to_string(
        "correlation/_rating_plan.html",
        {"study": study, "plans": study_rating_plans(study=study)},
        request=context.get("request"),
    )

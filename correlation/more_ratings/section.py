"""The annotation page's "How many more ratings?" section: for each question with ratings, plain sentences
from stats/meta/more_ratings.py (via stats/report/rating_plan.py) on the ratings the report counts so far.
Registered with the kernel's page extensions (kernel/extensions.py): the annotation app's page shows it
without importing this app."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string

from annotation.models import Study
from correlation.report.loading import report_inputs
from stats.meta import Projection
from stats.report.rating_plan import question_rating_plan

ANNOTATION_SLOT = "study-annotation"  # templates/annotation/progress.html: {% page_sections ... study %}
NO_RATINGS = "no ratings yet"


@dataclass(frozen=True)
class QuestionPlan:
    question: str
    note: str
    noise: str  # the variance components in a sentence ("" when unknown)
    systems: list[str]
    differences: list[str]
    metrics: list[str]


def study_rating_plans(*, study: Study) -> list[QuestionPlan]:
    """Each question's plan, from the ratings the report counts with the study's own filter."""
    inputs = report_inputs(study=study, recompute=False)
    plans = []
    for question in inputs.questions:
        if not question.ratings:
            plans.append(QuestionPlan(question.name, NO_RATINGS, "", [], [], []))
            continue
        plan = question_rating_plan(inputs, question)
        components = plan.components
        noise = (
            f"From {components.ratings} ratings of {components.items} replies: a reply's true score varies "
            f"with variance {components.item_variance:.2f} and one rating around it with "
            f"{components.noise_variance:.2f}."
            if components is not None
            else ""
        )
        plans.append(
            QuestionPlan(
                question=question.name,
                note=plan.note,
                noise=noise,
                systems=_sentences(plan.projections, "system mean"),
                differences=_sentences(plan.projections, "system difference"),
                metrics=_sentences(plan.projections, "metric correlation")
                + _sentences(plan.projections, "metric difference"),
            )
        )
    return plans


def rating_plan_html(context: Any, study: Study) -> str:
    """The section for ``study``'s annotation page."""
    return render_to_string(
        "correlation/_rating_plan.html",
        {"study": study, "plans": study_rating_plans(study=study)},
        request=context.get("request"),
    )


def _sentences(projections: tuple[Projection, ...], kind: str) -> list[str]:
    return [
        f"{projection.sentence[:1].upper()}{projection.sentence[1:]}."
        for projection in projections
        if projection.kind == kind
    ]

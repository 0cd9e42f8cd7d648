"""The study page's scoring section (the run form, the model choice, the runs with live progress), as a
template tag: the annotation app's study page includes it by name, so the annotation app never imports the
scoring app (the import-linter layers contract in pyproject.toml)."""

from __future__ import annotations

from typing import Any

from django import template

from annotation.models import Study
from scoring.forms import ScoringRunForm, StudyModelChoiceForm
from scoring.selectors import scoring_runs_for_study

register = template.Library()


@register.inclusion_tag("scoring/_study_scoring.html", takes_context=True)
def study_scoring(context: template.Context, study: Study) -> dict[str, Any]:
    return {
        "study": study,
        "scoring_form": ScoringRunForm(study=study),
        "model_form": StudyModelChoiceForm(study=study),
        "runs": scoring_runs_for_study(study=study)[:10],
        "csrf_token": context.get("csrf_token"),
        "request": context.get("request"),
    }

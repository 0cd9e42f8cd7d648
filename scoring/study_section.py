"""The study page's scoring section (the run form, the model choice, training a model, the runs and training
jobs with live progress), and the metric scores of the item browser's replies: registered with the kernel's
page extensions (kernel/extensions.py) when the app starts, so the annotation app's pages show them without
importing the scoring app (the import-linter layers contract in pyproject.toml).

A form that the researcher posted with an error comes back bound to what they chose, with its errors
(``scoring.form_stash``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms, template
from django.template.loader import render_to_string

from annotation.models import Study
from scoring.form_stash import KeptForm, form_data_take, form_errors_restore
from scoring.runs.forms import ScoringRunForm, StudyModelChoiceForm
from scoring.selectors import (
    ReplyMetricScore,
    reply_metric_scores,
    scoring_runs_for_study,
    training_jobs_for_study,
)
from scoring.training.forms import TrainingJobForm

STUDY_SLOT = (
    "study-detail"  # templates/annotation/study_detail.html: {% page_sections "study-detail" study %}
)
REPLY_SCORES = "reply-metric-scores"  # templates/annotation/items/: {% provided "reply-metric-scores" rows %}


def study_scoring_html(context: template.Context, study: Study) -> str:
    """The scoring section of ``study``'s page."""
    request = context.get("request")
    return render_to_string(
        "scoring/_study_scoring.html", study_scoring_context(context, study), request=request
    )


def reply_scores(rows: Iterable[Any]) -> dict[int, list[ReplyMetricScore]]:
    """Response id -> its metric scores, one query for all ``rows`` (objects with a ``response_id``)."""
    return reply_metric_scores(response_ids=[int(row.response_id) for row in rows])


def study_scoring_context(context: template.Context, study: Study) -> dict[str, Any]:
    request = context.get("request")

    def kept(name: str) -> KeptForm | None:
        return form_data_take(request, form=name, study_id=study.pk) if request is not None else None

    def bound(form: forms.BaseForm, stash: KeptForm | None) -> forms.BaseForm:
        if stash is not None:
            form_errors_restore(form, stash.errors)
        return form

    run, models, training = kept("run"), kept("models"), kept("training")
    return {
        "study": study,
        "scoring_form": bound(
            ScoringRunForm(run.data if run else None, study=study, user=getattr(request, "user", None)), run
        ),
        "model_form": bound(StudyModelChoiceForm(models.data if models else None, study=study), models),
        "models_kept": models is not None,
        "training_form": bound(TrainingJobForm(training.data if training else None), training),
        "training_kept": training is not None,
        "training_jobs": training_jobs_for_study(study=study)[:10],
        "runs": scoring_runs_for_study(study=study)[:10],
    }

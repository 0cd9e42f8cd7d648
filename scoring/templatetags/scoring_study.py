"""The study page's scoring section (the run form, the model choice, training a model, the runs and training
jobs with live progress), as a template tag: the annotation app's study page includes it by name, so the
annotation app never imports the scoring app (the import-linter layers contract in pyproject.toml).

A form that the researcher posted with an error comes back bound to what they chose, with its errors
(``scoring.form_stash``).
"""

from __future__ import annotations

from typing import Any

from django import forms, template

from annotation.models import Study
from scoring.form_stash import KeptForm, form_data_take, form_errors_restore
from scoring.forms import ScoringRunForm, StudyModelChoiceForm, TrainingJobForm
from scoring.selectors import scoring_runs_for_study, training_jobs_for_study

register = template.Library()


@register.inclusion_tag("scoring/_study_scoring.html", takes_context=True)
def study_scoring(context: template.Context, study: Study) -> dict[str, Any]:
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
        "scoring_form": bound(ScoringRunForm(run.data if run else None, study=study), run),
        "model_form": bound(StudyModelChoiceForm(models.data if models else None, study=study), models),
        "models_kept": models is not None,
        "training_form": bound(TrainingJobForm(training.data if training else None), training),
        "training_kept": training is not None,
        "training_jobs": training_jobs_for_study(study=study)[:10],
        "runs": scoring_runs_for_study(study=study)[:10],
        "csrf_token": context.get("csrf_token"),
        "request": request,
    }

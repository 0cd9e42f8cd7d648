from __future__ import annotations

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation.selectors.studies import studies_visible_to
from kernel.permissions import authenticated_user, researcher_required
from scoring.form_stash import form_data_stash
from scoring.judges.run_fields import JUDGE_FORM_FIELDS
from scoring.models import ScoringRun
from scoring.runs.forms import ScoringRunForm, StudyModelChoiceForm
from scoring.services import JudgeChoiceError, ScoringRequestError, scoring_run_cancel, scoring_run_create
from scoring.trained_model_services import TrainedModelError, study_model_choose


@researcher_required
@require_POST
def scoring_run_start(request: HttpRequest, study_id: int) -> HttpResponse:
    user = authenticated_user(request)
    study = get_object_or_404(studies_visible_to(user=user), pk=study_id)
    form = ScoringRunForm(request.POST, study=study, user=user)
    if not form.is_valid():
        _report_form_errors(request, form)
        form_data_stash(request, form="run", study_id=study.pk, errors=form.errors)  # choices shown again
        return redirect("annotation:study-detail", study_id=study.pk)
    try:
        run = scoring_run_create(
            study=study,
            metrics=form.cleaned_data["metrics"],
            references=form.cleaned_data["references"],
            tokenizer=form.cleaned_data["tokenizer"],
            user=user,
            models=form.model_names(),
            recompute=form.cleaned_data["recompute"],
            implementation=form.implementation_text(),
            options=form.options(),
            vectors=form.cleaned_data.get("vectors") or "",
            judges=form.judge_requests(),
        )
    except ScoringRequestError as error:
        messages.error(request, str(error))
        form_data_stash(request, form="run", study_id=study.pk, errors=_run_error(error))
    else:
        if run.was_existing:
            messages.info(
                request, f"Scoring run {run.pk} with these settings is already {run.get_status_display()}."
            )
        elif run.waiting_for is not None:
            messages.success(
                request,
                f"Scoring run {run.pk} created: it starts when the model {run.waiting_for.name} is trained.",
            )
        else:
            messages.success(request, f"Scoring run {run.pk} queued: {', '.join(run.metrics)}.")
    return redirect("annotation:study-detail", study_id=study.pk)


@researcher_required
@require_POST
def scoring_run_cancel_view(request: HttpRequest, run_id: int) -> HttpResponse:
    visible = ScoringRun.objects.filter(study__in=studies_visible_to(user=authenticated_user(request)))
    run = get_object_or_404(visible, pk=run_id)
    if scoring_run_cancel(run=run, user=authenticated_user(request)):
        messages.success(request, f"Scoring run {run.pk} cancelled; the scores it finished are kept.")
    else:
        messages.info(request, f"Scoring run {run.pk} had already ended ({run.get_status_display()}).")
    return redirect("annotation:study-detail", study_id=run.study_id)


@researcher_required
@require_POST
def study_models_choose(request: HttpRequest, study_id: int) -> HttpResponse:
    """Set the trained model of each kind the study's learned metrics use."""
    study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
    form = StudyModelChoiceForm(request.POST, study=study)
    if not form.is_valid():
        _report_form_errors(request, form)
        form_data_stash(request, form="models", study_id=study.pk, errors=form.errors)
        return redirect("annotation:study-detail", study_id=study.pk)
    try:
        with transaction.atomic():  # all the kinds or none
            for kind, model in form.choices().items():
                study_model_choose(study=study, trained_model=model, kind=kind)
    except TrainedModelError as error:
        messages.error(request, str(error))
        form_data_stash(request, form="models", study_id=study.pk, errors={"__all__": [str(error)]})
    else:
        messages.success(request, "Trained models saved.")
    return redirect("annotation:study-detail", study_id=study.pk)


def _run_error(error: ScoringRequestError) -> dict[str, list[str]]:
    """The run service's error under the form field it is about (a judge's field, else the form's)."""
    if isinstance(error, JudgeChoiceError) and error.field in JUDGE_FORM_FIELDS:
        return {JUDGE_FORM_FIELDS[error.field]: [error.detail]}
    return {"__all__": [str(error)]}


def _report_form_errors(request: HttpRequest, form: forms.Form) -> None:
    for field, errors in form.errors.items():
        label = "form" if field == "__all__" else field
        messages.error(request, f"{label}: {' '.join(str(error) for error in errors)}")

"""Pages for training learned metrics: start a training from the study page, follow a job (progress
bar, training curve, cancel), and the list of trained models with their figures.

Thin: the form validates input, :mod:`scoring.services.training_jobs` does the work, the job page polls
``GET /api/training-jobs/<id>/`` for live progress (static/scoring/training.js).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.selectors.studies import studies_visible_to
from kernel.permissions import authenticated_user, researcher_required
from scoring.form_stash import form_data_stash
from scoring.selectors import trained_model_rows, training_job_progress_text, training_jobs_visible_to
from scoring.services.training_jobs import TrainingJobError, training_job_cancel, training_job_create
from scoring.training.forms import TrainingJobForm

FORM_FIELDS = set(TrainingJobForm.base_fields)


@researcher_required
@require_POST
def training_job_start(request: HttpRequest, study_id: int) -> HttpResponse:
    """Start a training from the study page; on an error, back to the page with the choices kept."""
    study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
    form = TrainingJobForm(request.POST, request.FILES)
    back = reverse("annotation:study-detail", args=[study.pk]) + "#training"
    if form.is_valid():
        try:
            job = training_job_create(
                user=authenticated_user(request),
                kind=form.cleaned_data["kind"],
                name=form.cleaned_data["name"],
                corpus_format=form.cleaned_data["corpus_format"],
                corpus_path="" if form.cleaned_data["corpus_file"] else form.cleaned_data["corpus"],
                upload=form.cleaned_data["corpus_file"],
                parameters=form.parameters(),
                make_default=form.cleaned_data["make_default"],
                study=study,
            )
        except TrainingJobError as error:
            form.add_error(error.field if error.field in FORM_FIELDS else None, error.message)
        else:
            # Tagged: the job page takes it away once the job has finished (static/scoring/training.js).
            messages.success(
                request,
                f"Training job {job.pk} queued: {job.kind} model {job.name}.",
                extra_tags="job-queued",
            )
            return redirect("scoring:training-job", job_id=job.pk)
    for field, errors in form.errors.items():
        label = "training" if field == "__all__" else field
        messages.error(request, f"{label}: {' '.join(str(error) for error in errors)}")
    form_data_stash(request, form="training", study_id=study.pk, errors=form.errors)
    return redirect(back)


@researcher_required
def training_job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(training_jobs_visible_to(user=authenticated_user(request)), pk=job_id)
    return render(
        request,
        "scoring/training_job.html",
        {"job": job, "progress_text": training_job_progress_text(job=job)},
    )


@researcher_required
@require_POST
def training_job_cancel_view(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(training_jobs_visible_to(user=authenticated_user(request)), pk=job_id)
    if training_job_cancel(job=job, user=authenticated_user(request)):
        if job.status == "cancelled":
            messages.success(request, f"Training job {job.pk} cancelled.")
        else:
            messages.success(request, f"Training job {job.pk} stops at its next progress report.")
    else:
        messages.info(request, f"Training job {job.pk} had already ended ({job.get_status_display()}).")
    return redirect("scoring:training-job", job_id=job.pk)


@researcher_required
def trained_models_list(request: HttpRequest) -> HttpResponse:
    """Every trained model with its corpus, pairs, epochs, cells, validation accuracy, size and hash, and
    the researcher's training jobs."""
    user = authenticated_user(request)
    return render(
        request,
        "scoring/trained_models.html",
        {"rows": trained_model_rows(), "jobs": training_jobs_visible_to(user=user)[:50]},
    )

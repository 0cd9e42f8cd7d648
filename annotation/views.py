"""Web pages for researchers (their studies) and annotators (their own work). Views only translate HTTP."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.forms import StudyCreateForm, StudyImportForm
from annotation.importers import ImportRejected
from annotation.models import ImportJob
from annotation.selectors.import_jobs import import_counts_text, study_import_jobs
from annotation.selectors.studies import (
    studies_for_annotator,
    studies_visible_to,
    study_counts,
    study_imports,
    systems_with_counts,
)
from annotation.services.import_jobs import import_upload
from annotation.services.studies import study_create
from annotation.views_work import study_cards
from kernel.permissions import authenticated_user, researcher_required
from kernel.roles import user_is_researcher


@login_required
def home(request: HttpRequest) -> HttpResponse:
    if user_is_researcher(request.user):
        return redirect("annotation:study-list")
    roles = studies_for_annotator(user=authenticated_user(request))
    return render(
        request, "annotation/annotator_home.html", {"roles": roles, "cards": study_cards(annotators=roles)}
    )


@researcher_required
def study_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "annotation/study_list.html",
        {"studies": studies_visible_to(user=authenticated_user(request))},
    )


@researcher_required
def study_new(request: HttpRequest) -> HttpResponse:
    form = StudyCreateForm(request.POST or None, owner=authenticated_user(request))
    if request.method == "POST" and form.is_valid():
        study = study_create(owner=authenticated_user(request), **form.cleaned_data)
        messages.success(request, f"Study “{study.name}” created. Import its data next.")
        return redirect("annotation:study-detail", study_id=study.pk)
    return render(request, "annotation/study_new.html", {"form": form})


def _study_page(
    request: HttpRequest,
    study_id: int,
    import_form: StudyImportForm | None = None,
    *,
    import_rejected: bool = False,
) -> HttpResponse:
    study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
    context = {
        "study": study,
        "counts": study_counts(study=study),
        "systems": systems_with_counts(study=study),
        "imports": study_imports(study=study)[:10],
        "import_jobs": study_import_jobs(study=study)[:5],
        "inline_limit": settings.DIALEVAL_IMPORT_INLINE_MAX_BYTES,
        "import_form": import_form or StudyImportForm(study=study),
        "import_rejected": import_rejected,  # the form's errors are the problems of a rejected file
    }
    return render(request, "annotation/study_detail.html", context, status=400 if import_form else 200)


@researcher_required
def study_detail(request: HttpRequest, study_id: int) -> HttpResponse:
    return _study_page(request, study_id)


@researcher_required
@require_http_methods(["GET", "POST"])
def study_import_upload(request: HttpRequest, study_id: int) -> HttpResponse:
    """POST: an upload. GET (the address a rejected upload leaves in the address bar, reloaded): the study
    page's import form, not an empty 405."""
    study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
    if request.method == "GET":
        return redirect(reverse("annotation:study-detail", args=[study.pk]) + "#import")
    form = StudyImportForm(request.POST, request.FILES, study=study)
    if not form.is_valid():
        return _study_page(request, study_id, import_form=form)
    try:
        # Small uploads are imported here; a large one is queued for a worker (annotation/services/import_jobs.py).
        record = import_upload(
            study=study,
            format=form.cleaned_data["format"],
            uploads=form.cleaned_data["files"],
            user=authenticated_user(request),
            question=form.cleaned_data.get("question") or None,
        )
    except ImportRejected as rejected:
        for problem in rejected.problems:
            form.add_error(None, str(problem))
        return _study_page(request, study_id, import_form=form, import_rejected=True)
    if isinstance(record, ImportJob):
        return redirect("annotation:study-import-job", study_id=study.pk, job_id=record.pk)
    summary = import_counts_text(record.counts)
    messages.success(request, f"Imported {', '.join(record.filenames)}: {summary or 'nothing new'}.")
    for warning in record.warnings[:20]:
        messages.warning(request, warning)
    return redirect("annotation:study-detail", study_id=study.pk)

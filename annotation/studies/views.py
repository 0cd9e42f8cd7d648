"""The home page (a researcher's studies, an annotator's study cards), the study list, a new study and the
study page. Views only translate HTTP."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation.selectors.import_jobs import study_import_jobs
from annotation.selectors.studies import (
    studies_for_annotator,
    studies_visible_to,
    study_counts,
    study_imports,
    systems_with_counts,
)
from annotation.services.studies import study_create
from annotation.studies.forms import StudyCreateForm
from annotation.study_data.forms import StudyImportForm
from annotation.work.views import study_cards
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


def study_page(
    request: HttpRequest,
    study_id: int,
    import_form: StudyImportForm | None = None,
    *,
    import_rejected: str = "",
) -> HttpResponse:
    """The study page; with ``import_form``, re-rendered (400) around an upload it refused
    (annotation/study_data/views.py). ``import_rejected``: for a rejected file, the sentence that counts its
    problems ("80 problems in all."), shown under them."""
    study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
    context = {
        "study": study,
        "counts": study_counts(study=study),
        "systems": systems_with_counts(study=study),
        "imports": study_imports(study=study)[:10],
        "import_jobs": study_import_jobs(study=study)[:5],
        "inline_limit": settings.DIALEVAL_IMPORT_INLINE_MAX_BYTES,
        "import_form": import_form or StudyImportForm(study=study),
        "import_rejected": import_rejected,  # the form's errors are the problems of a rejected file, grouped
    }
    return render(request, "annotation/study_detail.html", context, status=400 if import_form else 200)


@researcher_required
def study_detail(request: HttpRequest, study_id: int) -> HttpResponse:
    return study_page(request, study_id)

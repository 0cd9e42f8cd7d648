from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation.permissions import authenticated_user, researcher_required
from annotation.selectors.studies import studies_visible_to
from scoring.forms import ScoringRunForm
from scoring.services import ScoringRequestError, scoring_run_create


@researcher_required
@require_POST
def scoring_run_start(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
    form = ScoringRunForm(request.POST)
    if not form.is_valid():
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(str(error) for error in errors)}")
        return redirect("annotation:study-detail", study_id=study.pk)
    try:
        run = scoring_run_create(
            study=study,
            metrics=form.cleaned_data["metrics"],
            references=form.cleaned_data["references"],
            user=authenticated_user(request),
        )
    except ScoringRequestError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Scoring run {run.pk} queued: {', '.join(run.metrics)}.")
    return redirect("annotation:study-detail", study_id=study.pk)

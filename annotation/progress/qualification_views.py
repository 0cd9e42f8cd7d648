"""The researcher's side of the qualification round, on the study's annotation page: mark a
reply as a training item (gold range, explanation), remove one, and send a volunteer through the round
again. Only the study's owner gets in (another researcher gets 404, an annotator 403); every change is a
POST with CSRF that redirects back, or re-renders the page with the form's errors (status 400).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from annotation.joining.forms import TrainingItemForm
from annotation.progress.views import _back, _own_annotator, _own_study, _page
from annotation.services.qualification import (
    TrainingInvalid,
    qualification_reset,
    training_item_add,
    training_item_delete,
)
from kernel.permissions import researcher_required

FORM_FIELDS = {"response": "reply", "question": "question", "gold_min": "gold_min", "gold_max": "gold_max"}


@researcher_required
@require_POST
def study_training_add(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    form = TrainingItemForm(request.POST, study=study, prefix="training")
    if form.is_valid():
        try:
            item = training_item_add(
                study=study,
                response=form.cleaned_data["reply"],
                question=form.cleaned_data["question"],
                gold_min=form.cleaned_data["gold_min"],
                gold_max=form.cleaned_data["gold_max"],
                explanation=form.cleaned_data["explanation"],
            )
        except TrainingInvalid as invalid:
            field = FORM_FIELDS.get(invalid.field, invalid.field)
            form.add_error(field if field in form.fields else None, invalid.message)
        else:
            messages.success(request, f"Reply {item.response_id} is now training item {item.pk}.")
            return _back(study, "#qualification")
    return _page(request, study, status=400, training_form=form)


@researcher_required
@require_POST
def study_training_delete(request: HttpRequest, study_id: int, item_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    if training_item_delete(study=study, training_item_id=item_id):
        messages.success(request, f"Training item {item_id} removed (with the answers to it).")
    else:
        messages.warning(request, "That training item was already gone.")
    return _back(study, "#qualification")


@researcher_required
@require_POST
def study_annotator_requalify(request: HttpRequest, study_id: int, annotator_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    annotator = qualification_reset(annotator=_own_annotator(study, annotator_id))
    messages.success(request, f"{annotator.pseudonym} does the qualification round again.")
    return _back(study, "#qualification")

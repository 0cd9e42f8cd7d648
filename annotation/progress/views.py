"""The researcher's annotation page of a study: progress, annotators' quality, attention checks, settings
and the invite link. Views only translate HTTP; every change goes through a service.

Only the study's owner gets in (``studies_visible_to``: another researcher gets 404, an annotator 403).
Every change is a POST with CSRF that redirects back (or re-renders with the errors, status 400).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.joining.forms import TrainingItemForm
from annotation.models import Annotator, Response, Study
from annotation.progress.forms import (
    INCLUSION_CHOICES,
    AnnotationSettingsForm,
    CheckMarkForm,
    DistractorsForm,
    InclusionForm,
)
from annotation.selectors.admission import admission_rows, training_item_rows
from annotation.selectors.progress import (
    annotator_rows,
    least_complete_items,
    ratings_histogram,
    study_annotator,
    study_checks,
    task_progress,
)
from annotation.selectors.qualification_warning import one_mistake_warning
from annotation.selectors.quality import STRAIGHT_MIN_RATINGS, STRAIGHT_SHARE
from annotation.selectors.studies import studies_visible_to
from annotation.services.annotator_review import annotator_inclusion_set, annotator_unblock
from annotation.services.annotators import invite_token_rotate
from annotation.services.checks import CheckInvalid, check_mark, distractors_generate
from annotation.services.study_settings import SettingsInvalid, annotation_settings_update
from kernel.permissions import authenticated_user, researcher_required
from stats.agreement import MIN_SHARED_ITEMS


def _own_study(request: HttpRequest, study_id: int) -> Study:
    return get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)


def _own_annotator(study: Study, annotator_id: int) -> Annotator:
    try:
        return study_annotator(study=study, annotator_id=annotator_id)
    except Annotator.DoesNotExist:
        raise Http404("No such annotator in this study.") from None


def _back(study: Study, anchor: str = "") -> HttpResponse:
    return redirect(reverse("annotation:study-annotation", args=[study.pk]) + anchor)


def _page(request: HttpRequest, study: Study, status: int = 200, **forms: Any) -> HttpResponse:
    annotators = annotator_rows(study=study)
    context = {
        "study": study,
        "tasks": task_progress(study=study),
        "annotators": annotators,
        # The table's note says why anonymous imported raters have no agreement or straight-lining figures.
        "has_anonymous_raters": any(not row.quality.identity_known for row in annotators),
        "items": least_complete_items(study=study),
        "histogram": ratings_histogram(study=study),
        "checks": study_checks(study=study),
        "invite_url": request.build_absolute_uri(reverse("work:join", args=[study.invite_token])),
        "settings_form": forms.get("settings_form") or AnnotationSettingsForm.for_study(study),
        "mark_form": forms.get("mark_form") or CheckMarkForm(study=study, prefix="mark"),
        "distractors_form": forms.get("distractors_form")
        or DistractorsForm(study=study, prefix="distractors"),
        "inclusion_choices": INCLUSION_CHOICES,
        # Joining and the qualification round (annotation/progress/qualification_views.py).
        "admission_rows": admission_rows(study=study),
        "training_items": training_item_rows(study=study),
        "training_form": forms.get("training_form") or TrainingItemForm(study=study, prefix="training"),
        "qualification_warning": one_mistake_warning(study=study),
        "rules": {
            "min_shared": MIN_SHARED_ITEMS,
            "straight_min": STRAIGHT_MIN_RATINGS,
            "straight_percent": round(100 * STRAIGHT_SHARE),
        },
    }
    return render(request, "annotation/progress.html", context, status=status)


@researcher_required
def study_annotation(request: HttpRequest, study_id: int) -> HttpResponse:
    return _page(request, _own_study(request, study_id))


@researcher_required
@require_POST
def study_annotation_settings(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    form = AnnotationSettingsForm.for_study(study, data=request.POST)
    if form.is_valid():
        try:
            changed = annotation_settings_update(study=study, settings=form.annotation_settings())
        except SettingsInvalid as invalid:
            field = "hold_minutes" if invalid.field == "hold_seconds" else invalid.field
            form.add_error(field if field in form.fields else None, invalid.message)
        else:
            messages.success(request, f"Saved: {', '.join(changed)}." if changed else "Nothing changed.")
            return _back(study, "#settings")
    study.refresh_from_db()
    return _page(request, study, status=400, settings_form=form)


@researcher_required
@require_POST
def study_check_mark(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    form = CheckMarkForm(request.POST, study=study, prefix="mark")
    if form.is_valid():
        response = Response.objects.filter(pk=form.cleaned_data["response"], context__study=study).first()
        if response is None:
            form.add_error("response", "No reply of this study has that id.")
        else:
            try:
                check = check_mark(
                    study=study,
                    response=response,
                    question=form.cleaned_data["question"],
                    expected_min=form.cleaned_data["expected_min"],
                    expected_max=form.cleaned_data["expected_max"],
                )
            except CheckInvalid as invalid:
                form.add_error(invalid.field if invalid.field in form.fields else None, invalid.message)
            else:
                messages.success(request, f"Reply {response.pk} is now attention check {check.pk}.")
                return _back(study, "#checks")
    return _page(request, study, status=400, mark_form=form)


@researcher_required
@require_POST
def study_check_distractors(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    form = DistractorsForm(request.POST, study=study, prefix="distractors")
    if form.is_valid():
        try:
            made = distractors_generate(
                study=study, count=form.cleaned_data["count"], question=form.cleaned_data["question"]
            )
        except CheckInvalid as invalid:
            form.add_error(invalid.field if invalid.field in form.fields else None, invalid.message)
        else:
            messages.success(request, f"Made {len(made)} distractor checks.")
            return _back(study, "#checks")
    return _page(request, study, status=400, distractors_form=form)


@researcher_required
@require_POST
def study_invite_rotate(request: HttpRequest, study_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    invite_token_rotate(study=study)
    messages.success(request, "A new invite link is ready; the old one no longer works.")
    return _back(study, "#invite")


@researcher_required
@require_POST
def study_annotator_inclusion(request: HttpRequest, study_id: int, annotator_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    annotator = _own_annotator(study, annotator_id)
    form = InclusionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose auto, include or exclude.")
        return _back(study, "#annotators")
    annotator_inclusion_set(annotator=annotator, inclusion=form.cleaned_data["report_inclusion"])
    messages.success(request, f"{annotator.pseudonym}: {annotator.get_report_inclusion_display()}.")
    return _back(study, "#annotators")


@researcher_required
@require_POST
def study_annotator_unblock(request: HttpRequest, study_id: int, annotator_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    annotator = annotator_unblock(annotator=_own_annotator(study, annotator_id))
    messages.success(request, f"{annotator.pseudonym} gets work again.")
    return _back(study, "#annotators")

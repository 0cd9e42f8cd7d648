"""The annotator's own history in a study: their last answers, newest first, with a link to
change each one that is still open (annotation/selectors/history.py says when that is). Only the user's
own annotator role in the study gets a page (404 for anyone else), and it is blind like the item pages."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotation.models import Annotator
from annotation.selectors.history import HISTORY_LENGTH, annotator_history
from kernel.permissions import authenticated_user


@login_required
@require_GET
def work_history(request: HttpRequest, study_id: int) -> HttpResponse:
    annotator = get_object_or_404(
        Annotator.objects.select_related("study"), study_id=study_id, user=authenticated_user(request)
    )
    context = {
        "study": annotator.study,
        "annotator": annotator,
        "entries": annotator_history(annotator=annotator),
        "limit": HISTORY_LENGTH,
    }
    return render(request, "annotation/work/history.html", context)

"""An annotator's comment or flag on one of their items: a small POST form under the item.

Without JavaScript the form posts, and the page redirects back to the item with a message saying the note
was recorded (or what was wrong with it); static/annotation/notes.js sends the same form in the
background (``Accept: application/json``) and answers with JSON, so the item stays as it was, answers
half given included. A note is not an answer: the queue does not move. An assignment that is not the
annotator's own, or that belongs to another task than the one in the URL (a pair's id under ``rate/``),
is a 404 that stores nothing, like every other annotator page (``own_assignment`` of annotation/work/views.py:
attention checks belong to the rating task).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation.models import Annotator, Assignment, NoteKind
from annotation.services.notes import NoteInvalid, item_note_add
from annotation.work.views import own_assignment
from kernel.permissions import authenticated_user

RECORDED = {
    NoteKind.FLAG: "Thank you: your flag was recorded. You can go on with the item.",
    NoteKind.COMMENT: "Thank you: your comment was recorded. You can go on with the item.",
}


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@login_required
@require_POST
def item_note(request: HttpRequest, study_id: int, kind: str, assignment_id: int) -> HttpResponse:
    annotator = get_object_or_404(Annotator, study_id=study_id, user=authenticated_user(request))
    assignment = own_assignment(annotator, assignment_id, kind)  # the page we come back to must be its own
    note_kind = request.POST.get("kind", "")
    # The form's reason list only applies to flags; a comment sent with one picked keeps its text.
    reason = request.POST.get("reason", "") if note_kind == NoteKind.FLAG else ""
    try:
        item_note_add(
            annotator=annotator,
            assignment_id=assignment.pk,
            kind=note_kind,
            reason=reason,
            text=request.POST.get("text", ""),
        )
    except Assignment.DoesNotExist:
        raise Http404("No such item in your queue.") from None
    except NoteInvalid as invalid:
        if _wants_json(request):
            return JsonResponse({"field": invalid.field, "detail": invalid.message}, status=400)
        messages.error(request, f"Your note was not sent: {invalid.field}: {invalid.message}")
        return redirect("work:item", study_id=study_id, kind=kind, assignment_id=assignment_id)
    message = RECORDED[NoteKind(note_kind)]
    if _wants_json(request):
        return JsonResponse({"recorded": True, "detail": message})
    messages.success(request, message)
    return redirect("work:item", study_id=study_id, kind=kind, assignment_id=assignment_id)

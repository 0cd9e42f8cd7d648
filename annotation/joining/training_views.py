"""The qualification round as the volunteer sees it: one training item at a time, like a rating
item with one question, and after each answer a feedback page (right or wrong, the right range, the
researcher's explanation) before the next one. When all are answered the round's result is shown: passed
(with the study's tasks) or, politely, failed.

``/work/<study>/training/`` shows the next unanswered item (or the result); the answer is POSTed to
``/work/<study>/training/<item>/``, which redirects to the same URL's GET: the feedback (post/redirect/get,
so a reload never answers twice). The feedback of an item not answered yet is never shown. The time on an
item is measured by the server, from when its page was shown. Rules live in
annotation/services/qualification.py.
"""

from __future__ import annotations

import time
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation.models import Annotator, TrainingItem
from annotation.selectors.admission import (
    CONSENT,
    admission_step,
    study_has_training,
    training_answer_of,
    training_item_payload,
    training_next,
    training_score,
)
from annotation.services.qualification import (
    PENDING,
    QualificationClosed,
    TrainingFeedback,
    TrainingInvalid,
    qualification_decide,
    training_answer_submit,
    training_feedback,
)
from annotation.work.views import _turns_with_sides, rating_questions, task_cards
from kernel.permissions import authenticated_user

SERVED_KEY = "training-served"
MAX_SECONDS = 86_400.0


def _annotator(request: HttpRequest, study_id: int) -> Annotator:
    return get_object_or_404(
        Annotator.objects.select_related("study"), study_id=study_id, user=authenticated_user(request)
    )


def _gate(annotator: Annotator) -> HttpResponse | None:
    """Consent comes first; a study without training items has no round to show."""
    step = admission_step(annotator=annotator)
    if step is not None and step.step == CONSENT:
        return redirect("work:consent", study_id=annotator.study_id)
    if not study_has_training(study_id=annotator.study_id):
        return redirect("work:study", study_id=annotator.study_id)
    return None


def _points(item: TrainingItem, chosen: object = None) -> list[dict[str, Any]]:
    question = item.question
    return [
        {"value": value, "label": question.label_for(value), "checked": str(chosen) == str(value)}
        for value in question.scale_points
    ]


def _page(
    request: HttpRequest,
    annotator: Annotator,
    *,
    item: TrainingItem | None = None,
    feedback: TrainingFeedback | None = None,
    error: TrainingInvalid | None = None,
    posted: object = None,
    status: int = 200,
) -> HttpResponse:
    score = feedback.score if feedback is not None else training_score(annotator=annotator)
    qualification = feedback.qualification if feedback is not None else str(annotator.qualification)
    shown = feedback.item if feedback is not None else item
    context: dict[str, Any] = {
        "study": annotator.study,
        "annotator": annotator,
        "score": score,
        "qualification": qualification,
        "threshold_percent": round(100 * annotator.study.qualification_threshold),
        "feedback": feedback,
        "error": error,
        "number": min(score.answered + 1, score.total),  # the item on screen, when it asks a question
    }
    if shown is not None:
        payload = training_item_payload(item=shown)
        question: dict[str, Any] = payload["question"]  # type: ignore[assignment]
        chosen = feedback.value if feedback is not None else posted
        # The rating page's screen and keys (static/annotation/work.js), posting one "value".
        questions = rating_questions(
            {"questions": [question]}, {} if chosen is None else {question["name"]: chosen}, None
        )
        questions[0].update(field="value", error=error.message if error is not None else "")
        context.update(
            item=shown,
            payload=payload,
            turns=_turns_with_sides(payload["turns"]),  # type: ignore[arg-type]
            points=_points(shown, chosen),
            questions=questions,
            posted="" if posted is None else posted,
        )
    if qualification != PENDING:
        context["tasks"] = task_cards(annotator=annotator) if qualification == "passed" else []
    return render(request, "annotation/work/training.html", context, status=status)


@login_required
def training(request: HttpRequest, study_id: int) -> HttpResponse:
    """The next training item, or the round's result once every item is answered."""
    annotator = _annotator(request, study_id)
    if (elsewhere := _gate(annotator)) is not None:
        return elsewhere
    if annotator.qualification == PENDING:
        item = training_next(annotator=annotator)
        if item is not None:
            request.session[SERVED_KEY] = {"item": item.pk, "at": time.time()}
            return _page(request, annotator, item=item)
        qualification_decide(annotator=annotator)  # every item answered (or the last one was removed)
    return _page(request, annotator)


def _seconds(request: HttpRequest, item_id: int) -> float | None:
    served = request.session.get(SERVED_KEY) or {}
    if served.get("item") != item_id:
        return None
    seconds = time.time() - float(served.get("at", 0))
    return round(seconds, 3) if 0 <= seconds < MAX_SECONDS else None


@login_required
@require_http_methods(["GET", "POST"])
def training_item(request: HttpRequest, study_id: int, item_id: int) -> HttpResponse:
    """GET: the feedback on the annotator's answer to this item. POST: the answer."""
    annotator = _annotator(request, study_id)
    if (elsewhere := _gate(annotator)) is not None:
        return elsewhere
    if request.method == "POST":
        value = request.POST.get("value", "").strip()
        try:
            training_answer_submit(
                annotator=annotator,
                training_item_id=item_id,
                value=value,
                seconds=_seconds(request, item_id),
            )
        except TrainingInvalid as invalid:
            item = TrainingItem.objects.filter(pk=item_id, study_id=study_id).first()
            if item is None:
                messages.warning(request, "That practice item is gone; here is the next one.")
                return redirect("work:training", study_id=study_id)
            return _page(request, annotator, item=item, error=invalid, posted=value, status=400)
        except QualificationClosed as closed:
            messages.info(request, str(closed))
            return redirect("work:training", study_id=study_id)
        request.session.pop(SERVED_KEY, None)
        return redirect("work:training-item", study_id=study_id, item_id=item_id)
    answer = training_answer_of(annotator=annotator, training_item_id=item_id)
    if answer is None:  # no peeking at the right answer before answering
        return redirect("work:training", study_id=study_id)
    return _page(request, annotator, feedback=training_feedback(annotator=annotator, answer=answer))

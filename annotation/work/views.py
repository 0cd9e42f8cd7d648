"""Annotator pages: join a study through its invite link, then rate replies, write references and judge
diversity, one item at a time.

Views only translate HTTP. The assignment engine (services.assignment) decides what comes next, the
submission services validate and store, and selectors.work builds the blind item payload (no system
name, no other rater's value). Every page first looks up the requesting user's own Annotator row in the
study and answers 404 without one, so an annotator only ever reaches their own queue; assignment ids
are looked up among that annotator's own assignments too.

Forms are plain POST forms (radio buttons, checkboxes, a textarea) that work without JavaScript;
static/annotation/work.js adds the keyboard, the timers and the client-side checks. Every successful
POST redirects (post/redirect/get), so a reload never submits twice.

The invite link, sign-up and the consent page are in annotation/joining/views.py, the qualification round in
annotation/joining/training_views.py; ``@admission_required`` (annotation/joining/admission.py) sends a volunteer who
has not consented or qualified yet there instead of to an item.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation.joining.admission import admission_required, study_page_extras
from annotation.models import Annotator, Assignment, AssignmentStatus, Study, WorkKind
from annotation.selectors.work import AnnotatorProgress, annotator_progress, annotator_tasks, item_payload
from annotation.services.assignment import (
    NoWork,
    SlotLost,
    assignment_for,
    assignment_skip,
    assignment_visit,
    kinds_served,
    next_assignment,
    previous_assignment,
)
from annotation.services.pairwise import pairwise_submit
from annotation.services.submissions import (
    SubmissionInvalid,
    diversity_submit,
    rating_submit,
    reference_add,
)
from kernel.permissions import authenticated_user

TASK_LABELS = {
    WorkKind.RATE: "Rate replies",
    WorkKind.WRITE: "Write references",
    WorkKind.DIVERSITY: "Judge diversity",
    WorkKind.PAIR: "Compare replies",
}
TEMPLATES = {
    WorkKind.RATE: "annotation/work/rate.html",
    WorkKind.WRITE: "annotation/work/write.html",
    WorkKind.DIVERSITY: "annotation/work/diversity.html",
    WorkKind.PAIR: "annotation/work/pair.html",
}
# "Back" re-opens an answered item to change it; written references are not edited that way.
KINDS_WITH_BACK = (WorkKind.RATE, WorkKind.DIVERSITY, WorkKind.PAIR)
MAX_SECONDS = 86_400.0


@dataclass(frozen=True)
class TaskCard:
    kind: str
    label: str
    url: str
    progress: AnnotatorProgress


@dataclass(frozen=True)
class StudyCard:
    annotator: Annotator
    tasks: list[TaskCard]


def task_cards(*, annotator: Annotator) -> list[TaskCard]:
    """The study's tasks for this annotator, each with their own progress and the page that serves it."""
    return [
        TaskCard(
            kind=kind,
            label=TASK_LABELS[WorkKind(kind)],
            url=reverse("work:next", args=[annotator.study_id, kind]),
            progress=annotator_progress(annotator=annotator, kind=kind),
        )
        for kind in annotator_tasks(annotator=annotator)
    ]


def study_cards(*, annotators: Iterable[Annotator]) -> list[StudyCard]:
    """One card per study the user joined (the annotator home page)."""
    return [StudyCard(annotator=annotator, tasks=task_cards(annotator=annotator)) for annotator in annotators]


def _annotator(request: HttpRequest, study_id: int, kind: str | None = None) -> Annotator:
    """The user's own annotator role in the study (404 for non-members), and a task the study has."""
    annotator = get_object_or_404(
        Annotator.objects.select_related("study"), study_id=study_id, user=authenticated_user(request)
    )
    if kind is not None and kind not in annotator_tasks(annotator=annotator):
        raise Http404("This study has no such task.")
    return annotator


def own_assignment(annotator: Annotator, assignment_id: int, kind: str) -> Assignment:
    """One of the annotator's own assignments of this task (attention checks belong to the rating task);
    404 for anyone else's and for one of another task, whose URL would name the wrong page. Also used by
    the note form (annotation/work/notes_views.py)."""
    try:
        assignment = assignment_for(annotator=annotator, assignment_id=assignment_id)
    except Assignment.DoesNotExist:
        raise Http404("No such item in your queue.") from None
    if assignment.item.kind not in kinds_served(kind):
        raise Http404("No such item in this task.")
    return assignment


def _seconds(request: HttpRequest) -> float | None:
    """The client-measured time on the item; missing or implausible values (no JavaScript) are None."""
    try:
        value = float(request.POST.get("seconds", ""))
    except ValueError:
        return None
    if not math.isfinite(value) or not 0 <= value < MAX_SECONDS:
        return None
    return round(value, 3)


def _keystrokes(request: HttpRequest) -> int | None:
    """The key presses the page counted while the reply was typed (None without JavaScript)."""
    raw = request.POST.get("keystrokes", "")
    return int(raw) if raw.isdigit() and len(raw) < 7 else None


def _point_keys(values: list[int]) -> list[str]:
    """The keys that pick each scale point: the number itself on scales of non-negative points (typed
    digit by digit, so "10" is 1 then 0), else 1, 2, ... in order. Ordinal scales have at most 11 points."""
    if all(value >= 0 for value in values):
        return [str(value) for value in values]
    return [str(index + 1) for index in range(len(values))]


def rating_questions(
    payload: Mapping[str, Any], chosen: Mapping[str, object], error: SubmissionInvalid | None
) -> list[dict[str, Any]]:
    """The payload's questions with each point's key, its shown text and whether it is selected, and the
    name the form posts (``q-<name>``; the qualification round posts ``value``). Also the qualification
    round's screen (annotation/joining/training_views.py), so that its keys are the rating page's."""
    questions = []
    for index, question in enumerate(payload["questions"]):
        selected = str(chosen.get(question["name"], ""))
        if question["kind"] == "slider":
            questions.append(
                {
                    "name": question["name"],
                    "field": f"q-{question['name']}",
                    "first": index == 0,
                    "prompt": question["prompt"],
                    "kind": "slider",
                    "scale_min": question["scale_min"],
                    "scale_max": question["scale_max"],
                    "ends": question["ends"],
                    "value": selected,
                    "keys": "← → PgUp PgDn, or type the number",
                    "error": error.message if error is not None and error.field == question["name"] else "",
                }
            )
            continue
        values = [int(point["value"]) for point in question["points"]]
        points = []
        for point, key in zip(question["points"], _point_keys(values), strict=True):
            value, label = int(point["value"]), str(point["label"])
            text = label if label != str(value) else ""
            if key != str(value):
                text = f"{value} {text}".strip()
            points.append(
                {
                    "value": value,
                    "label": label,
                    "key": key,
                    "text": text,
                    "checked": selected == str(value),
                }
            )
        questions.append(
            {
                "name": question["name"],
                "field": f"q-{question['name']}",
                "first": index == 0,
                "prompt": question["prompt"],
                "kind": "ordinal",
                "points": points,
                "keys": f"{points[0]['key']}–{points[-1]['key']}" if points[0]["key"] else "",
                "error": error.message if error is not None and error.field == question["name"] else "",
            }
        )
    return questions


def _turns_with_sides(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each turn with a side, "a" or "b", so the page can tell speakers apart: the first speaker to talk
    is side a, the next one b, and so on alternately (turns without a speaker alternate by position)."""
    sides: dict[str, str] = {}
    shown = []
    for index, turn in enumerate(turns):
        speaker = str(turn["speaker"])
        side = sides.setdefault(speaker, "ab"[len(sides) % 2]) if speaker else "ab"[index % 2]
        shown.append({**turn, "side": side, "label": speaker or side.upper()})
    return shown


def _render_item(
    request: HttpRequest,
    annotator: Annotator,
    assignment: Assignment,
    *,
    status: int = 200,
    error: SubmissionInvalid | None = None,
    posted: Mapping[str, Any] | None = None,
) -> HttpResponse:
    """The page of one assignment; after an invalid POST, with the error and what was sent."""
    payload = item_payload(assignment=assignment)
    kind = str(payload["kind"])
    study: Study = annotator.study
    progress = annotator_progress(annotator=annotator, kind=kind)
    revisiting = assignment.status == AssignmentStatus.DONE
    # "Back" only when there is an earlier answer to go back to (the very first item has none): the same
    # lookup as task_back's, so the link and the b key never lead to "nothing to go back to".
    has_earlier = (
        kind in KINDS_WITH_BACK
        and previous_assignment(annotator=annotator, kind=kind, before=assignment.pk) is not None
    )
    context: dict[str, Any] = {
        "study": study,
        "annotator": annotator,
        "kind": kind,
        "item": payload,
        "turns": _turns_with_sides(payload["turns"]),
        "progress": progress,
        "revisiting": revisiting,
        "error": error,
        "submit_url": reverse("work:item", args=[study.pk, kind, assignment.pk]),
        "skip_url": reverse("work:skip", args=[study.pk, kind, assignment.pk]),
        "next_url": reverse("work:next", args=[study.pk, kind]),
        "back_url": (
            f"{reverse('work:back', args=[study.pk, kind])}?before={assignment.pk}" if has_earlier else ""
        ),
    }
    if kind == WorkKind.RATE:
        chosen = posted if posted is not None else (payload.get("answers") or {})
        context["questions"] = rating_questions(payload, chosen, error)
        context["show_instructions"] = progress.done == 0 and not revisiting
    elif kind == WorkKind.WRITE:
        written = list(payload["written"])
        context["number"] = min(len(written) + 1, int(payload["quota"]))
        context["text"] = (posted or {}).get("text", "")
        context["show_instructions"] = progress.done == 0 and not written
    elif kind == WorkKind.PAIR:  # the replies by side, never by id (annotation/selectors/pairwise_work.py)
        chosen = str((posted if posted is not None else payload.get("answers") or {}).get("choice", ""))
        context["replies"] = [
            {**reply, "checked": reply["position"] == chosen} for reply in payload["replies"]
        ]
        context["tie_checked"] = chosen == "tie"
        context["show_instructions"] = progress.done == 0 and not revisiting
    else:
        answers = payload.get("answers") or {}
        ticked = {int(pk) for pk in (posted or answers).get("appropriate", [])}
        context["replies"] = [
            {"number": index, "id": reply["id"], "text": reply["text"], "checked": reply["id"] in ticked}
            for index, reply in enumerate(payload["replies"], start=1)
        ]
        context["meanings"] = (posted or answers).get("meanings", "")
        context["show_instructions"] = progress.done == 0 and not revisiting
    return render(request, TEMPLATES[WorkKind(kind)], context, status=status)


def _no_work(request: HttpRequest, annotator: Annotator, kind: str, reason: NoWork) -> HttpResponse:
    back_url = reverse("work:back", args=[annotator.study_id, kind]) if kind in KINDS_WITH_BACK else ""
    context = {
        "study": annotator.study,
        "kind": kind,
        "label": TASK_LABELS[WorkKind(kind)],
        "reason": reason.reason,
        "message": reason.message,
        "progress": annotator_progress(annotator=annotator, kind=kind),
        "back_url": back_url if reason.reason in ("done", "cap") else "",
        "tasks": task_cards(annotator=annotator),
    }
    return render(request, "annotation/work/no_work.html", context)


@login_required
def study_work(request: HttpRequest, study_id: int) -> HttpResponse:
    """One joined study: its description, instructions and tasks, each with the annotator's progress."""
    annotator = _annotator(request, study_id)
    tasks = task_cards(annotator=annotator)
    return render(
        request,
        "annotation/work/study.html",
        {
            "study": annotator.study,
            "annotator": annotator,
            "tasks": tasks,
            **study_page_extras(annotator=annotator, tasks=tasks),  # consent/qualification, completion code
        },
    )


@login_required
@admission_required
def task_next(request: HttpRequest, study_id: int, kind: str) -> HttpResponse:
    """The annotator's current item of the task (a reload shows the same one), or a new one."""
    annotator = _annotator(request, study_id, kind)
    try:
        handout = next_assignment(annotator=annotator, kind=kind)
    except NoWork as reason:
        return _no_work(request, annotator, kind, reason)
    assignment_visit(assignment=handout.assignment)
    return _render_item(request, annotator, handout.assignment)


@login_required
@require_http_methods(["GET", "POST"])
@admission_required
def task_item(request: HttpRequest, study_id: int, kind: str, assignment_id: int) -> HttpResponse:
    """GET: one of the annotator's items (an answered one, to change it). POST: the answer to it."""
    annotator = _annotator(request, study_id, kind)
    assignment = own_assignment(annotator, assignment_id, kind)
    if request.method == "GET":
        gone = assignment.status not in (AssignmentStatus.ACTIVE, AssignmentStatus.DONE)  # skipped, expired
        all_written = kind == WorkKind.WRITE and assignment.status == AssignmentStatus.DONE
        if gone or all_written:
            return redirect("work:next", study_id=study_id, kind=kind)
        assignment_visit(assignment=assignment)  # reopening an answered item starts a new visit
        return _render_item(request, annotator, assignment)
    submit = {
        WorkKind.RATE: _rate_post,
        WorkKind.WRITE: _write_post,
        WorkKind.DIVERSITY: _diversity_post,
        WorkKind.PAIR: _pair_post,
    }
    try:
        return submit[WorkKind(kind)](request, annotator, assignment)
    except SlotLost as lost:
        messages.warning(request, str(lost))
        return redirect("work:next", study_id=study_id, kind=kind)


def _rate_post(request: HttpRequest, annotator: Annotator, assignment: Assignment) -> HttpResponse:
    values = {key[2:]: value for key, value in request.POST.items() if key.startswith("q-")}
    try:
        result = rating_submit(
            annotator=annotator,
            assignment_id=assignment.pk,
            values=values,
            seconds=_seconds(request),
            loaded=assignment,
        )
    except SubmissionInvalid as invalid:
        return _render_item(request, annotator, assignment, status=400, error=invalid, posted=values)
    for warning in result.warnings:
        messages.warning(request, warning)
    return redirect("work:next", study_id=annotator.study_id, kind=WorkKind.RATE)


def _write_post(request: HttpRequest, annotator: Annotator, assignment: Assignment) -> HttpResponse:
    text = request.POST.get("text", "").replace("\r\n", "\n")  # browsers send a textarea's newlines as CRLF
    try:
        result = reference_add(
            annotator=annotator,
            assignment_id=assignment.pk,
            text=text,
            seconds=_seconds(request),
            pasted=request.POST.get("pasted") == "1",
            keystrokes=_keystrokes(request),
            loaded=assignment,
        )
    except SubmissionInvalid as invalid:
        return _render_item(request, annotator, assignment, status=400, error=invalid, posted={"text": text})
    for warning in result.warnings:
        messages.warning(request, warning)
    if result.remaining == 0:
        messages.success(
            request, "Thank you: your replies to that conversation are saved. Here is the next one."
        )
    return redirect("work:next", study_id=annotator.study_id, kind=WorkKind.WRITE)


def _diversity_post(request: HttpRequest, annotator: Annotator, assignment: Assignment) -> HttpResponse:
    raw_appropriate = request.POST.getlist("appropriate")
    raw_meanings = request.POST.get("meanings", "").strip()
    posted: dict[str, Any] = {"appropriate": [], "meanings": raw_meanings}
    try:
        appropriate = [int(value) for value in raw_appropriate]
        posted["appropriate"] = appropriate
        if not raw_meanings.isdigit():
            raise SubmissionInvalid(
                "meanings", "enter how many different meanings the appropriate replies carry"
            )
        diversity_submit(
            annotator=annotator,
            assignment_id=assignment.pk,
            appropriate=appropriate,
            meanings=int(raw_meanings),
            seconds=_seconds(request),
            loaded=assignment,
        )
    except ValueError:
        invalid = SubmissionInvalid("appropriate", "only the replies shown can be marked appropriate")
        return _render_item(request, annotator, assignment, status=400, error=invalid, posted=posted)
    except SubmissionInvalid as invalid:
        return _render_item(request, annotator, assignment, status=400, error=invalid, posted=posted)
    return redirect("work:next", study_id=annotator.study_id, kind=WorkKind.DIVERSITY)


def _pair_post(request: HttpRequest, annotator: Annotator, assignment: Assignment) -> HttpResponse:
    """The side the annotator found better ("left", "right") or "tie" (annotation/services/pairwise.py)."""
    choice = request.POST.get("choice", "")
    try:
        pairwise_submit(
            annotator=annotator,
            assignment_id=assignment.pk,
            choice=choice,
            seconds=_seconds(request),
            loaded=assignment,
        )
    except SubmissionInvalid as invalid:
        return _render_item(
            request, annotator, assignment, status=400, error=invalid, posted={"choice": choice}
        )
    return redirect("work:next", study_id=annotator.study_id, kind=WorkKind.PAIR)


@login_required
@require_POST
@admission_required
def task_skip(request: HttpRequest, study_id: int, kind: str, assignment_id: int) -> HttpResponse:
    """Pass on an item: it goes back to the pool for others and is never offered to this annotator again."""
    annotator = _annotator(request, study_id, kind)
    assignment = own_assignment(annotator, assignment_id, kind)
    assignment_skip(annotator=annotator, assignment_id=assignment.pk)
    messages.info(request, "Skipped. Here is another one.")
    return redirect("work:next", study_id=study_id, kind=kind)


@login_required
@admission_required
def task_back(request: HttpRequest, study_id: int, kind: str) -> HttpResponse:
    """The annotator's previous answered item (before ``?before=<assignment id>``), to change the answer."""
    annotator = _annotator(request, study_id, kind)
    if kind not in KINDS_WITH_BACK:
        raise Http404("Written replies cannot be reopened.")
    before = request.GET.get("before", "")
    previous = previous_assignment(
        annotator=annotator, kind=kind, before=int(before) if before.isdigit() else None
    )
    if previous is None:
        messages.info(request, "There is no earlier answer to go back to.")
        return redirect("work:next", study_id=study_id, kind=kind)
    return redirect("work:item", study_id=study_id, kind=kind, assignment_id=previous.pk)

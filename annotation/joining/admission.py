"""The gate in front of every task page: a volunteer who has not accepted the consent yet, or
has a qualification round to do (or failed it), is sent to the page that deals with it instead of an item.

The rule itself is :func:`annotation.selectors.admission.admission_step`; the annotator API applies the same
rule in ``annotation.work.api._annotator``. Non-members pass through to the view, which answers 404.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any, Protocol

from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from annotation.models import Annotator
from annotation.selectors.admission import admission_step


def admission_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Redirect a volunteer who may not work yet to the consent or the qualification page (put it below
    ``@login_required``; the view receives ``study_id``)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        study_id = kwargs["study_id"]
        user = request.user
        annotator = (
            Annotator.objects.select_related("study").filter(study_id=study_id, user=user).first()
            if isinstance(user, User)
            else None
        )
        step = admission_step(annotator=annotator) if annotator is not None else None
        if step is not None:
            messages.info(request, step.message)
            return redirect(step.url_name, study_id=study_id)
        return view(request, *args, **kwargs)

    return wrapper


class _Progress(Protocol):
    @property
    def done(self) -> int: ...

    @property
    def total(self) -> int: ...


class _Task(Protocol):
    @property
    def progress(self) -> _Progress: ...


def study_page_extras(*, annotator: Annotator, tasks: Sequence[_Task]) -> dict[str, Any]:
    """What the annotator's study page adds for joining: the step still to take (a card with its link),
    and the completion code once every task is done (crowd platforms)."""
    step = admission_step(annotator=annotator)
    finished = any(task.progress.total for task in tasks) and all(
        task.progress.done >= task.progress.total for task in tasks
    )
    return {
        "admission": step,
        "completion_code": annotator.study.completion_code if finished and step is None else "",
    }

"""What a researcher chose in a form of the study page's scoring section, kept across the redirect that
follows an error ("every form keeps the user's choices after an error").

The scoring forms post to their own views, which redirect back to the study page (post/redirect/get: a
reload never posts twice). On an error the view stashes the posted values and the error messages in the
session under the form's name; the study page's scoring section (scoring/study_section.py) takes them back (once) and renders the
form bound to them, with the errors next to their fields, so the boxes ticked, the options chosen and the
numbers typed are still there. A file input cannot be refilled by any page; the form says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django import forms
from django.forms.utils import ErrorDict
from django.http import HttpRequest, QueryDict

SESSION_KEY = "scoring-form-stash"
NOT_KEPT = {"csrfmiddlewaretoken"}


@dataclass(frozen=True)
class KeptForm:
    data: QueryDict
    errors: dict[str, list[str]]


def form_data_stash(
    request: HttpRequest,
    *,
    form: str,
    study_id: int,
    errors: Mapping[str, Sequence[Any]] | None = None,
) -> None:
    """Keep the request's posted values (and the errors to show beside them) for the next rendering of
    ``form`` on the study's page."""
    stash = dict(request.session.get(SESSION_KEY, {}))
    stash[f"{form}:{study_id}"] = {
        "data": {key: values for key, values in request.POST.lists() if key not in NOT_KEPT},
        "errors": {
            field: [str(message) for message in messages] for field, messages in (errors or {}).items()
        },
    }
    request.session[SESSION_KEY] = stash


def form_data_take(request: Any, *, form: str, study_id: int) -> KeptForm | None:
    """What was stashed for ``form`` of the study (and forget it), or None."""
    session = getattr(request, "session", None)
    if session is None or SESSION_KEY not in session:
        return None
    stash = dict(session[SESSION_KEY])
    kept = stash.pop(f"{form}:{study_id}", None)
    if not isinstance(kept, dict):
        return None
    session[SESSION_KEY] = stash
    data = QueryDict(mutable=True)
    for key, items in dict(kept.get("data", {})).items():
        data.setlist(key, [str(item) for item in items])
    return KeptForm(data=data, errors={str(k): list(v) for k, v in dict(kept.get("errors", {})).items()})


def form_errors_restore(form: forms.BaseForm, errors: Mapping[str, Sequence[str]]) -> None:
    """Show ``errors`` on the bound ``form`` as they were when it was posted, without validating it again
    (an upload is not posted twice, and a service's error, a taken name say, is not the form's own)."""
    form._errors = ErrorDict()  # type: ignore[attr-defined]  # what BaseForm.errors reads
    form.cleaned_data = {}
    for field, messages in errors.items():
        form.add_error(field if field in form.fields else None, list(messages))

"""The researcher's item browser: every reply of a study with its ratings, disagreement, the
annotators' flags and comments, its metric scores and the researcher's adjudication; one reply's page;
and the adjudication itself (exclude from reports, gold values, undo).

Views only translate HTTP: the reads are annotation/selectors/item_browser.py's, the writes
annotation/services/adjudication.py's. Only the study's owner gets in; anyone else, annotators included,
gets 404, which does not even confirm that the study exists. Every change is a POST with CSRF that
redirects back to where the researcher was (the list with its filters and page, or the reply's page), or
re-renders the reply's page with the error (status 400) and changes nothing.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.items.forms import ItemFilterForm
from annotation.models import Response, Study
from annotation.selectors.item_browser import (
    browser_summary,
    item_detail,
    item_page,
    item_raters,
    study_systems,
)
from annotation.selectors.studies import studies_visible_to
from annotation.services.adjudication import (
    AdjudicationInvalid,
    adjudication_clear,
    adjudication_exclude,
    adjudication_set,
)
from kernel.permissions import authenticated_user
from kernel.roles import user_is_researcher


def _own_study(request: HttpRequest, study_id: int) -> Study:
    """The study, when the requesting user owns it; 404 for everyone else."""
    user = authenticated_user(request)
    if not user_is_researcher(user):
        raise Http404("No such study.")
    return get_object_or_404(studies_visible_to(user=user), pk=study_id)


def _own_response(study: Study, response_id: int) -> Response:
    return get_object_or_404(
        Response.objects.select_related("context", "system"), pk=response_id, context__study=study
    )


def _query(raw: str) -> str:
    """A list's query string (filters and page) as sent back by a form: re-encoded, so it can only ever
    be a query string of the browser's own page."""
    return QueryDict(raw.lstrip("?")).urlencode()


def _list_url(study: Study, query: str = "", anchor: str = "") -> str:
    url = reverse("annotation:study-items", args=[study.pk])
    return f"{url}?{query}{anchor}" if query else f"{url}{anchor}"


def _item_url(study: Study, response_id: int, query: str = "") -> str:
    """A reply's page; ``query`` is the list's, for its "back to the list" link."""
    url = reverse("annotation:study-item", args=[study.pk, response_id])
    if not query:
        return url
    params = QueryDict(mutable=True)
    params["back"] = query
    return f"{url}?{params.urlencode()}"


@login_required
@require_GET
def study_items(request: HttpRequest, study_id: int) -> HttpResponse:
    """The list: filters, a page of replies, links to each reply's page."""
    study = _own_study(request, study_id)
    form = ItemFilterForm(request.GET, systems=study_systems(study=study))
    valid = form.is_valid()
    page_number = request.GET.get("page", 1)
    listing = item_page(study=study, filters=form.item_filters(), page_number=page_number) if valid else None
    filter_query = request.GET.copy()
    filter_query.pop("page", None)
    page_query = filter_query.copy()
    if listing is not None and listing.page.number > 1:
        page_query["page"] = str(listing.page.number)
    context: dict[str, Any] = {
        "study": study,
        "form": form,
        "listing": listing,
        "summary": browser_summary(study=study),
        "filter_query": filter_query.urlencode(),
        "page_query": page_query.urlencode(),
        "filtered": any(value for key, value in filter_query.items() if key != "sort"),
    }
    return render(request, "annotation/items/list.html", context, status=200 if valid else 400)


def _detail(
    request: HttpRequest,
    study: Study,
    response_id: int,
    *,
    status: int = 200,
    error: AdjudicationInvalid | None = None,
    posted: dict[str, Any] | None = None,
) -> HttpResponse:
    try:
        row = item_detail(study=study, response_id=response_id)
    except Response.DoesNotExist:
        raise Http404("No such reply in this study.") from None
    questions = sorted(study.questions.all(), key=lambda question: (question.position, question.pk))
    decision = row.adjudication
    gold = posted["gold"] if posted else (decision.gold if decision else {})
    back = _query(request.GET.get("back", "") or request.POST.get("back", ""))
    context = {
        "study": study,
        "row": row,
        "rows": [row],
        "raters": item_raters(response_id=response_id),
        "back": back,
        "list_url": _list_url(study, back, f"#item-{response_id}"),
        "error": error,
        "form": {
            "excluded": posted["excluded"] if posted else bool(decision and decision.excluded),
            "note": posted["note"] if posted else (decision.note if decision else ""),
            "questions": [
                {
                    "question": question,
                    "field": f"gold-{question.name}",
                    "value": gold.get(question.name, ""),
                    "error": error.message if error and error.field == f"gold.{question.name}" else "",
                }
                for question in questions
            ],
        },
    }
    return render(request, "annotation/items/detail.html", context, status=status)


@login_required
@require_GET
def study_item(request: HttpRequest, study_id: int, response_id: int) -> HttpResponse:
    """One reply: the whole conversation, every rating with its rater, the notes, the metric scores, and
    the adjudication form."""
    return _detail(request, _own_study(request, study_id), response_id)


@login_required
@require_POST
def study_item_adjudicate(request: HttpRequest, study_id: int, response_id: int) -> HttpResponse:
    """The whole decision on a reply: excluded or not, a gold value per question (empty: none), a note."""
    study = _own_study(request, study_id)
    response = _own_response(study, response_id)
    names = [question.name for question in study.questions.all()]
    excluded = request.POST.get("excluded") in ("1", "on", "true")
    gold = {name: request.POST.get(f"gold-{name}", "").strip() for name in names}
    note = request.POST.get("note", "")
    posted = {"excluded": excluded, "gold": gold, "note": note}
    try:
        adjudication_set(
            response=response,
            excluded=excluded,
            gold=gold,
            note=note,
            decided_by=authenticated_user(request),
        )
    except AdjudicationInvalid as invalid:
        return _detail(request, study, response_id, status=400, error=invalid, posted=posted)
    messages.success(request, f"Reply {response.pk}: your decision is saved; reports will use it.")
    return redirect(_item_url(study, response.pk, _query(request.POST.get("back", ""))))


@login_required
@require_POST
def study_item_exclude(request: HttpRequest, study_id: int, response_id: int) -> HttpResponse:
    """One click from the list: leave the reply out of every report (``excluded=1``) or take it back."""
    study = _own_study(request, study_id)
    response = _own_response(study, response_id)
    excluded = request.POST.get("excluded") == "1"
    adjudication_exclude(response=response, excluded=excluded, decided_by=authenticated_user(request))
    if excluded:
        messages.success(request, f"Reply {response.pk} is excluded from every report (nothing is deleted).")
    else:
        messages.success(request, f"Reply {response.pk} counts in reports again.")
    return _back(request, study, response.pk)


@login_required
@require_POST
def study_item_undo(request: HttpRequest, study_id: int, response_id: int) -> HttpResponse:
    """Undo the decision on a reply: not excluded, no gold value, no note."""
    study = _own_study(request, study_id)
    response = _own_response(study, response_id)
    cleared = adjudication_clear(response=response, decided_by=authenticated_user(request))
    if cleared is None:
        messages.info(request, f"Reply {response.pk} had no decision to undo.")
    else:
        messages.success(request, f"Reply {response.pk}: decision undone; it counts like any other reply.")
    return _back(request, study, response.pk)


def _back(request: HttpRequest, study: Study, response_id: int) -> HttpResponse:
    """To the list (with its filters and page) or to the reply's page, whichever the form came from."""
    query = _query(request.POST.get("back", ""))
    if request.POST.get("return_to") == "item":
        return redirect(_item_url(study, response_id, query))
    return redirect(_list_url(study, query, f"#item-{response_id}"))

"""The prompt templates' pages: the list (shipped recipes and the researcher's own), one template's text,
"copy to edit", edit and delete. Researchers only, and each sees only their own templates: another
researcher's template is a 404, like one that does not exist. Thin: :mod:`scoring.judges.templates`."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from kernel.permissions import authenticated_user, researcher_required
from scoring.judges.template_forms import JudgeTemplateForm, template_initial
from scoring.judges.templates import (
    TemplateEntry,
    judge_template_delete,
    judge_template_save,
    template_entries,
    template_entry,
    template_error_field,
)
from scoring.metrics.llm_judge.prompts import (
    ITEM_PLACEHOLDERS,
    PAIRWISE_ITEM_PLACEHOLDERS,
    QUESTION_PLACEHOLDERS,
    TemplateError,
)


@researcher_required
def judge_templates_list(request: HttpRequest) -> HttpResponse:
    entries = template_entries(authenticated_user(request))
    return render(
        request,
        "scoring/judge_templates.html",
        {
            "shipped": [entry for entry in entries if entry.shipped],
            "own": [entry for entry in entries if not entry.shipped],
            "item_placeholders": ITEM_PLACEHOLDERS,
            "pairwise_placeholders": PAIRWISE_ITEM_PLACEHOLDERS,
            "question_placeholders": QUESTION_PLACEHOLDERS,
        },
    )


def _entry(request: HttpRequest, name: str, *, own: bool = False) -> TemplateEntry:
    """The template ``name`` the researcher may see (with ``own``: may change), else a 404."""
    entry = template_entry(name, authenticated_user(request))
    if entry is None or (own and entry.shipped):
        raise Http404("No such template of yours.")
    return entry


@researcher_required
def judge_template_detail(request: HttpRequest, name: str) -> HttpResponse:
    return render(request, "scoring/judge_template.html", {"entry": _entry(request, name)})


@researcher_required
@require_http_methods(["GET", "POST"])
def judge_template_new(request: HttpRequest) -> HttpResponse:
    """A new template; ``?copy=<name>`` starts from a shipped recipe or one of the researcher's own."""
    copied = request.GET.get("copy", "")
    initial = template_initial(_entry(request, copied), copy=True) if copied else {"answer_prefix": ""}
    form = JudgeTemplateForm(request.POST if request.method == "POST" else None, initial=initial)
    return _saved_or_form(request, form, creating=True, copied=copied)


@researcher_required
@require_http_methods(["GET", "POST"])
def judge_template_edit(request: HttpRequest, name: str) -> HttpResponse:
    entry = _entry(request, name, own=True)
    initial = template_initial(entry, copy=False)
    form = JudgeTemplateForm(
        request.POST if request.method == "POST" else None, initial=initial, editing=True
    )
    return _saved_or_form(request, form, creating=False, copied="")


def _saved_or_form(
    request: HttpRequest, form: JudgeTemplateForm, *, creating: bool, copied: str
) -> HttpResponse:
    """Save a posted, valid form through the service (its errors under the field they name), or show the
    form again."""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            row = judge_template_save(
                owner=authenticated_user(request),
                name=data["name"],
                user=data["user"],
                system=data["system"],
                answer_prefix=data["answer_prefix"],
                pairwise=data["pairwise"],
                description=data["description"],
                create=creating,
            )
        except TemplateError as error:
            form.add_error(template_error_field(error) or None, str(error))
        else:
            messages.success(request, f"Saved the template {row.name} ({row.content_hash}).")
            return redirect("scoring:judge-template", name=row.name)
    return render(
        request,
        "scoring/judge_template_form.html",
        {"form": form, "creating": creating, "copied": copied, "name": form.initial.get("name", "")},
        status=400 if form.errors else 200,
    )


@researcher_required
@require_POST
def judge_template_delete_view(request: HttpRequest, name: str) -> HttpResponse:
    _entry(request, name, own=True)
    judge_template_delete(owner=authenticated_user(request), name=name)
    messages.success(request, f"Deleted the template {name}; the judges runs asked with it keep its text.")
    return redirect("scoring:judge-templates")

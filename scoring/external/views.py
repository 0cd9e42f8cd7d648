"""The study page's import of metric scores computed elsewhere, and the deletion of an imported metric
. Thin: check the request, call one service, redirect back to the study page (post/redirect/
get); a rejected import's problems are kept in the session and shown once above the form."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.selectors.studies import studies_visible_to
from kernel.importing.problems import ImportFile, ImportRejected
from kernel.permissions import authenticated_user, researcher_required
from scoring.external.file_format import FORMATS
from scoring.services.external_scores import (
    ExternalMetricNotFound,
    external_metric_delete,
    external_scores_import,
)
from scoring.templatetags.scoring_external import problems_key


@researcher_required
@require_POST
def external_scores_upload(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
    upload = request.FILES.get("file")
    format = str(request.POST.get("format") or "auto")
    if upload is None:
        return _back(request, study.pk, problems=["choose a scores file (CSV or JSON Lines) to import"])
    limit = settings.DIALEVAL_MAX_UPLOAD_BYTES
    if upload.size is not None and upload.size > limit:  # refused before it is read into memory
        return _back(
            request,
            study.pk,
            problems=[f"{upload.name}: the file is {upload.size:,} bytes; the limit is {limit:,}"],
        )
    if format not in (*FORMATS, "auto"):
        return _back(request, study.pk, problems=[f'unknown format "{format}"; choose csv, jsonl or auto'])
    try:
        result = external_scores_import(
            study=study, file=ImportFile(name=upload.name or "upload", data=upload.read()), format=format
        )
    except ImportRejected as rejected:
        report = rejected.report()  # grouped by file, field and message, at most PROBLEMS_SHOWN entries
        problems = list(report.entries)
        if report.hidden or report.stopped:  # a count, only where the entries do not show everything
            problems.append(report.summary)
        return _back(request, study.pk, problems=problems)
    messages.success(request, f"Imported {result.file}: {result.summary()}")
    for warning in result.warnings:
        messages.warning(request, warning)
    return _back(request, study.pk)


@researcher_required
@require_POST
def external_scores_delete(request: HttpRequest, study_id: int, signature_id: int) -> HttpResponse:
    study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
    if request.POST.get("confirm") != "yes":
        messages.error(request, "Nothing was deleted: tick the box to confirm the deletion.")
        return _back(request, study.pk)
    try:
        deleted = external_metric_delete(study=study, signature_id=signature_id)
    except ExternalMetricNotFound as error:
        messages.error(request, f"Nothing was deleted: {error}.")
    else:
        messages.success(request, f"Deleted {deleted} imported score{'s' if deleted != 1 else ''}.")
    return _back(request, study.pk)


def _back(request: HttpRequest, study_id: int, *, problems: list[str] | None = None) -> HttpResponse:
    if problems:
        request.session[problems_key(study_id)] = problems
    url = reverse("annotation:study-detail", kwargs={"study_id": study_id})
    return HttpResponseRedirect(f"{url}#external-scores")

"""The data round trip on the study page: import files (small ones in the request, a large one by a
worker, which its page follows), download the contexts to run systems on, delete a system, undo an import
(each behind a page that names what goes).

Owners only: anyone else, signed-in annotators included, gets 404 (no hint that the study exists). A
deletion is a POST with CSRF carrying the fingerprint of the counts the confirmation showed; when what
would go has changed since, nothing is deleted and the confirmation is shown again (status 409).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation.exports.files import CONTENT_TYPES, encoded
from annotation.importers import ImportRejected
from annotation.models import ImportJob, Study, StudyImport, System
from annotation.selectors.contexts_download import CONTEXT_FORMATS, contexts_file_chunks, contexts_filename
from annotation.selectors.import_jobs import import_counts_text, import_job_view
from annotation.selectors.studies import studies_visible_to
from annotation.services.deletion_counts import DeletionPreview, DeletionRefused, counts_lines
from annotation.services.import_jobs import import_upload
from annotation.services.import_undo import import_undo, import_undo_preview
from annotation.services.system_deletion import system_delete, system_deletion_preview
from annotation.studies.views import study_page
from annotation.study_data.forms import StudyImportForm
from kernel.permissions import authenticated_user, researcher_required


def _own_study(request: HttpRequest, study_id: int) -> Study:
    return get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)


@researcher_required
@require_http_methods(["GET", "POST"])
def study_import_upload(request: HttpRequest, study_id: int) -> HttpResponse:
    """POST: an upload. GET (the address a rejected upload leaves in the address bar, reloaded): the study
    page's import form, not an empty 405."""
    study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
    if request.method == "GET":
        return redirect(reverse("annotation:study-detail", args=[study.pk]) + "#import")
    form = StudyImportForm(request.POST, request.FILES, study=study)
    if not form.is_valid():
        return study_page(request, study_id, import_form=form)
    try:
        # Small uploads are imported here; a large one is queued for a worker (annotation/services/import_jobs.py).
        record = import_upload(
            study=study,
            format=form.cleaned_data["format"],
            uploads=form.cleaned_data["files"],
            user=authenticated_user(request),
            question=form.cleaned_data.get("question") or None,
        )
    except ImportRejected as rejected:
        report = rejected.report()  # grouped by file, field and message, at most PROBLEMS_SHOWN entries
        for entry in report.entries:
            form.add_error(None, entry)
        return study_page(request, study_id, import_form=form, import_rejected=report.summary)
    if isinstance(record, ImportJob):
        return redirect("annotation:study-import-job", study_id=study.pk, job_id=record.pk)
    summary = import_counts_text(record.counts)
    messages.success(request, f"Imported {', '.join(record.filenames)}: {summary or 'nothing new'}.")
    for warning in record.warnings[:20]:
        messages.warning(request, warning)
    return redirect("annotation:study-detail", study_id=study.pk)


@login_required
@require_GET
def study_contexts_download(request: HttpRequest, study_id: int, fmt: str) -> StreamingHttpResponse:
    if fmt not in CONTEXT_FORMATS:
        raise Http404("No such format.")
    study = _own_study(request, study_id)
    response = StreamingHttpResponse(
        encoded(contexts_file_chunks(study=study, fmt=fmt)), content_type=CONTENT_TYPES[fmt]
    )
    response["Content-Disposition"] = f'attachment; filename="{contexts_filename(study=study, fmt=fmt)}"'
    return response


def _confirmation(
    request: HttpRequest, study: Study, preview: DeletionPreview, *, action: str, status: int = 200
) -> HttpResponse:
    return render(
        request,
        "annotation/data/confirm_deletion.html",
        {"study": study, "preview": preview, "action": action, "verb": action.split()[0]},
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def study_system_delete(request: HttpRequest, study_id: int, system_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    system = get_object_or_404(System, study=study, pk=system_id)
    if request.method == "POST":
        try:
            deleted = system_delete(
                study=study, system_id=system.pk, fingerprint=request.POST.get("fingerprint", "")
            )
        except DeletionRefused as refused:
            messages.error(request, refused.message)
            preview = system_deletion_preview(system=system)
            return _confirmation(request, study, preview, action="Delete the system", status=409)
        messages.success(request, f"Deleted system “{system.name}”: {', '.join(counts_lines(deleted))}.")
        return redirect("annotation:study-detail", study_id=study.pk)
    return _confirmation(request, study, system_deletion_preview(system=system), action="Delete the system")


@login_required
@require_http_methods(["GET", "POST"])
def study_import_undo(request: HttpRequest, study_id: int, import_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    record = get_object_or_404(StudyImport, study=study, pk=import_id)
    if request.method == "POST":
        try:
            deleted = import_undo(
                study=study,
                import_id=record.pk,
                user=authenticated_user(request),
                fingerprint=request.POST.get("fingerprint", ""),
            )
        except DeletionRefused as refused:
            messages.error(request, refused.message)
            record.refresh_from_db()
            return _confirmation(
                request, study, import_undo_preview(record=record), action="Undo the import", status=409
            )
        what = ", ".join(counts_lines(deleted)) or "nothing had to be deleted"
        messages.success(request, f"Undid import #{record.pk}: {what}.")
        return redirect("annotation:study-detail", study_id=study.pk)
    return _confirmation(request, study, import_undo_preview(record=record), action="Undo the import")


@login_required
@require_GET
def study_import_job(request: HttpRequest, study_id: int, job_id: int) -> HttpResponse:
    study = _own_study(request, study_id)
    job = get_object_or_404(ImportJob.objects.select_related("result"), study=study, pk=job_id)
    return render(
        request, "annotation/data/import_job.html", {"study": study, "job": import_job_view(job=job)}
    )


@login_required
@require_GET
def study_import_job_status(request: HttpRequest, study_id: int, job_id: int) -> JsonResponse:
    """What the job page polls: status and progress (the finished page is rendered by the server)."""
    study = _own_study(request, study_id)
    job = get_object_or_404(ImportJob.objects.select_related("result"), study=study, pk=job_id)
    return JsonResponse(import_job_view(job=job).as_json())

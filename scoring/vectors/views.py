"""The word vectors page: every set a run can choose (the built-in GloVe 6B 50d and the registered files),
an upload form, a progress bar per conversion (static/scoring/word_vectors.js polls the API) and a delete
button. Researchers only. Thin: :mod:`scoring.services.word_vectors` does the work."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from kernel.permissions import authenticated_user, researcher_required
from scoring.models import WordVectorsFile
from scoring.services.word_vectors import WordVectorsError, word_vectors_delete, word_vectors_upload
from scoring.vectors.forms import WordVectorsUploadForm
from scoring.vectors.permissions import may_delete_vectors
from scoring.vectors.selectors import word_vectors_entries

UPLOAD_FIELDS = set(WordVectorsUploadForm.base_fields)


@researcher_required
@require_http_methods(["GET", "POST"])
def word_vectors_list(request: HttpRequest) -> HttpResponse:
    form = WordVectorsUploadForm()
    if request.method == "POST":
        form = WordVectorsUploadForm(request.POST, request.FILES)
        if form.is_valid():
            try:
                vectors = word_vectors_upload(
                    name=form.cleaned_data["name"],
                    upload=form.cleaned_data["file"],
                    vectors_format=form.cleaned_data["format"],
                    language=form.cleaned_data["language"],
                    user=authenticated_user(request),
                )
            except WordVectorsError as error:
                form.add_error(error.field if error.field in UPLOAD_FIELDS else None, error.message)
            else:
                messages.success(request, f"Uploaded {vectors.name}; a worker converts it now.")
                return redirect("scoring:word-vectors")
    user = authenticated_user(request)
    entries = word_vectors_entries()
    return render(
        request,
        "scoring/word_vectors.html",
        {
            "entries": entries,
            "deletable": {entry.name for entry in entries if may_delete_vectors(user, entry)},
            "form": form,
            "max_upload_bytes": settings.DIALEVAL_VECTORS_MAX_UPLOAD_BYTES,
        },
        status=400 if form.errors else 200,
    )


@researcher_required
@require_POST
def word_vectors_delete_view(request: HttpRequest, name: str) -> HttpResponse:
    vectors = get_object_or_404(WordVectorsFile, name=name)
    if not may_delete_vectors(authenticated_user(request), vectors):
        raise PermissionDenied("Only the researcher who registered these vectors (or staff) may delete them.")
    try:
        word_vectors_delete(vectors=vectors)
    except WordVectorsError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Deleted the word vectors {name}.")
    return redirect("scoring:word-vectors")

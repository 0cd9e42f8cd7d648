"""Download links of the study page: a study's ratings, collected references, diversity and pairwise
judgments as CSV or JSON Lines, streamed (the file is written as rows come from the database). Owners only;
404 for everyone else (signed-in annotators included: no hint that the study exists)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404

from annotation.exports.files import CONTENT_TYPES, EXPORT_FORMATS, encoded
from annotation.selectors.exports import EXPORT_KINDS, export_chunks
from annotation.selectors.studies import studies_visible_to
from kernel.permissions import authenticated_user


@login_required
def study_export(request: HttpRequest, study_id: int, what: str, fmt: str) -> StreamingHttpResponse:
    if what not in EXPORT_KINDS or fmt not in EXPORT_FORMATS:
        raise Http404("No such export.")
    study = get_object_or_404(studies_visible_to(user=authenticated_user(request)), pk=study_id)
    response = StreamingHttpResponse(
        encoded(export_chunks(study=study, what=what, fmt=fmt)), content_type=CONTENT_TYPES[fmt]
    )
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-{what}.{fmt}"'
    return response

"""Refuse an oversized request before its body is read.

Django bounds form fields (DATA_UPLOAD_MAX_MEMORY_SIZE) but streams uploaded files to disk whatever
their size; the per-file limit of the import forms is only checked afterwards. This middleware answers
413 from the Content-Length header, so a huge upload is never received.

The limit is ``DIALEVAL_MAX_REQUEST_BYTES``, except on the views that take one large file of their own
(``UPLOAD_LIMITS``: word vectors, up to ``DIALEVAL_VECTORS_MAX_UPLOAD_BYTES``, plus ``FORM_FIELDS_BYTES``
for the other fields and the multipart framing); their services check the file's own size again.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve

FORM_FIELDS_BYTES = 1024 * 1024
# view name -> the setting that bounds the one file a request to it carries
UPLOAD_LIMITS = {
    "scoring:word-vectors": "DIALEVAL_VECTORS_MAX_UPLOAD_BYTES",
    "api-word-vectors": "DIALEVAL_VECTORS_MAX_UPLOAD_BYTES",
}


class RequestSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > int(settings.DIALEVAL_MAX_REQUEST_BYTES):
            limit, file_limit = _limits(request)
            if length > limit:
                message = (
                    f"the request is {length:,} bytes; the limit is {limit:,} bytes "
                    f"(each uploaded file may have up to {file_limit:,})"
                )
                if request.path.startswith("/api/"):
                    return JsonResponse({"detail": message}, status=413)
                return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


def _limits(request: HttpRequest) -> tuple[int, int]:
    """(the request's limit, the limit of each file in it) for the view the request goes to."""
    try:
        view_name = resolve(request.path_info).view_name
    except Resolver404:
        view_name = ""
    setting = UPLOAD_LIMITS.get(view_name)
    if setting is None:
        return int(settings.DIALEVAL_MAX_REQUEST_BYTES), int(settings.DIALEVAL_MAX_UPLOAD_BYTES)
    file_limit = int(getattr(settings, setting))
    return max(file_limit + FORM_FIELDS_BYTES, int(settings.DIALEVAL_MAX_REQUEST_BYTES)), file_limit

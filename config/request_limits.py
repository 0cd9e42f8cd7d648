"""Refuse an oversized request before its body is read.

Django bounds form fields (DATA_UPLOAD_MAX_MEMORY_SIZE) but streams uploaded files to disk whatever
their size; the per-file limit of the import forms is only checked afterwards. This middleware answers
413 from the Content-Length header, so a huge upload is never received.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


class RequestSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = int(settings.DIALEVAL_MAX_REQUEST_BYTES)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            message = (
                f"the request is {length:,} bytes; the limit is {limit:,} bytes "
                f"(each uploaded file may have up to {settings.DIALEVAL_MAX_UPLOAD_BYTES:,})"
            )
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=413)
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)

"""The answers Django gives when no view did: 400, 403, 404, 500 and the CSRF failure.

Under ``/api/`` every one is JSON (``{"detail": ...}``), as DRF's own errors are, so an API client never has
to parse an HTML page. Elsewhere they are the templates of ``templates/``. Each renders without
``request.user``: a request refused before the authentication middleware ran (a Host outside
ALLOWED_HOSTS is refused by CommonMiddleware) has none.

An uncaught exception that is the database being busy (a lock held past the wait) or full is answered 503
with ``Retry-After`` rather than 500 (kernel/http/database_errors.py): nothing went wrong with the request, and
the same request will work later.
"""

from __future__ import annotations

import sys

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

from kernel.http.database_errors import database_unavailable_reason

API_PREFIX = "/api/"

MESSAGES = {
    400: "The request could not be understood.",
    403: "You do not have permission to perform this action.",
    404: "Not found.",
    500: "Server error; nothing in this request was saved.",
}


def is_api_request(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def error_response(
    request: HttpRequest, status: int, *, template: str, detail: str, standalone: bool = False
) -> HttpResponse:
    """JSON ``{"detail"}`` under /api/, else the template rendered with the request (never its user);
    ``standalone``: rendered without the request, so without the context processors, which read the user and
    so the session and the database (with the database down, the 500 page itself raised, and
    gunicorn answered its bare "Internal Server Error")."""
    if is_api_request(request):
        return JsonResponse({"detail": detail}, status=status)
    body = loader.render_to_string(template, {"detail": detail}, None if standalone else request)
    return HttpResponse(body, status=status)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    return error_response(request, 400, template="400.html", detail=MESSAGES[400])


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    detail = str(exception) if str(exception) else MESSAGES[403]
    return error_response(request, 403, template="403.html", detail=detail)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return error_response(request, 404, template="404.html", detail=MESSAGES[404])


def server_error(request: HttpRequest) -> HttpResponse:
    """500; or 503 with Retry-After when the uncaught exception is a busy or full database."""
    reason = database_unavailable_reason(sys.exc_info()[1])
    if reason is None:
        return error_response(request, 500, template="500.html", detail=MESSAGES[500], standalone=True)
    response = error_response(request, 503, template="503.html", detail=reason, standalone=True)
    response["Retry-After"] = str(settings.DIALEVAL_DATABASE_RETRY_AFTER_SECONDS)
    return response


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: the "form expired" page, or JSON under /api/."""
    return error_response(
        request, 403, template="403_csrf.html", detail=f"CSRF check failed: {reason}".rstrip(": ")
    )

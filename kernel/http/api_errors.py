"""How the API answers an error: DRF's exception handler, plus a busy or full database
(kernel/http/database_errors.py) answered 503 with ``Retry-After``, JSON like every other API error."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from kernel.http.database_errors import database_unavailable_reason


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    reason = database_unavailable_reason(exc)
    if reason is not None:
        set_rollback()
        return Response(
            {"detail": reason},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(settings.DIALEVAL_DATABASE_RETRY_AFTER_SECONDS)},
        )
    return exception_handler(exc, context)

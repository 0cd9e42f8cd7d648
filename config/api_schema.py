"""The OpenAPI schema view, one generation at a time in each process.

drf-spectacular's schema generation is not thread-safe: its extensions resolve the class they extend on
first use, setting it to None meanwhile when the class's package is absent, and the generator keeps its
warnings in a global (drf-spectacular issues #1122, #1123 and #1368). Two requests for the schema at once in
a threaded server (Django's runserver, gunicorn with ``GUNICORN_THREADS`` above 1, Django's test
server) could each answer 500 with ``'NoneType' object has no attribute 'startswith'``. A lock around the
generation makes the second request wait for the first to finish. It wraps ``dispatch``,
not ``get``: drf-spectacular documents the schema's own endpoint from the decorated ``get``.
"""

from __future__ import annotations

import threading
from typing import Any

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from drf_spectacular.views import SpectacularAPIView

_GENERATING = threading.Lock()


class SchemaView(SpectacularAPIView):
    """drf-spectacular's schema view, generating under a process-wide lock."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        with _GENERATING:
            return super().dispatch(request, *args, **kwargs)

"""Refuse a request that carries a NUL character (``%00``) in its text, before any view runs.

PostgreSQL cannot store text holding a NUL, nor compare a column with it: a view that looked up the
token of ``/work/join/%00/`` or the question of ``?question=%00`` raised ``DataError`` there (a 500)
where SQLite answered 404. No text of this site holds one, so the request is answered 400 at once: JSON
``{"detail"}`` under /api/, the 400 page elsewhere (config/error_views.py), naming where the NUL was.

Checked here: the address, every query parameter (names and values), every header (a NUL byte in a header
is refused by gunicorn itself; other servers and proxies may pass it on), every cookie (Django decodes a
quoted cookie's octal escape ``\\000`` to NUL), and a form's fields: a form-encoded body of any method,
and a multipart form's text fields outside /api/ (Django reads those before the view anyway, for the CSRF
check). Not read here: an API multipart body, which DRF reads only after the client's log-in and
permission are checked (reading it here would let anyone make the server store an upload); its text
fields go through serializer fields that refuse NUL. JSON bodies are checked by the API's JSON parser
(kernel/http/api_formats.py), which reads them after the log-in too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.http import HttpRequest, HttpResponse, QueryDict

from config.error_views import error_response, is_api_request

NUL = "\x00"
FORM_ENCODED = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
SHOWN_NAME_CHARACTERS = 80


class RefuseNulCharactersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = nul_character_place(request)
        if where is None:
            return self.get_response(request)
        detail = (
            f"{where} holds a NUL character (%00, \\u0000), which no text on this site may contain; "
            "send the request again without it."
        )
        return error_response(request, 400, template="400.html", detail=detail)


def nul_character_place(request: HttpRequest) -> str | None:
    """Where the request's first NUL character is ('The query parameter "q"', ...), or None."""
    if NUL in request.path:
        return "The address"
    name = _name_holding_nul(request.GET.lists())
    if name is not None:
        return f'The query parameter "{name}"'
    name = _name_holding_nul((header, [value]) for header, value in request.headers.items())
    if name is not None:
        return f'The header "{name}"'
    name = _name_holding_nul((cookie, [value]) for cookie, value in request.COOKIES.items())
    if name is not None:
        return f'The cookie "{name}"'
    form = _form_fields(request)
    name = None if form is None else _name_holding_nul(form.lists())
    if name is not None:
        return f'The form field "{name}"'
    return None


def _name_holding_nul(fields: Iterable[tuple[str, list[str]]]) -> str | None:
    """The name, as a message shows it, of the first field whose name or a value holds a NUL."""
    for name, values in fields:
        if NUL in name or any(NUL in value for value in values if isinstance(value, str)):
            shown = name.replace(NUL, "%00")
            if len(shown) > SHOWN_NAME_CHARACTERS:
                shown = shown[:SHOWN_NAME_CHARACTERS] + "…"
            return shown
    return None


def _form_fields(request: HttpRequest) -> QueryDict | None:
    """The request's form fields where they are read here (see the module's docstring), else None."""
    content_type = request.content_type or ""
    if content_type == FORM_ENCODED:
        # Django reads a form body only for POST; a PUT or PATCH form reaches DRF's form parser as it is.
        # request.body keeps Django's bound on form data (DATA_UPLOAD_MAX_MEMORY_SIZE: a 400 above it).
        if request.method == "POST":
            return request.POST
        return QueryDict(request.body, encoding=request.encoding)
    if content_type == MULTIPART and request.method == "POST" and not is_api_request(request):
        return request.POST
    return None

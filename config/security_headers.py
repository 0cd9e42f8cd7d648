"""Headers every answer carries (docs/deployment.md, "Headers").

- ``Content-Security-Policy`` (``ContentSecurityPolicyMiddleware``): the policy of
  ``DIALEVAL_CONTENT_SECURITY_POLICY``, a directive name to its sources. The pages load only their own scripts
  and style sheets (under ``/static/``; plotly.js, Swagger UI and ReDoc included), and none of them holds an
  inline script, an inline ``<style>``, a ``style=`` attribute or an event handler attribute. A view that
  needs an inline ``<style>`` (ReDoc's styled-components write theirs at run time) reads
  ``request.csp_nonce`` and puts it on the element, or hands it to the script that makes it; the policy then
  allows that nonce for styles, in that answer only. An answer that already has the header keeps its own.
- ``Cache-Control: private, no-store`` (``PrivateAnswersMiddleware``): on every answer under ``/api/`` and
  on every answer to a request that carries the session cookie (someone logged in, or was), so neither a
  shared cache nor the browser's disk keeps a page or a JSON answer with a study's data. Static files are
  answered by WhiteNoise before this middleware and keep their long caching.

Pages that draw plotly figures load plotly.js through ``{% plotly_script %}`` (``{% load content_security %}``),
which widens that page's policy as little as plotly.js needs (``PLOTLY_SOURCES``): it writes ``style``
attributes on the SVG it draws (``style-src-attr 'unsafe-inline'``; attributes only, never a ``<style>``
element or a script), and puts its own rules into empty ``<style>`` elements through the CSSOM (allowed by the
hash of the empty text, which no other content has). The style sheet it bundles for map traces, which the app
never draws, it leaves out when an element with that sheet's id is already on the page: the tag writes one.
"""

from __future__ import annotations

import functools
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django import template
from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.templatetags.static import static
from django.utils.cache import patch_cache_control
from django.utils.functional import SimpleLazyObject, empty
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

HEADER = "Content-Security-Policy"
# The hash of the empty text: an empty <style> element, which plotly.js fills through the CSSOM.
EMPTY_STYLE = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
PLOTLY_SOURCES = {"style-src-elem": [EMPTY_STYLE], "style-src-attr": ["'unsafe-inline'"]}
PLOTLY_JS = "vendor/plotly/plotly.min.js"


def policy_text(policy: dict[str, list[str]], extra: dict[str, list[str]] | None = None) -> str:
    """``policy`` as the header's value (directives joined by ``; ``) with ``extra``'s sources added. A
    directive the policy lacks starts from the one it falls back to (``style-src-elem`` from ``style-src``,
    ``style-src`` from ``default-src``...), after that one's own additions."""
    merged = {directive: list(sources) for directive, sources in policy.items()}
    for directive, sources in sorted((extra or {}).items(), key=lambda item: item[0].count("-")):
        if directive not in merged:
            fallback = directive.rsplit("-", 1)[0] if directive.count("-") > 1 else "default-src"
            merged[directive] = list(merged.get(fallback, merged.get("default-src", [])))
        merged[directive] += [source for source in sources if source not in merged[directive]]
    return "; ".join(" ".join([directive, *sources]) for directive, sources in merged.items())


def csp_allow(request: HttpRequest, directive: str, *sources: str) -> None:
    """Add ``sources`` to ``directive`` in the policy of the answer to ``request`` only."""
    extra: dict[str, list[str]] = request.__dict__.setdefault("csp_extra", {})
    extra.setdefault(directive, []).extend(sources)


class ContentSecurityPolicyMiddleware:
    """Set ``Content-Security-Policy`` on every answer (first in MIDDLEWARE, so answers that another middleware
    makes up get it too); ``request.csp_nonce`` is a fresh nonce, made when a view first reads it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        nonce = SimpleLazyObject(lambda: secrets.token_urlsafe(18))
        request.csp_nonce = nonce  # type: ignore[attr-defined]
        response = self.get_response(request)
        if HEADER not in response:
            extra: dict[str, list[str]] = request.__dict__.get("csp_extra", {})
            if nonce._wrapped is not empty:  # type: ignore[attr-defined]
                extra = {**extra, "style-src": [*extra.get("style-src", []), f"'nonce-{nonce}'"]}
            response[HEADER] = policy_text(settings.DIALEVAL_CONTENT_SECURITY_POLICY, extra)
        return response


class PrivateAnswersMiddleware:
    """``Cache-Control: private, no-store`` on answers under ``/api/`` and to requests with a session cookie.

    It reads the cookie, not ``request.user``: loading the user reads the database, and the error pages of a
    database that is down are rendered without it (config/error_views.py)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if request.path_info.startswith("/api/") or settings.SESSION_COOKIE_NAME in request.COOKIES:
            patch_cache_control(response, private=True, no_store=True)
        return response


# --- {% plotly_script %} ---------------------------------------------------------------------------------

register = template.Library()


@functools.cache
def plotly_bundled_style_ids() -> tuple[str, ...]:
    """The ids of the <style> elements plotly.js adds as it loads unless an element has that id already
    (maplibre's sheet, for map traces), read from the bundle the app serves."""
    path = finders.find(PLOTLY_JS)
    if not isinstance(path, str):
        return ()
    text = Path(path).read_text(encoding="utf-8")
    pattern = r'if\(!document\.getElementById\("([^"]+)"\)\)\{var \w+=document\.createElement\("style"\)'
    return tuple(dict.fromkeys(re.findall(pattern, text)))


@register.simple_tag(takes_context=True)
def plotly_script(context: dict[str, Any]) -> SafeString:
    """``<script src>`` of the static plotly.js, preceded by placeholders for the style sheets it would add
    and this page doesn't need; widens this answer's policy by ``PLOTLY_SOURCES``."""
    request = context.get("request")
    if isinstance(request, HttpRequest):
        for directive, sources in PLOTLY_SOURCES.items():
            csp_allow(request, directive, *sources)
    placeholders = format_html_join(
        "", '<template id="{}"></template>', ((id_,) for id_ in plotly_bundled_style_ids())
    )
    return format_html('{}<script src="{}"></script>', placeholders, static(PLOTLY_JS))

"""The API's JSON in and out; kept apart from kernel/http/api_errors.py, which imports DRF's views
(whose class attributes read these classes from the settings).

- ``SafeJSONRenderer``: DRF's JSON renderer writes UTF-8, which cannot hold a lone surrogate (``"\\ud800"``
  is valid JSON, and a client may send it as a key that a 400 then names); such a document is written with
  ASCII escapes instead, the same JSON to any parser.
- ``StrictFormatNegotiation``: ``?format=`` names one of the endpoint's formats, else 400 (DRF took an empty
  value as "no format" and answered JSON, and an unknown one as a 404 for the whole endpoint).
- ``SafeJSONParser``: a JSON body with a string (or key) that no database can store, a lone surrogate or a
  NUL character (PostgreSQL refuses it), is a 400 naming the field, not an error at the first save or
  lookup; a body nested deeper than MAX_API_JSON_DEPTH (kernel/http/json_depth.py) is a 400 naming the limit,
  found before parsing, not a RecursionError.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer

from kernel.http.json_depth import MAX_API_JSON_DEPTH, json_depth_beyond


class SafeJSONRenderer(JSONRenderer):
    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return json.dumps(data, cls=self.encoder_class, ensure_ascii=True).encode("ascii")


class SafeJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        body = stream.read()
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        depth = json_depth_beyond(body.decode(encoding, errors="replace"))
        if depth is not None:
            raise ParseError(
                f"JSON parse error: the body is nested {depth:,} levels deep; at most "
                f"{MAX_API_JSON_DEPTH} levels are accepted"
            )
        data = super().parse(io.BytesIO(body), media_type, parser_context)
        unstorable = _unstorable_string(data)
        if unstorable is not None:
            raise ParseError(f"JSON parse error: {unstorable}")
        return data


def _unstorable_string(data: Any) -> str | None:
    """'field "path" holds ...' for the first string or key of ``data`` that no database can store (a lone
    surrogate, not valid Unicode, or a NUL character, which PostgreSQL refuses), or None."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                key_path = f"{path}.{key}" if path else str(key)
                problem = _text_problem(key) if isinstance(key, str) else None
                if problem is not None:
                    return _printable(f'a key of field "{path or "(body)"}" {problem}')
                stack.append((key_path, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))
        elif isinstance(value, str):
            problem = _text_problem(value)
            if problem is not None:
                return _printable(f'field "{path}" {problem}')
    return None


def _text_problem(text: str) -> str | None:
    if not _encodable(text):
        return (
            "holds a lone surrogate (such as \\ud800), which is not a character; text must be valid Unicode"
        )
    if "\0" in text:
        return "holds a NUL character (\\u0000), which no text on this site may contain"
    return None


def _printable(message: str) -> str:
    """``message`` with a lone surrogate or NUL of a field's name written as an escape."""
    return message.encode("utf-8", "backslashreplace").decode().replace("\0", "\\x00")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class StrictFormatNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request: Any, renderers: Any, format_suffix: str | None = None) -> Any:
        name = self.settings.URL_FORMAT_OVERRIDE
        if name and name in request.query_params and not format_suffix:
            formats = [renderer.format for renderer in renderers]
            if request.query_params[name] not in formats:
                raise ValidationError({name: [f"choose one of {', '.join(formats)}"]})
        return super().select_renderer(request, renderers, format_suffix)

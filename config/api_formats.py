"""The API's JSON in and out (issue 24); kept apart from config/api_errors.py, which imports DRF's views
(whose class attributes read these classes from the settings).

- ``SafeJSONRenderer``: DRF's JSON renderer writes UTF-8, which cannot hold a lone surrogate (``"\\ud800"``
  is valid JSON, and a client may send it as a key that a 400 then names); such a document is written with
  ASCII escapes instead, the same JSON to any parser.
- ``StrictFormatNegotiation``: ``?format=`` names one of the endpoint's formats, else 400 (DRF took an empty
  value as "no format" and answered JSON, and an unknown one as a 404 for the whole endpoint).
- ``SafeJSONParser``: a JSON body with a string (or key) that no database can store, a lone surrogate, is a
  400 naming the field, not a UnicodeEncodeError at the first save.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer


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
        data = super().parse(stream, media_type, parser_context)
        where = _lone_surrogate(data)
        if where is not None:
            raise ParseError(
                f"JSON parse error: {where} holds a lone surrogate (such as \\ud800), which is not a "
                "character; text must be valid Unicode"
            )
        return data


def _lone_surrogate(data: Any) -> str | None:
    """'field "path"' of the first string or key of ``data`` that is not valid Unicode, or None."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                key_path = f"{path}.{key}" if path else str(key)
                if isinstance(key, str) and not _encodable(key):
                    return f'a key of field "{path or "(body)"}"'.encode("utf-8", "backslashreplace").decode()
                stack.append((key_path, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))
        elif isinstance(value, str) and not _encodable(value):
            return f'field "{path}"'.encode("utf-8", "backslashreplace").decode()
    return None


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

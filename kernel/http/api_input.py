"""Input serializers that take what the OpenAPI schema says, and nothing looser.

DRF converts where a JSON client sent the wrong type: ``"instructions": 0`` becomes "0", ``"ratings": "3"``
becomes 3, ``"pasted": "yes"`` becomes True; and a query parameter sent empty (``?kind=``) counts as absent.
The schema documents a string, an integer, a boolean, and an enum, so such requests are 400s naming the
field, as schemathesis checks (tests/api/test_openapi_schemathesis.py).

``StrictInputSerializer`` is a ``serializers.Serializer`` that checks the JSON type of every declared field
present in a JSON body (form and multipart fields are all text, so they are not checked), and refuses an
empty value of a field that may not be blank in a query string or form.
"""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from rest_framework import serializers

_JSON_TYPES: list[tuple[type[serializers.Field], tuple[type, ...], str]] = [
    (serializers.BooleanField, (bool,), "a boolean"),
    (serializers.IntegerField, (int,), "an integer"),
    (serializers.FloatField, (int, float), "a number"),
    (serializers.CharField, (str,), "a string"),
    (serializers.ListField, (list,), "a list"),
    (serializers.ListSerializer, (list,), "a list"),
    (serializers.DictField, (dict,), "an object"),
    (serializers.Serializer, (dict,), "an object"),
]


def json_type_problem(field: serializers.Field, value: Any) -> str | dict[Any, list[str]] | None:
    """Why ``value`` (from a JSON body) is not of the type ``field`` documents, or None."""
    if value is None:
        return None  # allow_null decides
    if isinstance(field, serializers.ChoiceField):
        if all(isinstance(choice, str) for choice in field.choices) and not isinstance(value, str):
            return "must be a string"
        return None
    for kind, types, name in _JSON_TYPES:
        if isinstance(field, kind):
            if isinstance(value, bool) and bool not in types:
                return f"must be {name}"
            if not isinstance(value, types):
                return f"must be {name}"
            return _item_problem(field, value)
    return None


def _item_problem(field: serializers.Field, value: Any) -> dict[Any, list[str]] | None:
    """The first wrong item of a list field or value of a dict field, as DRF nests its errors."""
    child = getattr(field, "child", None)
    if child is None or isinstance(field, serializers.ListSerializer):
        return None  # a nested serializer checks its own fields
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        problem = json_type_problem(child, item)
        if isinstance(problem, str):
            return {key: [problem]}
    return None


class StrictInputSerializer(serializers.Serializer):
    def to_internal_value(self, data: Any) -> Any:
        problems: dict[str, Any] = {}
        if isinstance(data, QueryDict):
            for name, field in self.fields.items():
                if field.read_only or name not in data:
                    continue
                if data.get(name) == "" and not getattr(field, "allow_blank", False):
                    problems[name] = ["may not be empty"]
        elif isinstance(data, dict):
            for name, field in self.fields.items():
                if not field.read_only and name in data:
                    problem = json_type_problem(field, data[name])
                    if problem is not None:
                        problems[name] = [problem] if isinstance(problem, str) else problem
        if problems:
            raise serializers.ValidationError(problems)
        return super().to_internal_value(data)

"""The ``<id:...>`` URL converter: a database id, at most 2**63 - 1.

Django's ``<int:...>`` matches any number of digits; an id above 2**63 - 1 then reaches the ORM, and SQLite
raises OverflowError (a 500) where PostgreSQL finds nothing. No row has such an id, so the URL matches no
route: 404, on every database, before any view runs.
"""

from __future__ import annotations

from django.urls import register_converter

MAX_ID = 2**63 - 1


class DatabaseIdConverter:
    regex = "[0-9]+"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            raise ValueError(f"{value} is above the largest id")  # Django: this route does not match
        return number

    def to_url(self, value: int) -> str:
        return str(value)


# Registered when this module is first imported: by config/urls.py and by every app's urls module (which a
# test may import before the root URLconf).
register_converter(DatabaseIdConverter, "id")

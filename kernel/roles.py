"""Who may do what. Researchers own studies; annotators rate within studies they belong to."""

from __future__ import annotations

from typing import Any

RESEARCHERS_GROUP = "researchers"


def user_is_researcher(user: Any) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_superuser:
        return True
    return bool(user.groups.filter(name=RESEARCHERS_GROUP).exists())

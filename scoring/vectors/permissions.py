"""Who may delete registered word vectors: the researcher who registered them, or staff (those registered
with ``manage.py register_vectors`` belong to no one: staff only). The built-in set: no one."""

from __future__ import annotations

from typing import Any

from scoring.models import WordVectorsFile
from scoring.vectors.selectors import VectorsEntry


def may_delete_vectors(user: Any, vectors: WordVectorsFile | VectorsEntry) -> bool:
    if isinstance(vectors, VectorsEntry) and vectors.builtin:
        return False
    return bool(getattr(user, "is_staff", False)) or (
        vectors.created_by_id is not None and vectors.created_by_id == getattr(user, "pk", None)
    )

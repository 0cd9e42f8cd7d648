"""The ``context_id`` under which a study's contexts are downloaded, and read back by the replies import.

A researcher downloads a study's contexts (annotation/selectors/contexts_download.py), runs a system on
them, and uploads the outputs keyed by the same ``context_id`` with the generic ``jsonl`` or ``csv``
import. A context imported with an id keeps it; one imported without (GRADE's file, a generic file
without ``context_id``) is named ``context-<database id>``, and the import's planner finds it again by
that name (planning.py). A context whose own imported id is ``context-<n>`` wins over that reading.
"""

from __future__ import annotations

import re

DOWNLOAD_PREFIX = "context-"
_DOWNLOAD_ID = re.compile(rf"{re.escape(DOWNLOAD_PREFIX)}([1-9][0-9]{{0,17}})")


def context_download_id(external_id: str, pk: int) -> str:
    """The context's imported id, or ``context-<pk>`` when it was imported without one."""
    return external_id or f"{DOWNLOAD_PREFIX}{pk}"


def context_pk_from_download_id(text: str) -> int | None:
    """The database id in a ``context-<pk>`` name, or None for any other text."""
    match = _DOWNLOAD_ID.fullmatch(text)
    return int(match.group(1)) if match else None

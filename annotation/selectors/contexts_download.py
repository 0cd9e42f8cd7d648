"""A study's contexts as a file to run systems on: the download half of the data round trip.

One row per context, in the study's order: ``context_id`` (the id it was imported with, or
``context-<database id>`` for a context imported without one, annotation/importers/context_ids.py),
``turns`` (``[{"speaker", "text"}]``, oldest first, the last one the query to answer) and
``references`` (every reference text of the context, oldest first). A file of outputs keyed by the same
``context_id`` goes back in with the generic ``jsonl`` or ``csv`` import (docs/import-formats.md).

JSON Lines holds the lists as JSON. CSV has only text, so ``turns`` and ``references`` are JSON cells
(the same arrays as in JSON Lines; spreadsheets show them as text), and every text cell is formula-safe
(kernel/csv_cells.py: a cell starting with ``=``, ``+``, ``-``, ``@``, tab or CR gets a leading ``'``).
Read in chunks, so a large study's file streams at constant memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.db.models import Q
from django.utils.text import slugify

from annotation.exports.files import rows_as_csv, rows_as_jsonl
from annotation.importers.context_ids import context_download_id
from annotation.models import DialogContext, Reference, Study

CONTEXT_COLUMNS = ("context_id", "turns", "references")
CONTEXT_FORMATS = ("jsonl", "csv")
CHUNK_SIZE = 2000


def context_rows(*, study: Study) -> Iterator[dict[str, Any]]:
    """One dict per context of ``study`` (see the module docstring), two queries per chunk of contexts."""
    last = None
    while True:
        contexts = DialogContext.objects.filter(study=study).order_by("position", "id")
        if last is not None:  # keyset paging: (position, id) after the last row of the previous chunk
            position, pk = last
            contexts = contexts.filter(Q(position__gt=position) | Q(position=position, id__gt=pk))
        chunk = list(contexts.values_list("pk", "external_id", "turns", "position")[:CHUNK_SIZE])
        if not chunk:
            return
        references: dict[int, list[str]] = {}
        for context_id, text in (
            Reference.objects.filter(context_id__in=[row[0] for row in chunk])
            .order_by("id")
            .values_list("context_id", "text")
        ):
            references.setdefault(context_id, []).append(text)
        for pk, external_id, turns, _ in chunk:
            yield {
                "context_id": context_download_id(external_id, pk),
                "turns": [
                    {"speaker": str(turn.get("speaker", "")), "text": str(turn.get("text", ""))}
                    for turn in turns or []
                ],
                "references": references.get(pk, []),
            }
        last = (chunk[-1][3], chunk[-1][0])


def contexts_file_chunks(*, study: Study, fmt: str) -> Iterator[str]:
    """The contexts file as text chunks, one line each."""
    if fmt == "jsonl":
        return rows_as_jsonl(context_rows(study=study), CONTEXT_COLUMNS)
    if fmt == "csv":
        cells = (
            {
                "context_id": row["context_id"],
                "turns": json.dumps(row["turns"], ensure_ascii=False),
                "references": json.dumps(row["references"], ensure_ascii=False),
            }
            for row in context_rows(study=study)
        )
        return rows_as_csv(cells, CONTEXT_COLUMNS)
    raise ValueError(f"unknown contexts format {fmt!r} (choose one of {', '.join(CONTEXT_FORMATS)})")


def contexts_filename(*, study: Study, fmt: str) -> str:
    """``<study>-contexts.jsonl``: the study's name as a file name (its id when nothing of it is left)."""
    return f"{slugify(study.name) or f'study-{study.pk}'}-contexts.{fmt}"

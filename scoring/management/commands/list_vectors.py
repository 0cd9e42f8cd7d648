"""Print the word vectors a scoring run can name, one per line, tab-separated under a header: name, format,
dimension, words, size, hash, language, status, who registered them and their source (the same as the word
vectors page and ``GET /api/word-vectors/``). "glove-6b-50d" is the built-in set."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from scoring.vectors.selectors import word_vectors_entries

COLUMNS = (
    "name",
    "format",
    "dimension",
    "words",
    "size_mb",
    "hash",
    "language",
    "status",
    "registered_by",
    "source",
)


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write("\t".join(COLUMNS))
        for entry in word_vectors_entries():
            values = [
                entry.name,
                entry.format,
                "-" if entry.dimension is None else str(entry.dimension),
                "-" if entry.words is None else str(entry.words),
                "-" if entry.size_bytes is None else f"{entry.size_bytes / 1_000_000:.1f}",
                entry.hash_prefix or "-",
                entry.language,
                entry.status_text,
                entry.created_by or "-",
                entry.source,
            ]
            self.stdout.write("\t".join(value.replace("\t", " ").replace("\n", " ") for value in values))

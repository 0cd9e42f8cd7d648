"""Annotation exports as files: CSV and JSON Lines, written row by row (no Django here).

The selectors in ``annotation.selectors.exports`` produce one plain dict per rating, collected reference
or diversity judgment; the functions here turn such rows into text chunks, one line at a time, so a
download of a large study streams instead of building the whole file in memory. The same generators
feed the study page's download links, the REST API and ``manage.py export_annotations``, so every
route gives the same bytes.

JSON Lines keeps the values' types (numbers, null, lists, booleans). CSV has only text, so:
an empty cell is a missing value, lists are joined with ``;`` (flags and response ids never contain
one), booleans are ``true``/``false`` as in JSON, and floats keep their full precision (``repr``).
A text cell (lists included) that starts with ``=``, ``+``, ``-``, ``@``, tab or carriage return gets a
leading ``'`` so that a spreadsheet does not run it as a formula (``kernel.csv_cells``); numbers
are written as they are.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from kernel.csv_cells import FormulaSafeWriter, formula_safe_cell

# Column order of each export (JSONL objects carry the same keys in the same order).
RATING_COLUMNS: tuple[str, ...] = (
    "study",
    "item",
    "response_id",
    "context",
    "system",
    "annotator",
    "question",
    "value",
    "seconds",
    "client_seconds",
    "time",
)
INCLUDED_COLUMN = "included_in_reports"
REFERENCE_COLUMNS: tuple[str, ...] = (
    "study",
    "context",
    "reference_id",
    "text",
    "author",
    "seconds",
    "client_seconds",
    "keystrokes",
    "flags",
    "time",
)
DIVERSITY_COLUMNS: tuple[str, ...] = (
    "study",
    "context",
    "system",
    "annotator",
    "replies",
    "appropriate",
    "meanings",
    "seconds",
    "client_seconds",
    "time",
)
# Pairwise judgments (annotation/selectors/pairwise_exports.py): a and b in canonical order (a the lower
# response id), ``choice`` a / b / tie, ``winner`` the better system (or "tie"), ``shown_first`` the reply
# the annotator saw on the left (a or b).
PAIRWISE_COLUMNS: tuple[str, ...] = (
    "study",
    "context",
    "response_a",
    "response_a_id",
    "system_a",
    "response_b",
    "response_b_id",
    "system_b",
    "annotator",
    "choice",
    "winner",
    "shown_first",
    "seconds",
    "client_seconds",
    "time",
)

EXPORT_FORMATS = ("csv", "jsonl")
CSV_LIST_SEPARATOR = ";"
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/jsonl; charset=utf-8"}


def csv_cell(value: Any) -> str:
    """One value as CSV text (see the module docstring for the conventions), as ``rows_as_csv`` writes it:
    text formula-safe, numbers as they are (a rating of -1 or a score of -0.0067 stays a number)."""
    return str(formula_safe_cell(_csv_value(value)))


def _csv_value(value: Any) -> object:
    """What the CSV writer gets: numbers stay numbers (it writes floats with ``repr``), all else is text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return value
    if isinstance(value, list | tuple):
        return CSV_LIST_SEPARATOR.join(str(_csv_value(part)) for part in value)
    return str(value)


def rows_as_csv(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Iterator[str]:
    """The header line, then one line per row; fields quoted where needed (commas, quotes, newlines)."""
    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator="\n")

    def line(cells: Iterable[object]) -> str:
        writer.writerow(cells)
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    yield line(columns)
    for row in rows:
        yield line(_csv_value(row.get(column)) for column in columns)


def rows_as_jsonl(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Iterator[str]:
    """One JSON object per line, keys in column order; UTF-8 text kept as is (``ensure_ascii=False``).

    ``allow_nan=False``: a NaN or infinity in a row would make invalid JSON, so it fails loudly instead.
    """
    for row in rows:
        yield json.dumps({column: row.get(column) for column in columns}, ensure_ascii=False, allow_nan=False)
        yield "\n"


def rows_as(fmt: str, rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Iterator[str]:
    if fmt == "csv":
        return rows_as_csv(rows, columns)
    if fmt == "jsonl":
        return rows_as_jsonl(rows, columns)
    raise ValueError(f"unknown export format {fmt!r} (choose one of {', '.join(EXPORT_FORMATS)})")


def encoded(chunks: Iterable[str]) -> Iterator[bytes]:
    """UTF-8 bytes of the chunks, a few kilobytes at a time (one line per network write is wasteful)."""
    pending: list[str] = []
    size = 0
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size >= 16_384:
            yield "".join(pending).encode("utf-8")
            pending, size = [], 0
    if pending:
        yield "".join(pending).encode("utf-8")


def ratings_as_import_lines(rows: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """Exported rating rows regrouped into the generic ``jsonl`` import format's rating part
    (docs/import-formats.md): one object per reply with ``annotators`` and, per question, one value per
    annotator (``null`` where that annotator did not answer that question).

    Only the ratings: the import format also needs the reply's context and text, which a rating export
    does not carry; ``id`` is the export's ``item``, so a caller can join them back. That format holds
    one reply per system and context: extra samples of a system (diversity studies) do not fit in it.
    """
    by_item: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = by_item.setdefault(
            str(row["item"]), {"id": str(row["item"]), "system": row["system"], "values": {}}
        )
        entry["values"][(str(row["annotator"]), str(row["question"]))] = row["value"]
    for entry in by_item.values():
        values: dict[tuple[str, str], Any] = entry["values"]
        names = sorted({annotator for annotator, _ in values})
        questions = sorted({question for _, question in values})
        yield {
            "id": entry["id"],
            "system": entry["system"],
            "annotators": names,
            "ratings": {question: [values.get((name, question)) for name in names] for question in questions},
        }

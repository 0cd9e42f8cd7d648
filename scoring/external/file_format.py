"""Metric scores computed elsewhere (USR, GRADE, an LLM judge run on another machine...): the CSV and
JSON Lines files that bring them into a study, parsed and checked line by line.

Parsing is pure (bytes in, rows out, no database); :mod:`scoring.services.external_scores` checks the
rows against the study and writes them, all or nothing. The format (docs/import-formats.md, "Metric
scores computed elsewhere"), one score per CSV row or JSON object:

* the reply, named in exactly one way: ``reply_id``, the reply's id in the files the study was imported
  from (``Response.external_id``); or ``response_id``, the app's own id of the reply (the column of the
  app's exports and of ``GET /api/studies/<id>/scores/``); or ``context_id`` and ``system``, the
  context's id in the imported files and the system's name (for systems with one reply per context);
* ``metric``: the metric's name, as it should read in the report (shown as ``<name> (external)``);
* ``value``: a finite number;
* ``signature`` (optional): how the score was computed, e.g. a sacrebleu-style string; it becomes part
  of the stored signature ``<metric>|origin:external|sig:<signature>`` (a ``|`` in it is written as
  ``,``: ``|`` separates a signature's fields).

Every problem names the file, the line and the field; the parser collects them all (up to
``kernel.importing.problems.MAX_PROBLEMS``) instead of stopping at the first.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from kernel.importing.csv_rows import csv_rows
from kernel.importing.decoding import file_text
from kernel.importing.json_lines import json_objects
from kernel.importing.limits import EXTERNAL_ID_MAX, SYSTEM_NAME_MAX
from kernel.importing.problems import ImportFile, ProblemLog
from scoring.metrics.signature import metric_signature

REPLY_ID = "reply_id"
RESPONSE_ID = "response_id"
CONTEXT_ID = "context_id"
SYSTEM = "system"
METRIC = "metric"
VALUE = "value"
SIGNATURE = "signature"
FIELDS = (REPLY_ID, RESPONSE_ID, CONTEXT_ID, SYSTEM, METRIC, VALUE, SIGNATURE)

EXTERNAL_ORIGIN = "external"  # scoring.models.MetricOrigin.EXTERNAL
EXTERNAL_SUFFIX = "(external)"  # how the report names an external metric: "usr (external)"
METRIC_NAME_MAX = 100  # MetricSignature.name holds 120; the report adds " (external)"
SIGNATURE_MAX = 300  # with the name, within MetricSignature.text's 500 characters
FORMATS = ("csv", "jsonl")
_JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")


@dataclass(frozen=True)
class ExternalScoreRow:
    """One score of the file, with the line it is on; exactly one way of naming the reply is set."""

    file: str
    line: int
    metric: str
    value: float
    signature: str = ""  # as given (stripped); "" when the row gives none
    reply_id: str = ""
    response_id: int | None = None
    context_id: str = ""
    system: str = ""

    @property
    def reply_field(self) -> str:
        """The field that names the reply (problems about the reply point at it)."""
        if self.reply_id:
            return REPLY_ID
        if self.response_id is not None:
            return RESPONSE_ID
        return CONTEXT_ID

    def reply_description(self) -> str:
        if self.reply_id:
            return f'reply "{self.reply_id}"'
        if self.response_id is not None:
            return f"response {self.response_id}"
        return f'context "{self.context_id}", system "{self.system}"'


def external_signature(metric: str, signature: str) -> tuple[str, dict[str, str]]:
    """(signature text, parameters) stored for an external metric: ``usr|origin:external`` or
    ``usr|origin:external|sig:<signature>``, with a ``|`` of the given signature written as ``,``."""
    parameters = {"origin": EXTERNAL_ORIGIN}
    if signature:
        parameters["sig"] = signature.replace("|", ",")
    return metric_signature(metric, parameters), parameters


def external_metric_label(metric: str) -> str:
    """The name the report gives an external metric, never the same as a built-in metric's."""
    return f"{metric} {EXTERNAL_SUFFIX}"


def metric_name_key(metric: str) -> str:
    """Names that would read as one metric (case, spacing): equal keys collide."""
    return " ".join(unicodedata.normalize("NFKC", metric).casefold().split())


def external_scores_parse(
    file: ImportFile, log: ProblemLog, *, format: str = "auto"
) -> list[ExternalScoreRow]:
    """Every score of ``file`` (``format``: "csv", "jsonl", or "auto": by the file's suffix, else by
    its first character); problems go to ``log``. Checks within the file: one signature per metric, no
    two spellings of one metric name, no second value for the same reply and metric."""
    if format != "auto" and format not in FORMATS:
        log.problem(file.basename, None, None, f'unknown format "{format}"; choose csv, jsonl or auto')
        return []
    chosen = _format(file, log) if format == "auto" else format
    if chosen is None:  # unreadable: the reader said why
        return []
    raw = _csv_records(file, log) if chosen == "csv" else _json_records(file, log)
    rows = [row for line, fields in raw if (row := _row(file.basename, line, fields, log)) is not None]
    _check_consistency(rows, log)
    return rows


# --- reading -----------------------------------------------------------------------------------------


def _format(file: ImportFile, log: ProblemLog) -> str | None:
    suffix = PurePath(file.basename).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in _JSON_SUFFIXES:
        return "jsonl"
    text = file_text(file, ProblemLog())  # the reader logs why it cannot be read, once
    if text is None:
        file_text(file, log)
        return None
    return "jsonl" if text.lstrip().startswith("{") else "csv"


def _csv_records(file: ImportFile, log: ProblemLog) -> Iterator[tuple[int, dict[str, Any]]]:
    header_checked = False
    for line, header, row in csv_rows(file, [METRIC, VALUE], log):
        if not header_checked:
            header_checked = True
            if not {REPLY_ID, RESPONSE_ID, CONTEXT_ID} & set(header):
                log.problem(
                    file.basename,
                    1,
                    REPLY_ID,
                    "missing column: name each reply by reply_id, by response_id, or by context_id and "
                    f"system (the header has: {', '.join(header)})",
                )
                return
        yield line, {name: value for name, value in row.items() if name in FIELDS}


def _json_records(file: ImportFile, log: ProblemLog) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, value in json_objects(file, log):
        yield line, {name: field for name, field in value.items() if name in FIELDS}


# --- one row -----------------------------------------------------------------------------------------


class _Row:
    """The fields of one line, checked one by one; each problem names the field."""

    def __init__(self, file: str, line: int, fields: Mapping[str, Any], log: ProblemLog) -> None:
        self.file, self.line, self.fields, self.log = file, line, fields, log
        self.ok = True

    def problem(self, field: str, message: str) -> None:
        self.ok = False
        self.log.problem(self.file, self.line, field, message)

    def present(self, field: str) -> bool:
        value = self.fields.get(field)
        return value is not None and not (isinstance(value, str) and not value.strip())

    def text(self, field: str, limit: int, *, numbers: bool = False) -> str:
        """A non-empty text field (JSON may give an integer id when ``numbers``)."""
        value = self.fields.get(field)
        if numbers and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            self.problem(field, f"expected text, found {_json_type(value)}")
            return ""
        value = value.strip()
        if len(value) > limit:
            self.problem(field, f"{len(value)} characters; at most {limit}")
            return ""
        if any(unicodedata.category(char) == "Cc" for char in value):
            self.problem(field, "holds a line break or another control character")
            return ""
        return value


def _row(file: str, line: int, fields: Mapping[str, Any], log: ProblemLog) -> ExternalScoreRow | None:
    row = _Row(file, line, fields, log)
    reply = _reply(row)
    metric = _metric(row)
    value = _value(row)
    signature = row.text(SIGNATURE, SIGNATURE_MAX) if row.present(SIGNATURE) else ""
    if not row.ok or reply is None or value is None:
        return None
    return ExternalScoreRow(file=file, line=line, metric=metric, value=value, signature=signature, **reply)


def _reply(row: _Row) -> dict[str, Any] | None:
    ways = [
        way
        for way, given in (
            (REPLY_ID, row.present(REPLY_ID)),
            (RESPONSE_ID, row.present(RESPONSE_ID)),
            (CONTEXT_ID, row.present(CONTEXT_ID) or row.present(SYSTEM)),
        )
        if given
    ]
    if not ways:
        row.problem(
            REPLY_ID, "missing: name the reply by reply_id, by response_id, or by context_id and system"
        )
        return None
    if len(ways) > 1:
        named = " and ".join("context_id/system" if way == CONTEXT_ID else way for way in ways)
        row.problem(ways[1], f"the reply is named twice ({named}): give one of them")
        return None
    if ways == [REPLY_ID]:
        return {"reply_id": row.text(REPLY_ID, EXTERNAL_ID_MAX, numbers=True)}
    if ways == [RESPONSE_ID]:
        response_id = _positive_integer(row.fields.get(RESPONSE_ID))
        if response_id is None:
            row.problem(
                RESPONSE_ID,
                f"{_shown(row.fields.get(RESPONSE_ID))} is not a reply id (a positive whole number)",
            )
        return {"response_id": response_id}
    if not row.present(CONTEXT_ID):
        row.problem(CONTEXT_ID, "missing: a row that names a system needs the context_id too")
        return None
    if not row.present(SYSTEM):
        row.problem(SYSTEM, "missing: a row that names a context needs the system too")
        return None
    return {
        "context_id": row.text(CONTEXT_ID, EXTERNAL_ID_MAX, numbers=True),
        "system": row.text(SYSTEM, SYSTEM_NAME_MAX),
    }


def _metric(row: _Row) -> str:
    if not row.present(METRIC):
        row.problem(METRIC, "missing: the metric's name")
        return ""
    name = " ".join(row.text(METRIC, METRIC_NAME_MAX).split())
    if "|" in name:
        row.problem(METRIC, f'"{name}" holds "|", which separates the fields of a signature')
    elif re.search(r"\(\s*external\s*\)\s*$", name, flags=re.IGNORECASE):
        row.problem(METRIC, f'"{name}": leave out "{EXTERNAL_SUFFIX}", the report adds it')
    return name


def _value(row: _Row) -> float | None:
    raw = row.fields.get(VALUE)
    if not row.present(VALUE):
        row.problem(VALUE, "missing: the score")
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        row.problem(VALUE, f"expected a number, found {_json_type(raw)}")
        return None
    if isinstance(raw, str):
        try:
            number = float(raw.strip())
        except ValueError:
            row.problem(VALUE, f"{_shown(raw)} is not a number")
            return None
    else:
        number = float(raw)
    if not math.isfinite(number):
        row.problem(VALUE, f"{_shown(raw)} is not a finite number (NaN and infinity have no correlation)")
        return None
    return number


def _positive_integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        number = int(value.strip())
        return number if number > 0 else None
    return None


# --- the file as a whole -------------------------------------------------------------------------------


def _check_consistency(rows: list[ExternalScoreRow], log: ProblemLog) -> None:
    spelling: dict[str, tuple[str, int]] = {}  # name key -> (first spelling, its line)
    signatures: dict[str, tuple[str, int]] = {}  # metric -> (its signature, first line)
    seen: dict[tuple[str, str], int] = {}  # (reply as named, metric) -> first line
    for row in rows:
        first = spelling.setdefault(metric_name_key(row.metric), (row.metric, row.line))
        if first[0] != row.metric:
            log.problem(
                row.file,
                row.line,
                METRIC,
                f'"{row.metric}" collides with "{first[0]}" (line {first[1]}): names that differ only in '
                "case or spacing would read as one metric; spell them the same",
            )
            continue
        signature = signatures.setdefault(row.metric, (row.signature, row.line))
        if signature[0] != row.signature:
            log.problem(
                row.file,
                row.line,
                SIGNATURE,
                f'"{row.metric}" has the signature {_shown(signature[0])} on line {signature[1]} and '
                f"{_shown(row.signature)} here: one file holds one signature per metric",
            )
            continue
        key = (row.reply_description(), row.metric)
        if key in seen:
            log.problem(
                row.file,
                row.line,
                row.reply_field,
                f'a second value of "{row.metric}" for {key[0]} (the first is on line {seen[key]})',
            )
            continue
        seen[key] = row.line


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _shown(value: Any) -> str:
    text = str(value) if value is not None else ""
    if not text:
        return "(none)"
    return f'"{text[:60]}{"..." if len(text) > 60 else ""}"'

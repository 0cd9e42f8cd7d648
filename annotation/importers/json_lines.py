"""Reading JSON Lines files: one object per line, with the line number of every problem."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from annotation.importers.decoding import file_text, numbered_lines
from annotation.importers.problems import ImportFile, ProblemLog


def json_objects(file: ImportFile, log: ProblemLog) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every line that holds a JSON object; other lines are logged problems."""
    text = file_text(file, log)
    if text is None:
        return
    for number, line in numbered_lines(text):
        log.line_read(file.basename, number)
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            log.problem(file.basename, number, None, f"invalid JSON: {error.msg} (column {error.colno})")
            continue
        if not isinstance(value, dict):
            log.problem(file.basename, number, None, f"expected a JSON object, found {type(value).__name__}")
            continue
        yield number, value


def is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def integer_rating(value: Any) -> int | None:
    """The integer a JSON rating holds (3 or 3.0), or None when it is not a whole number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None

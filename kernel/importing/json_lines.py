"""Reading JSON Lines files: one object per line, with the line number of every problem."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from kernel.importing.decoding import file_text, numbered_lines
from kernel.importing.problems import ImportFile, ProblemLog


def json_objects(file: ImportFile, log: ProblemLog) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every line that holds a JSON object; other lines are logged problems."""
    text = file_text(file, log)
    if text is None:
        return
    for number, line in numbered_lines(text):
        log.line_read(file.basename, number)
        value, problem = json_value(line)
        if problem is not None:
            log.problem(file.basename, number, None, problem)
            continue
        if not isinstance(value, dict):
            log.problem(file.basename, number, None, f"expected a JSON object, found {type(value).__name__}")
            continue
        unstorable = unstorable_text(value)
        if unstorable is not None:
            log.problem(file.basename, number, unstorable[0], unstorable[1])
            continue
        yield number, value


def json_value(text: str) -> tuple[Any, str | None]:
    """The JSON value of ``text``, or why it is not one: invalid JSON, nesting deeper than MAX_JSON_DEPTH
    (which would exhaust Python's recursion limit while parsing), an integer too long to convert."""
    brackets = text.count("[") + text.count("{")  # C speed; the scan below only when it could matter
    depth = _nesting_depth(text) if brackets > MAX_JSON_DEPTH else 0
    if depth > MAX_JSON_DEPTH:
        return None, f"JSON nested {depth} levels deep; at most {MAX_JSON_DEPTH} are accepted"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as error:
        return None, f"invalid JSON: {error.msg} (column {error.colno})"
    except (ValueError, RecursionError) as error:  # e.g. an integer of more than 4,300 digits
        return None, f"invalid JSON: {error}"


MAX_JSON_DEPTH = 100


def _nesting_depth(text: str) -> int:
    """The deepest nesting of [ and { in ``text``, outside strings (an upper bound for invalid JSON)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def unstorable_text(value: dict[str, Any]) -> tuple[str, str] | None:
    """(field, message) for the first string in ``value`` (keys included, at any depth) that no database
    can store: a NUL character (PostgreSQL refuses it) or a lone surrogate such as ``\\ud800`` (not UTF-8).
    The field is the top-level key it is under."""
    for field, item in value.items():
        stack: list[Any] = [field, item]
        while stack:
            current = stack.pop()
            if isinstance(current, dict):
                stack.extend(current.keys())
                stack.extend(current.values())
            elif isinstance(current, list):
                stack.extend(current)
            elif isinstance(current, str):
                problem = text_problem(current)
                if problem is not None:
                    return _printable(field), problem
    return None


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored, or None."""
    if "\0" in text:
        return "holds a NUL character (\\u0000); text may not contain it"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"holds a lone surrogate (\\u{ord(text[error.start]):04x}), which is not a character; "
            "text must be valid Unicode"
        )
    return None


def _printable(field: str) -> str:
    return field if text_problem(field) is None else field.encode("utf-8", "backslashreplace").decode("ascii")


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


def number_text(value: float) -> str:
    """A number as a message shows it: 3, 2.5, and 1e+308 rather than its 309 digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) < 10**15:
            return str(value)
        digits = str(abs(value))
        fraction = digits[1:4].rstrip("0")
        return f"{'-' if value < 0 else ''}{digits[0]}{'.' + fraction if fraction else ''}e+{len(digits) - 1}"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:g}"

"""Bytes to text for every format: UTF-8 (a byte-order mark is accepted), with the line of a bad byte."""

from __future__ import annotations

from kernel.importing.problems import ImportFile, ProblemLog

UTF8_BOM = "\ufeff"


def file_text(file: ImportFile, log: ProblemLog) -> str | None:
    """The file's text, or None after logging why it cannot be read (not UTF-8, or empty)."""
    name = file.basename
    try:
        text = file.data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = file.data.count(b"\n", 0, error.start) + 1
        column = error.start - (file.data.rfind(b"\n", 0, error.start) + 1) + 1
        byte = file.data[error.start : error.start + 1].hex()
        log.problem(
            name,
            line,
            None,
            f"the file is not UTF-8 text (byte 0x{byte} at column {column} cannot be decoded); "
            "save it as UTF-8 and upload it again",
        )
        return None
    text = text.removeprefix(UTF8_BOM)
    if not text.strip():
        log.problem(name, None, None, "the file is empty")
        return None
    nul = text.find("\0")
    if nul >= 0:
        # PostgreSQL cannot store a NUL character in text (SQLite would): refused on every database alike.
        line = text.count("\n", 0, nul) + 1
        column = nul - (text.rfind("\n", 0, nul) + 1) + 1
        log.problem(
            name,
            line,
            None,
            f"the file holds a NUL character (byte 0x00 at column {column}); text may not contain it",
        )
        return None
    return text


def numbered_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line number, line) for every line that is not blank; only \\n (or \\r\\n) ends a line,
    because corpus text may hold other characters that ``str.splitlines`` would split on."""
    numbered = []
    for index, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            numbered.append((index, line))
    return numbered

"""Reading CSV files with a header row: rows as dicts, each with the line it starts on."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence

from kernel.importing.decoding import file_text
from kernel.importing.problems import ImportFile, ProblemLog


def csv_rows(
    file: ImportFile, required: Sequence[str], log: ProblemLog
) -> Iterator[tuple[int, list[str], dict[str, str]]]:
    """(first line, header, row) for every non-blank row; nothing when the header lacks a required column."""
    text = file_text(file, log)
    if text is None:
        return
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [name.strip() for name in next(reader)]
        missing = [name for name in required if name not in header]
        for name in missing:
            log.problem(
                file.basename, 1, name, f"missing required column (the header has: {', '.join(header)})"
            )
        if missing:
            return
        end_of_previous = reader.line_num
        last_line = text.count("\n") + (0 if text.endswith("\n") else 1)
        for row in reader:
            first_line, end_of_previous = end_of_previous + 1, reader.line_num
            log.line_read(file.basename, end_of_previous)
            if not any(cell.strip() for cell in row):
                continue
            if end_of_previous >= last_line and _quote_left_open(text, first_line):
                column = header[len(row) - 1] if len(row) <= len(header) else None
                log.problem(
                    file.basename,
                    first_line,
                    column,
                    'a quoted cell that starts on this line is never closed (a closing " is missing), so the '
                    f"rest of the file (to line {last_line}) was read as one cell",
                )
                return
            if len(row) > len(header):
                log.problem(
                    file.basename,
                    first_line,
                    None,
                    f"{len(row)} cells but the header has {len(header)} columns",
                )
                continue
            yield first_line, header, dict(zip(header, [*row, *[""] * (len(header) - len(row))], strict=True))
    except csv.Error as error:
        log.problem(file.basename, reader.line_num, None, f"unreadable CSV: {error}")


def _quote_left_open(text: str, first_line: int) -> bool:
    """Whether the row starting on ``first_line`` (1-based) runs to the end of ``text`` inside quotes. The
    lenient reader above takes such a row as one long cell; the strict one says the data ended too early."""
    rest = text.split("\n", first_line - 1)[-1]
    try:
        for _ in csv.reader(io.StringIO(rest, newline=""), strict=True):
            pass
    except csv.Error as error:
        return "unexpected end of data" in str(error)
    return False

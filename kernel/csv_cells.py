"""CSV cells a spreadsheet will not run as formulas (CSV injection, a.k.a. formula injection).

Every CSV the project writes can hold text that came from outside: a reply, a reference an annotator
wrote, a context turn, a system or question name, a pseudonym. Excel, LibreOffice and Google Sheets run
a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula (tab and carriage return can hide such a
start), so an annotator's reference ``=cmd|' /C calc'!A0`` would run on the researcher's machine. OWASP's
rule (https://owasp.org/www-community/attacks/CSV_Injection) is to prefix such a cell with a single quote
``'``, so that spreadsheets read it as text. A script that reads the file sees the ``'`` and can drop it.

Only text is touched: numbers written as numbers (a metric score of -0.0067, a rating) stay as they are,
so the numbers researchers load stay numbers; a text cell "-5" from a reply becomes ``'-5``.

A carriage return inside a cell is a second way in: Python's ``csv.writer`` quotes a field only for the
characters of its own line terminator, so with a line-feed terminator a reply "ok<CR>=cmd|..." was
written unquoted and read back as a new line whose first cell is a formula. ``FormulaSafeWriter``
quotes every field with a carriage return or a line feed, whatever the terminator.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
TEXT_MARKER = "'"
_QUOTES_CR_AND_LF = "\r\n"  # a csv.writer quotes every field holding a character of its line terminator


def formula_safe_text(text: str) -> str:
    """``text`` with a leading ``'`` when it starts with a formula trigger; unchanged otherwise."""
    return TEXT_MARKER + text if text.startswith(FORMULA_TRIGGERS) else text


def formula_safe_cell(value: object) -> object:
    """One CSV cell: text goes through ``formula_safe_text``; anything else (numbers, None) is left alone."""
    return formula_safe_text(value) if isinstance(value, str) else value


class FormulaSafeWriter:
    """``csv.writer`` (same options) that passes every cell through ``formula_safe_cell`` first, header
    rows included (a question name or a metric signature in a header is text from outside too), and
    quotes every field that holds a carriage return or a line feed, whatever the line terminator."""

    def __init__(self, file: SupportsWrite[str], *, lineterminator: str = "\r\n", **options: Any) -> None:
        self._file = file
        self._lineterminator = lineterminator
        self._line = io.StringIO()
        self._writer = csv.writer(self._line, lineterminator=_QUOTES_CR_AND_LF, **options)

    def writerow(self, row: Iterable[object]) -> None:
        self._writer.writerow([formula_safe_cell(cell) for cell in row])
        line = self._line.getvalue()
        self._line.seek(0)
        self._line.truncate()
        self._file.write(line.removesuffix(_QUOTES_CR_AND_LF) + self._lineterminator)

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)

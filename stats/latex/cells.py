"""Text and numbers as the tables print them: TeX escaping, coefficients and $p$-values, the bold of a
column's best, and what an unavailable or inapplicable cell shows."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from typing import TypeVar

from stats.report.document_types import HumanEntry, Statistic

Row = TypeVar("Row")
NOT_AVAILABLE = "n/a"
NOT_APPLICABLE = "---"
PACKAGES = r"\usepackage{booktabs}"
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # Not special to TeX, but OT1-encoded fonts (LaTeX's default) print them as other glyphs (< as ¡).
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "≤": r"\ensuremath{\leq}",
    "≥": r"\ensuremath{\geq}",
}


def latex_escape(text: object) -> str:
    """``text`` as LaTeX that prints it literally: TeX's special characters escaped, line breaks and other
    control characters as spaces (a blank line would end a caption's paragraph)."""
    out = []
    for char in str(text):
        if char in _LATEX_SPECIALS:
            out.append(_LATEX_SPECIALS[char])
        elif unicodedata.category(char) == "Cc":
            out.append(" ")
        else:
            out.append(char)
    return "".join(out)


def format_coefficient(value: float | None) -> str:
    """4 decimals (``-0.0006``); ``n/a`` for a coefficient the report could not compute."""
    if value is None or not math.isfinite(value):
        return NOT_AVAILABLE
    text = f"{value:.4f}"
    return "0.0000" if text == "-0.0000" else text


def format_p_value(p: float | None, *, below: float = 0.01, digits: int = 4) -> str:
    """Tao et al. (2018)'s rule by default: ``$< 0.01$`` under 0.01, else 4 decimals; Gupta et al.
    (2019)'s layouts pass ``below=0.001, digits=3``."""
    if p is None or not math.isfinite(p):
        return NOT_AVAILABLE
    if p < below:
        return f"$< {below:g}$"
    return f"{p:.{digits}f}"


def best_of(rows: Sequence[tuple[Row, float | None]]) -> list[Row]:
    """Of (row, statistic) pairs, the rows whose statistic is highest as printed; none when fewer than two
    rows have a value."""
    printed = [
        (row, float(format_coefficient(value)))
        for row, value in rows
        if format_coefficient(value) != NOT_AVAILABLE
    ]
    if len(printed) < 2:
        return []
    top = max(value for _, value in printed)
    return [row for row, value in printed if value == top]


def paired_cell(value: float | None, p: float | None, *, bold: bool = False) -> str:
    coefficient = format_coefficient(value)
    if coefficient == NOT_AVAILABLE:
        return NOT_AVAILABLE
    return f"{bold_if(coefficient, bold)} ({format_p_value(p)})"


def human_cell(row: HumanEntry | None, stat: Statistic) -> str:
    if stat == "kendall":
        return NOT_APPLICABLE
    if row is None:
        return NOT_AVAILABLE
    if stat == "pearson":
        return paired_cell(row.get("pearson"), row.get("pearson_p"))
    return paired_cell(row.get("spearman"), row.get("spearman_p"))


def bold_if(text: str, bold: bool) -> str:
    return rf"\textbf{{{text}}}" if bold else text


def p_three_decimals(p: float | None) -> str:
    return format_p_value(p, below=0.001, digits=3)


def block_cell(name: str, size: int) -> str:
    """The block's name, in its first row (the other rows of the block leave the cell empty)."""
    return name


def reason(note: object) -> str:
    """A row's note without the "not computable: " its sentence already says."""
    return latex_escape(str(note).strip().removeprefix("not computable:").strip())


def comment_text(value: object) -> str:
    """A value on a ``%`` comment line: a line break would end the comment and run the rest as LaTeX."""
    return "".join(" " if unicodedata.category(char) in ("Cc", "Zl", "Zp") else char for char in str(value))

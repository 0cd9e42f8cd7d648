"""The benchmark table as plain text (a terminal), JSON and LaTeX (booktabs, as the report's tables).

Every format shows the same cells: a value with 3 decimals and ``*`` when significant (stats/benchmark/cells.py
says what that means for each statistic), "—" where the metric has no value on the study, with the reason
listed under the table (in the caption for LaTeX); the best per column is bold in LaTeX and in brackets in
text. The CSV (formula-safe) is written in correlation/benchmark/exports.py.

The LaTeX fits the line width of an article whatever the studies are called and however many there are
(six long study names made it 636 pt too wide): long metric names wrap onto a second line, study
names head their columns in at most two short lines or else as S1, S2... with the full names in the caption,
and what is still too wide is scaled down to the line width (never enlarged).
"""

from __future__ import annotations

import json
import math
import re

from stats.benchmark.cells import BenchmarkCell
from stats.benchmark.table import PRINTED_DIGITS, BenchmarkTable
from stats.latex import PACKAGES, latex_escape, metric_label
from stats.report.judges import low_mass_note

MISSING = "—"
LATEX_MISSING = "---"
INCOMPLETE_MARK = r"$^{\dagger}$"  # a metric on fewer studies than the table (ranked apart, never best)
# \resizebox (graphicx) scales a table still wider than the line down to it
LATEX_PACKAGES = rf"{PACKAGES} \usepackage{{graphicx}}"
# A study name heads its column in at most 2 lines of at most 12 characters (about a number's width and a
# half); when any name is longer, every column is headed S1, S2... and the caption says which study each is.
HEADER_CHARS, HEADER_LINES = 12, 2
LABEL_CHARS = 24  # a longer metric name wraps (at a space or after a hyphen or underscore)
# The statistics' names hold Greek letters ("Spearman's ρ"), which pdflatex cannot print as text.
_GREEK = {"ρ": r"\ensuremath{\rho}", "τ": r"\ensuremath{\tau}"}
# A place to break a line: after a run of spaces, a hyphen, an underscore or a slash.
_BREAKS = re.compile(r".+?(?:\s+|[-_/]|$)")
ELLIPSIS = "…"


def cell_text(cell: BenchmarkCell) -> str:
    """``0.312*``, ``0.312`` or "—"."""
    if cell.value is None or not math.isfinite(cell.value):
        return MISSING
    return f"{number_text(cell.value)}{'*' if cell.significant else ''}"


def number_text(value: float | None, digits: int = PRINTED_DIGITS) -> str:
    if value is None or not math.isfinite(value):
        return MISSING
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def missing_reasons(table: BenchmarkTable) -> list[str]:
    """One line per cell without a value: "<metric> on <study>: <why>"."""
    return [
        f"{row.label} on {study}: {cell.note or 'no value'}"
        for row in table.rows
        for study, cell in zip(table.studies, row.cells, strict=True)
        if cell.value is None
    ]


def low_mass_notes(table: BenchmarkTable) -> list[str]:
    """One line per LLM judge's cell whose model put less than half its probability on the scale's labels:
    "<judge> on <study>: <what that says>" (stats/benchmark/judges.py)."""
    return [
        f"{row.label} on {study}: {low_mass_note(cell.label_mass)}"
        for row in table.rows
        for study, cell in zip(table.studies, row.cells, strict=True)
        if cell.label_mass is not None and low_mass_note(cell.label_mass)
    ]


def significance_rule(table: BenchmarkTable) -> str:
    statistic = table.options.statistic
    if statistic == "system_accuracy":
        return "* the 95% interval (contexts resampled) lies above 0.5"
    if statistic == "reply_accuracy":
        return "* the 95% interval lies above a metric that ties every pair or orders at random"
    if table.options.grouping == "none":
        return "* p < 0.05 (two-sided test of no correlation)"
    return "* the 95% bootstrap interval over groups excludes 0"


def benchmark_text(table: BenchmarkTable) -> str:
    header = ["metric", *table.studies, "mean", "mean rank", "studies"]
    lines = [
        [
            row.label,
            *(_bracketed(cell_text(cell), best) for cell, best in zip(row.cells, row.best, strict=True)),
            _bracketed(number_text(row.mean), row.best_mean),
            _bracketed(number_text(row.mean_rank, 2), row.best_rank),
            f"{row.studies} of {len(table.studies)}" + ("" if row.complete else " (ranked apart)"),
        ]
        for row in table.rows
    ]
    widths = [max(len(text) for text in column) for column in zip(header, *lines, strict=True)]
    out = [
        f"{table.options.label} ({significance_rule(table)}; [ ] best in its column; {MISSING} no value)",
        "  ".join(text.ljust(width) for text, width in zip(header, widths, strict=True)).rstrip(),
    ]
    out += ["  ".join(t.ljust(w) for t, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    reasons = missing_reasons(table)
    if reasons:
        out += ["", f"{MISSING} no value:"] + [f"  {reason}" for reason in reasons]
    masses = low_mass_notes(table)
    if masses:
        out += ["", "LLM judges whose model does not fit:"] + [f"  {note}" for note in masses]
    return "\n".join(out) + "\n"


def benchmark_json(table: BenchmarkTable) -> str:
    return json.dumps(table.as_dict(), indent=2, ensure_ascii=False) + "\n"


def benchmark_latex(table: BenchmarkTable) -> str:
    """A ``table`` in booktabs: metric rows, one column per study, then the mean and the mean rank."""
    columns = "l" + "r" * (len(table.studies) + 2)
    keyed = not all(_fits_header(study) for study in table.studies)
    studies = (
        [f"S{k}" for k in range(1, len(table.studies) + 1)]
        if keyed
        else [
            _stacked([_latex(line) for line in wrapped(study, HEADER_CHARS)], "b") for study in table.studies
        ]
    )
    header = " & ".join(["Metric", *studies, "Mean", _stacked(["Mean", "rank"], "b")])
    body = []
    for index, row in enumerate(table.rows):
        if not row.complete and index > 0 and table.rows[index - 1].complete:
            body.append(r"\midrule")  # the metrics on fewer studies, ranked apart
        cells = [_latex_cell(cell, best) for cell, best in zip(row.cells, row.best, strict=True)]
        mean = _bold(number_text(row.mean), row.best_mean) if row.mean is not None else LATEX_MISSING
        rank = (
            _bold(number_text(row.mean_rank, 2), row.best_rank)
            if row.mean_rank is not None
            else LATEX_MISSING
        )
        lines = _latex_label_lines(row.label, row.metric.name)
        lines[-1] += "" if row.complete else INCOMPLETE_MARK
        body.append(" & ".join([_stacked(lines, "t"), *cells, mean, rank]) + r" \\")
    reasons = missing_reasons(table)
    caption = (
        f"{_latex(table.options.label[0].upper() + table.options.label[1:])} of each metric on each "
        f"study. {_latex(significance_rule(table)).replace('*', '$^{*}$', 1)}. Bold: the best of its "
        "column among the metrics on every study. Mean and mean rank over the studies where the metric has a "
        "value; the ranks among the metrics on every study."
    )
    if keyed:
        caption += (
            " Studies: "
            + "; ".join(f"S{k}, {_latex(study)}" for k, study in enumerate(table.studies, start=1))
            + "."
        )
    if any(not row.complete for row in table.rows):
        caption += (
            f" {INCOMPLETE_MARK} on fewer studies than the table: ranked among every value of each of its"
            " studies, listed after the others and never best."
        )
    if reasons:
        caption += " --- no value: " + "; ".join(_latex(reason) for reason in reasons) + "."
    masses = low_mass_notes(table)
    if masses:
        caption += " LLM judges whose model does not fit: " + "; ".join(_latex(note) for note in masses) + "."
    return "\n".join(
        [
            f"% needs {LATEX_PACKAGES}",
            r"\begin{table}[t]",
            r"\centering",
            r"\small",
            r"\setlength{\tabcolsep}{4pt}",
            "% scaled down to the line width only where it is wider, never enlarged",
            r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
            rf"\begin{{tabular}}{{{columns}}}",
            r"\toprule",
            header + r" \\",
            r"\midrule",
            *body,
            r"\bottomrule",
            r"\end{tabular}}",
            rf"\caption{{{caption}}}",
            r"\label{tab:metric-benchmark}",
            r"\end{table}",
            "",
        ]
    )


def wrapped(text: str, width: int, *, split_words: bool = False) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after spaces, hyphens, underscores and
    slashes; a longer word takes a line of its own, or with ``split_words`` is cut every ``width``
    characters."""
    lines: list[str] = []
    line = ""
    for piece in _BREAKS.findall(text.strip()):
        while split_words and len(piece.rstrip()) > width:
            if line.strip():
                lines.append(line.rstrip())
                line = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if line and len(line + piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += piece
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def shortened(text: str, limit: int) -> str:
    """``text``, or where longer than ``limit`` characters whole words from its beginning and its end around
    "…" (the end often tells two studies of one series apart); a text of too few words is cut inside them."""
    if len(text) <= limit:
        return text
    words = text.split()
    head: list[str] = []
    tail: list[str] = []
    room = limit - len(f" {ELLIPSIS} ")
    ends = [True, True]  # whether a word from the beginning, from the end, may still be taken
    side = 0
    while any(ends) and len(head) + len(tail) < len(words):
        if ends[side]:
            word = words[len(head)] if side == 0 else words[-len(tail) - 1]
            taken = ([*head, word], tail) if side == 0 else (head, [word, *tail])
            if len(" ".join(taken[0])) + len(" ".join(taken[1])) <= room:
                head, tail = taken
            else:
                ends[side] = False
        side = 1 - side
    if head and tail:
        return f"{' '.join(head)} {ELLIPSIS} {' '.join(tail)}"
    start = (limit - 1) * 3 // 5
    return f"{text[:start].rstrip()}{ELLIPSIS}{text[start - limit + 1 :].lstrip()}"


def _fits_header(study: str) -> bool:
    lines = wrapped(study, HEADER_CHARS)
    return len(lines) <= HEADER_LINES and all(len(line) <= HEADER_CHARS for line in lines)


def _latex(text: str) -> str:
    escaped = latex_escape(text)
    for letter, math_letter in _GREEK.items():
        escaped = escaped.replace(letter, math_letter)
    return escaped


def _stacked(lines: list[str], align: str) -> str:
    """LaTeX lines one under the other in a table cell, aligned on the first (``t``) or last (``b``)."""
    if len(lines) == 1:
        return lines[0]
    column = "l" if align == "t" else "r"
    return rf"\begin{{tabular}}[{align}]{{@{{}}{column}@{{}}}}" + r" \\ ".join(lines) + r"\end{tabular}"


def _latex_label_lines(display: str, name: str) -> list[str]:
    """The paper's name of the metric (``BLEU-2``) and the distinguishing part of its display name, as LaTeX
    lines of at most about ``LABEL_CHARS`` characters."""
    paper = metric_label(name)
    named = paper != latex_escape(name) and (display == name or display.startswith(f"{name} ("))
    rest = display[len(name) :] if named else display
    lines = wrapped(f"{'x' * len(name)}{rest}" if named else rest, LABEL_CHARS)
    out = [_latex(line) for line in lines]
    if named:  # the placeholder stands for the paper's name, which may be LaTeX (math, a macro)
        out[0] = paper + out[0][len(name) :]
    return out


def _latex_cell(cell: BenchmarkCell, best: bool) -> str:
    if cell.value is None:
        return LATEX_MISSING
    return _bold(number_text(cell.value), best) + (r"$^{*}$" if cell.significant else "")


def _bold(text: str, bold: bool) -> str:
    return rf"\textbf{{{text}}}" if bold else text


def _bracketed(text: str, best: bool) -> str:
    return f"[{text}]" if best else text

"""The benchmark table as plain text (a terminal), JSON and LaTeX (booktabs, as the report's tables).

Every format shows the same cells: a value with 3 decimals and ``*`` when significant (stats/benchmark/cells.py
says what that means for each statistic), "—" where the metric has no value on the study, with the reason
listed under the table (in the caption for LaTeX); the best per column is bold in LaTeX and in brackets in
text. The CSV (formula-safe) is written in correlation/benchmark/exports.py.
"""

from __future__ import annotations

import json
import math

from stats.benchmark.cells import BenchmarkCell
from stats.benchmark.table import PRINTED_DIGITS, BenchmarkTable
from stats.latex import PACKAGES, latex_escape, metric_label

MISSING = "—"
LATEX_MISSING = "---"


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
            f"{row.studies} of {len(table.studies)}",
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
    return "\n".join(out) + "\n"


def benchmark_json(table: BenchmarkTable) -> str:
    return json.dumps(table.as_dict(), indent=2, ensure_ascii=False) + "\n"


def benchmark_latex(table: BenchmarkTable) -> str:
    """A ``table`` in booktabs: metric rows, one column per study, then the mean and the mean rank."""
    columns = "l" + "r" * (len(table.studies) + 2)
    header = " & ".join(["Metric", *(latex_escape(s) for s in table.studies), "Mean", "Mean rank"])
    body = []
    for row in table.rows:
        cells = [_latex_cell(cell, best) for cell, best in zip(row.cells, row.best, strict=True)]
        mean = _bold(number_text(row.mean), row.best_mean) if row.mean is not None else LATEX_MISSING
        rank = (
            _bold(number_text(row.mean_rank, 2), row.best_rank)
            if row.mean_rank is not None
            else LATEX_MISSING
        )
        label = metric_label(row.metric.name) if row.label == row.metric.name else latex_escape(row.label)
        body.append(" & ".join([label, *cells, mean, rank]) + r" \\")
    reasons = missing_reasons(table)
    caption = (
        f"{latex_escape(table.options.label[0].upper() + table.options.label[1:])} of each metric on each "
        f"study. {latex_escape(significance_rule(table)).replace('*', '$^{*}$', 1)}. Bold: the best of its "
        "column. Mean and mean rank over the studies where the metric has a value."
    )
    if reasons:
        caption += " --- no value: " + "; ".join(latex_escape(reason) for reason in reasons) + "."
    return "\n".join(
        [
            f"% needs {PACKAGES}",
            r"\begin{table}[t]",
            r"\centering",
            r"\small",
            rf"\begin{{tabular}}{{{columns}}}",
            r"\toprule",
            header + r" \\",
            r"\midrule",
            *body,
            r"\bottomrule",
            r"\end{tabular}",
            rf"\caption{{{caption}}}",
            r"\label{tab:metric-benchmark}",
            r"\end{table}",
            "",
        ]
    )


def _latex_cell(cell: BenchmarkCell, best: bool) -> str:
    if cell.value is None:
        return LATEX_MISSING
    return _bold(number_text(cell.value), best) + (r"$^{*}$" if cell.significant else "")


def _bold(text: str, bold: bool) -> str:
    return rf"\textbf{{{text}}}" if bold else text


def _bracketed(text: str, best: bool) -> str:
    return f"[{text}]" if best else text

"""One study's benchmark column read from its stored report document (a ready report snapshot) instead of
computed from its report inputs: the same cells :func:`stats.benchmark.study.study_column` computes, with
nothing loaded and nothing computed.

The report computes every statistic the benchmark shows, with the same functions on the same human scores
(stats/report/metrics.py, stats/report/meta.py): the flat coefficients with their p-values and Fisher-z
intervals in every metric row; the grouped ones in the row's ``grouped`` entry when the report was grouped
the same way; the pairwise accuracies (and the trivial level acc_eq is tested against) in
``pairwise_accuracy``. :func:`document_answers` says whether a document can answer a benchmark's options:
the report's filter and normalisation must be the defaults the benchmark uses, and for every statistic
with an interval over resamples its resamples and seed must be the benchmark's. A document that cannot
answer is not read; the caller computes that column from the inputs.
"""

from __future__ import annotations

from stats.benchmark.cells import SIGNIFICANCE, BenchmarkCell
from stats.benchmark.judges import benchmark_keys, matched_column, matched_keys
from stats.benchmark.options import ACCURACIES, BenchmarkOptions
from stats.benchmark.study import NO_HUMAN_SCORES
from stats.benchmark.table import MetricKey, StudyColumn
from stats.report.document_types import (
    AccuracyFields,
    GroupedCorrelationFields,
    Interval,
    MetricRow,
    ReportDocument,
)
from stats.report.types import ReportOptions


def document_answers(document: ReportDocument, options: BenchmarkOptions) -> bool:
    """Whether ``document`` holds the cells of ``options`` exactly as the benchmark computes them."""
    stored = document["options"]
    defaults = ReportOptions()
    if stored["filter"] != defaults.filter or stored["normalise"] != defaults.normalise:
        return False
    if options.statistic not in ACCURACIES and options.grouping == "none":
        return True  # flat coefficients, p-values and Fisher-z intervals: no resampling in them
    same_draws = stored["resamples"] == options.resamples and stored["seed"] == options.seed
    if options.statistic in ACCURACIES:
        entries = document.get("pairwise_accuracy")
        return same_draws and entries is not None and all("trivial" in e["context"] for e in entries)
    return same_draws and stored.get("grouping", "none") == options.grouping


def question_name(document: ReportDocument, question: str | None) -> str | None:
    """``question`` when the document has it; the first question's name when ``question`` is ``None``."""
    names = [summary["name"] for summary in document["questions"]]
    if question is None:
        return names[0] if names else None
    return question if question in names else None


def document_metrics(document: ReportDocument, question: str) -> list[MetricKey]:
    """The metrics of the question's rows: the signatures with values, then those scored without one; an LLM
    judge by its identity across studies (stats/benchmark/judges.py)."""
    return matched_keys(_keys(document, question), question)


def _keys(document: ReportDocument, question: str) -> list[MetricKey]:
    rows = [row for row in document["rows"] if row["question"] == question]
    valued = [MetricKey(row["signature"], row["metric"]) for row in rows if "no_values" not in row]
    return valued + [MetricKey(row["signature"], row["metric"]) for row in rows if "no_values" in row]


def document_column(
    document: ReportDocument, options: BenchmarkOptions, *, question: str, label: str | None = None
) -> StudyColumn:
    """The study's cells of ``question`` (a name the document has; :func:`document_answers` must hold), an LLM
    judge's under its identity across studies with its mean mass on labels (stats/benchmark/judges.py)."""
    rows = [row for row in document["rows"] if row["question"] == question]
    judges = {row["signature"]: row["judge"] for row in rows if "judge" in row}
    column = _column(document, options, question, label or document["study_name"])
    return matched_column(column, benchmark_keys(_keys(document, question), question), judges)


def _column(document: ReportDocument, options: BenchmarkOptions, question: str, name: str) -> StudyColumn:
    rows = [row for row in document["rows"] if row["question"] == question]
    missing = {row["signature"]: row["no_values"] for row in rows if "no_values" in row}
    valued = [row for row in rows if "no_values" not in row]
    summary = next(entry for entry in document["questions"] if entry["name"] == question)
    if summary["human_scored"] == 0:
        texts = [row["signature"] for row in valued]
        return StudyColumn(name, {}, {**dict.fromkeys(texts, NO_HUMAN_SCORES), **missing})
    if options.statistic in ACCURACIES:
        entries = {
            entry["signature"]: entry
            for entry in document.get("pairwise_accuracy", [])
            if entry["question"] == question
        }
        cells = {
            row["signature"]: _system_cell(entries[row["signature"]]["system"])
            if options.statistic == "system_accuracy"
            else _context_cell(entries[row["signature"]]["context"])
            for row in valued
        }
    elif options.grouping == "none":
        cells = {row["signature"]: _flat_cell(row, options.statistic) for row in valued}
    else:
        cells = {row["signature"]: _grouped_cell(row, options.statistic) for row in valued}
    return StudyColumn(name, cells, missing)


def _interval(interval: Interval) -> tuple[float, float] | None:
    low, high = interval
    return (low, high) if low is not None and high is not None else None


def _flat_cell(row: MetricRow, statistic: str) -> BenchmarkCell:
    value: float | None = row[statistic]  # type: ignore[literal-required]
    p_value: float | None = row[f"{statistic}_p"]  # type: ignore[literal-required]
    return BenchmarkCell(
        value=value,
        significant=p_value is not None and p_value < SIGNIFICANCE,
        p_value=p_value,
        ci=_interval(row[f"{statistic}_ci"]),  # type: ignore[literal-required]
        n=row["n"],
        note=row["note"],
    )


def _grouped_cell(row: MetricRow, statistic: str) -> BenchmarkCell:
    grouped: GroupedCorrelationFields = row["grouped"]
    ci = _interval(grouped[f"{statistic}_ci"])  # type: ignore[literal-required]
    return BenchmarkCell(
        value=grouped[statistic],  # type: ignore[literal-required]
        significant=ci is not None and (ci[0] > 0 or ci[1] < 0),
        ci=ci,
        n=grouped["groups"],
        note=grouped["note"],
    )


def _system_cell(fields: AccuracyFields) -> BenchmarkCell:
    """Significant when the interval lies above 0.5, the accuracy of an ordering at random."""
    return _accuracy_cell(fields, 0.5)


def _context_cell(fields: AccuracyFields) -> BenchmarkCell:
    """Significant when the interval lies above the better trivial metric's acc_eq."""
    return _accuracy_cell(fields, fields.get("trivial"))


def _accuracy_cell(fields: AccuracyFields, level: float | None) -> BenchmarkCell:
    ci = _interval(fields["ci"])
    return BenchmarkCell(
        value=fields["value"],
        significant=ci is not None and level is not None and ci[0] > level,
        ci=ci,
        n=fields["pairs"],
        note=fields["note"],
    )

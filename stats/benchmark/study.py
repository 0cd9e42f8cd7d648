"""One study's column of the benchmark from its report inputs (what correlation/report/loading.py reads):
the human scores as the report computes them (its filter and options), the metric values of the rated
replies, and each reply's context and system."""

from __future__ import annotations

import numpy as np

from stats.benchmark.cells import BenchmarkCell, study_cells
from stats.benchmark.judges import benchmark_keys, matched_column, matched_keys
from stats.benchmark.options import BenchmarkOptions
from stats.benchmark.table import MetricKey, StudyColumn
from stats.report.human import human_scores
from stats.report.judges import judge_fields
from stats.report.metrics import metric_matrix
from stats.report.types import QuestionInputs, ReportInputs, ReportOptions

NO_QUESTION = "the study has no question"
NO_HUMAN_SCORES = "no reply has a human score yet"


def study_metrics(inputs: ReportInputs, question: str | None = None) -> list[MetricKey]:
    """The study's metrics: every signature with a value, and those scored without one (``unvalued``); an LLM
    judge by its identity across studies for ``question`` (the first question when ``None``;
    stats/benchmark/judges.py)."""
    chosen = _question(inputs, question)
    return matched_keys(_keys(inputs), chosen.name) if chosen is not None else _keys(inputs)


def _keys(inputs: ReportInputs) -> list[MetricKey]:
    keys = [MetricKey(signature.text, signature.name) for signature in inputs.signatures]
    return keys + [MetricKey(metric.text, metric.name) for metric in inputs.unvalued]


def study_column(
    inputs: ReportInputs,
    options: BenchmarkOptions,
    *,
    label: str | None = None,
    question: str | None = None,
    report_options: ReportOptions | None = None,
) -> StudyColumn:
    """The study's cells: ``question`` (its name; the first question when ``None``), human scores under
    ``report_options`` (the report's defaults when ``None``); an LLM judge's under its identity across studies
    (stats/benchmark/judges.py)."""
    name = label or inputs.study_name
    missing = {metric.text: metric.reason for metric in inputs.unvalued}
    chosen = _question(inputs, question)
    texts = [signature.text for signature in inputs.signatures]
    if chosen is None:
        return StudyColumn(name, {}, {**dict.fromkeys(texts, NO_QUESTION), **missing})
    keys = benchmark_keys(_keys(inputs), chosen.name)
    scores = human_scores(
        chosen, inputs.annotators, report_options or ReportOptions(), inputs.study_threshold
    )
    if not scores:
        column = StudyColumn(name, {}, {**dict.fromkeys(texts, NO_HUMAN_SCORES), **missing})
        return matched_column(column, keys, {})
    items = np.array(sorted(scores), dtype=np.int64)
    human = np.array([scores[int(item)] for item in items])
    values = metric_matrix(items, list(inputs.signatures), inputs.metric_values)
    replies = [inputs.responses[int(item)] for item in items]
    cells: list[BenchmarkCell] = study_cells(
        human,
        values,
        [reply.context_key for reply in replies],
        [reply.system for reply in replies],
        options,
    )
    column = StudyColumn(name, dict(zip(texts, cells, strict=True)), missing)
    return matched_column(column, keys, judge_fields(inputs))


def _question(inputs: ReportInputs, name: str | None) -> QuestionInputs | None:
    if name is None:
        return inputs.questions[0] if inputs.questions else None
    return next((question for question in inputs.questions if question.name == name), None)

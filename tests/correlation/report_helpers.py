"""Report documents for tests, computed the way the page, the API and ``study_report`` compute them."""

from __future__ import annotations

from typing import Any

from annotation.models import Question, Study
from correlation.report_builder import build_report
from correlation.report_loading import report_inputs
from correlation.report_types import ReportOptions


def report_document(
    study: Study, question: Question | None = None, *, resamples: int = 200, **options: str
) -> dict[str, Any]:
    """The report document of ``study`` (every question, or ``question``), with few resamples for speed."""
    inputs = report_inputs(study=study, question=question)
    document, _ = build_report(inputs, ReportOptions.parse({"resamples": str(resamples), **options}))
    return document


def report_plots(study: Study, *, resamples: int = 0, **options: str) -> dict[str, Any]:
    inputs = report_inputs(study=study)
    _, plots = build_report(inputs, ReportOptions.parse({"resamples": str(resamples), **options}))
    return plots


def entries(document: dict[str, Any], section: str, question: str | None = None) -> list[dict[str, Any]]:
    return [entry for entry in document[section] if question is None or entry.get("question") == question]

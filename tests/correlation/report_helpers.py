"""Report documents for tests, computed the way the page, the API and ``study_report`` compute them."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

import pytest
from django.test import Client

from annotation.models import Question, Study
from correlation.models import ReportSnapshot, SnapshotStatus
from correlation.report.cache import report_snapshot_build
from correlation.report.loading import report_inputs
from stats.report.builder import build_report
from stats.report.document_types import ReportDocument
from stats.report.plot_types import ReportPlots
from stats.report.types import ReportOptions


def report_document(
    study: Study, question: Question | None = None, *, resamples: int = 200, **options: str
) -> ReportDocument:
    """The report document of ``study`` (every question, or ``question``), with few resamples for speed."""
    inputs = report_inputs(study=study, question=question)
    document, _ = build_report(inputs, ReportOptions.parse({"resamples": str(resamples), **options}))
    return document


COMPUTE_FORM = re.compile(r'<form method="post" action="([^"]+)" id="report-compute">')


def report_page(client: Client, url: str) -> Any:
    """The report page once its report is computed, as a person sees it: the page computes nothing while it
    loads (correlation/report/cache.py), so this posts what its script posts (the compute form, a small
    study) and loads the page again."""
    page = client.get(url)
    found = COMPUTE_FORM.search(page.content.decode()) if page.status_code == 200 else None
    if found is not None:
        client.post(html.unescape(found.group(1)), HTTP_ACCEPT="application/json")
        page = client.get(url)
    return page


def report_plots(study: Study, *, resamples: int = 0, **options: str) -> ReportPlots:
    inputs = report_inputs(study=study)
    _, plots = build_report(inputs, ReportOptions.parse({"resamples": str(resamples), **options}))
    return plots


def entries(document: Mapping[str, Any], section: str, question: str | None = None) -> list[dict[str, Any]]:
    """A section by name (a test's loop over sections; the code names its sections as keys mypy checks)."""
    return [entry for entry in document[section] if question is None or entry.get("question") == question]


def assert_same_numbers(first: object, second: object) -> None:
    """Two report documents (or parts) are the same: equal texts, structure and nulls, and numbers equal to
    rounding (numpy's sums and BLAS depend on memory alignment, so two computations of one statistic can
    differ in the last bit)."""
    assert _texts(first) == _texts(second)
    assert _numbers(first) == pytest.approx(_numbers(second), rel=1e-12, abs=1e-12)


def _numbers(value: object) -> list[float]:
    if isinstance(value, dict):
        return [number for key in sorted(value) for number in _numbers(value[key])]
    if isinstance(value, list):
        return [number for entry in value for number in _numbers(entry)]
    return [float(value)] if isinstance(value, int | float) and not isinstance(value, bool) else []


def _texts(value: object) -> list[object]:
    if isinstance(value, dict):
        return [(key, text) for key in sorted(value) for text in _texts(value[key])]
    if isinstance(value, list):
        return [("#", len(value)), *(text for entry in value for text in _texts(entry))]
    return ["<number>"] if isinstance(value, int | float) and not isinstance(value, bool) else [value]


def report_get(client: Any, url: str, *args: Any, **kwargs: Any) -> Any:
    """GET a report answer (the API, a download) as a client that polls: the request computes nothing and
    answers 202 Accepted while the report is not ready (correlation/report/served.py); then the worker's
    build runs here (the body of ``correlation.build_report``) and the same request is made again."""
    answer = client.get(url, *args, **kwargs)
    if answer.status_code != 202:
        return answer
    assert answer["Location"]
    assert int(answer["Retry-After"]) > 0
    waiting = ReportSnapshot.objects.filter(status__in=(SnapshotStatus.PENDING, SnapshotStatus.RUNNING))
    for snapshot_id in waiting.values_list("pk", flat=True):
        report_snapshot_build(snapshot_id=snapshot_id)
    answer = client.get(url, *args, **kwargs)
    assert answer.status_code != 202, "the report was built, yet the answer is still 202"
    return answer

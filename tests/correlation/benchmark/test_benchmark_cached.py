"""The benchmark read from the studies' stored reports (correlation/benchmark/cached_reports.py): every cell
equals the one computed from the report inputs, for every statistic and grouping; a stored report is read
only while it is the study's current one and holds the cells (same resamples and seed where an interval
resamples, same grouping for grouped coefficients), and reading costs three queries whatever the studies."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Rating, Response
from correlation.benchmark.cached_reports import cached_report_documents
from correlation.benchmark.selectors import metric_benchmark
from correlation.report.cache import report_current
from stats.benchmark.options import BenchmarkOptions
from stats.report.types import ReportOptions
from tests.correlation.benchmark.builders import BLEU, two_studies
from tests.correlation.builders import bump_data_version

pytestmark = pytest.mark.django_db

RESAMPLES = 60


@pytest.fixture
def studies(researcher):
    return two_studies(researcher)


def _store_reports(studies, grouping: str = "none") -> None:
    for study in studies:
        report_current(study=study, options=ReportOptions(resamples=RESAMPLES, grouping=grouping))


def _assert_same(cached, computed) -> None:
    assert cached.studies == computed.studies
    assert [row.metric for row in cached.rows] == [row.metric for row in computed.rows]
    for ours, theirs in zip(cached.rows, computed.rows, strict=True):
        assert ours.best == theirs.best
        assert ours.studies == theirs.studies
        assert ours.mean == pytest.approx(theirs.mean, abs=1e-12, nan_ok=True)
        assert ours.mean_rank == pytest.approx(theirs.mean_rank, abs=1e-12, nan_ok=True)
        for mine, other in zip(ours.cells, theirs.cells, strict=True):
            assert (mine.value is None) == (other.value is None)
            if mine.value is not None:
                assert mine.value == pytest.approx(other.value, abs=1e-12)
                assert mine.significant == other.significant
                assert mine.n == other.n
            assert (mine.p_value is None) == (other.p_value is None), (mine, other)
            if mine.p_value is not None:
                assert mine.p_value == pytest.approx(other.p_value, rel=1e-9)
            assert mine.note == other.note
            assert (mine.ci is None) == (other.ci is None)
            if mine.ci is not None:
                assert mine.ci == pytest.approx(other.ci, abs=1e-12)


@pytest.mark.parametrize(
    ("statistic", "grouping"),
    [
        ("pearson", "none"),
        ("kendall", "none"),
        ("spearman", "context"),
        ("pearson", "system"),
        ("system_accuracy", "none"),
        ("reply_accuracy", "none"),
    ],
)
def test_cells_read_from_stored_reports_equal_the_computed_ones(studies, statistic, grouping) -> None:
    _store_reports(studies, grouping=grouping)
    options = BenchmarkOptions(statistic=statistic, grouping=grouping, resamples=RESAMPLES)

    assert set(cached_report_documents(studies=studies, options=options)) == {s.pk for s in studies}
    with CaptureQueriesContext(connection) as queries:
        cached = metric_benchmark(studies=studies, options=options)
    computed = metric_benchmark(studies=studies, options=options, cached=False)

    assert len(queries) == 3  # versions, candidate snapshots, their documents: no report input loaded
    _assert_same(cached, computed)
    if statistic == "reply_accuracy":  # its significance needs the trivial level the report now stores
        assert any(cell.significant for row in cached.rows for cell in row.cells)


def test_a_report_that_cannot_answer_is_not_read(studies) -> None:
    _store_reports(studies, grouping="none")  # RESAMPLES resamples, not grouped

    grouped = BenchmarkOptions(statistic="spearman", grouping="context", resamples=RESAMPLES)
    other_draws = BenchmarkOptions(statistic="system_accuracy", resamples=RESAMPLES + 1)
    flat_other_draws = BenchmarkOptions(statistic="pearson", resamples=RESAMPLES + 1)

    assert cached_report_documents(studies=studies, options=grouped) == {}
    assert cached_report_documents(studies=studies, options=other_draws) == {}
    # a flat coefficient resamples nothing, but the snapshot's key names its resamples: not found either
    assert cached_report_documents(studies=studies, options=flat_other_draws) == {}
    _assert_same(
        metric_benchmark(studies=studies, options=grouped),
        metric_benchmark(studies=studies, options=grouped, cached=False),
    )


def test_a_stored_report_of_older_data_is_not_read(studies) -> None:
    _store_reports(studies)
    options = BenchmarkOptions(statistic="pearson", resamples=RESAMPLES)
    before = metric_benchmark(studies=studies, options=options)
    first = studies[0]
    rating = Rating.objects.filter(response__in=Response.objects.filter(context__study=first)).earliest("pk")
    rating.value = 1 if rating.value != 1 else 5
    rating.save()
    bump_data_version(first)

    assert set(cached_report_documents(studies=studies, options=options)) == {studies[1].pk}
    after = metric_benchmark(studies=studies, options=options)
    _assert_same(after, metric_benchmark(studies=studies, options=options, cached=False))
    bleu = next(row for row in after.rows if row.metric.text == BLEU)
    assert bleu.cells[0].value != next(r for r in before.rows if r.metric.text == BLEU).cells[0].value

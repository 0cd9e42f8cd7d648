"""A report runs numpy's BLAS with the threads it is given, 1 by default (stats/report/builder.py): OpenBLAS
threads that wait for work spin, and a report is one task of a worker beside others. The limit holds while the
report is built and is lifted afterwards."""

from __future__ import annotations

import os

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from stats.report.builder import BLAS_THREADS, build_report
from stats.report.types import ReportOptions
from tests.stats.test_figures import synthetic_inputs


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


@pytest.mark.parametrize("threads", [None, 1, 2])
def test_the_report_is_built_with_the_blas_threads_it_is_given(threads: int | None) -> None:
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs 2 cores to tell 1 BLAS thread from 2")
    seen: list[set[int]] = []
    inputs = synthetic_inputs()
    with threadpool_limits(
        limits=2, user_api="blas"
    ):  # the process's own setting, which the report must restore
        before = _blas_threads()
        asked = {} if threads is None else {"blas_threads": threads}
        build_report(
            inputs, ReportOptions(resamples=20), lambda done, total: seen.append(_blas_threads()), **asked
        )
        after = _blas_threads()
    assert before, "numpy's BLAS is not visible to threadpoolctl"
    expected = BLAS_THREADS if threads is None else threads
    assert seen
    assert all(step == {expected} for step in seen)
    assert after == before


def test_a_report_refuses_fewer_than_one_blas_thread() -> None:
    with pytest.raises(ValueError, match="at least 1 BLAS thread"):
        build_report(synthetic_inputs(), ReportOptions(resamples=20), blas_threads=0)

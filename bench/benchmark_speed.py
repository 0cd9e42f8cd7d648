"""The benchmark across studies: the table of 10 studies x 20 metrics read from the studies'
stored reports, against the same table computed from their report inputs.

On a fresh SQLite database: ``--studies`` synthetic studies of ``--replies`` replies each (contexts of 5
replies, one per system, 9 raters on a 1-5 scale, 20 metric signatures shared by every study: the
synthetic study of bench/report_speed.py), and each study's report computed and stored once with the
default options (as opening its report page does). Then, interleaved over ``--rounds`` rounds (the order
alternates: cached first in odd rounds):

* cached: ``metric_benchmark`` reading every column from the stored reports (three queries);
* computed: the same table computed from every study's report inputs (``cached=False``);
* API: ``GET /api/benchmarks/?studies=...`` as a browser or script gets it (JSON), through Django's test
  client, with the stored reports.

Each for every statistic given (``--statistics``; Pearson flat by default), each side run once first (imports, the first request). CPU (process) and wall time
min / median / max, and the ratio computed / cached per round. Target: the cached table under 1 s.

    NLTK_DATA=var/nltk_data .venv/bin/python -m bench.benchmark_speed [--studies 10] [--replies 1000] \\
        [--rounds 5] [--statistics pearson,system_accuracy]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

from bench.report_speed import RATERS, database_study, setup_django, spread


def build_study(number: int, replies: int) -> Any:
    """Study ``number``: bench/report_speed.py's synthetic study (its own seed), in contexts of one reply per
    system, its 20 metric signatures shared with the other studies (a benchmark matches metrics by
    signature), its data version bumped once as the importers do."""
    from annotation.models import Study

    study = database_study(
        replies, seed=number, name=f"study {number}", shared=True, contexts_of_systems=True
    )
    Study.objects.filter(pk=study.pk).update(data_version=1, kappa_threshold=None)
    return Study.objects.get(pk=study.pk)


def timed_once(function: Callable[[], object]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    function()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=10)
    parser.add_argument("--replies", type=int, default=1000, help="replies per study")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--statistics", default="pearson", help="comma-separated benchmark statistics")
    args = parser.parse_args()
    setup_django("dialeval-benchmark-bench-")

    from django.test import Client

    from correlation.benchmark.cached_reports import cached_report_documents
    from correlation.benchmark.selectors import metric_benchmark
    from correlation.report.cache import report_current
    from stats.benchmark.options import BenchmarkOptions
    from stats.report.types import ReportOptions

    started = time.perf_counter()
    studies = [build_study(number, args.replies) for number in range(args.studies)]
    owner = studies[0].owner
    print(f"built {len(studies)} studies in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    started = time.perf_counter()
    for study in studies:
        report_current(study=study, options=ReportOptions())
    print(f"stored their reports in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    client = Client()
    client.force_login(owner)
    ids = ",".join(str(study.pk) for study in studies)

    print(f"# Benchmark table from stored reports ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(
        f"{args.studies} studies x {args.replies} replies x {RATERS} raters x 20 metrics; {args.rounds} "
        "rounds, interleaved; CPU and wall s min / median / max; ratio computed / cached per round"
    )
    print()
    print("| statistic | table | CPU s | wall s | computed / cached, CPU | wall |")
    print("|---|---|---|---|---|---|")
    for statistic in [part.strip() for part in args.statistics.split(",") if part.strip()]:
        options = BenchmarkOptions(statistic=statistic)
        tables = metric_benchmark(studies=studies, options=options)
        assert len(tables.rows) == 20
        assert len(tables.studies) == args.studies
        stored = cached_report_documents(studies=studies, options=options)
        assert len(stored) == args.studies, "every column is read from a stored report"

        def api(statistic: str = statistic) -> None:
            response = client.get("/api/benchmarks/", {"studies": ids, "statistic": statistic})
            assert response.status_code == 200, response.content[:300]

        sides: dict[str, Callable[[], object]] = {
            "cached": partial(metric_benchmark, studies=studies, options=options),
            "computed": partial(metric_benchmark, studies=studies, options=options, cached=False),
            "API GET (cached)": api,
        }
        for function in sides.values():  # warm: imports, the first request's set-up
            function()
        found: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        for round_number in range(args.rounds):
            order = list(sides) if round_number % 2 == 0 else list(reversed(sides))
            for name in order:
                found[name].append(timed_once(sides[name]))
        ratio_cpu = [c[0] / a[0] for a, c in zip(found["cached"], found["computed"], strict=True)]
        ratio_wall = [c[1] / a[1] for a, c in zip(found["cached"], found["computed"], strict=True)]
        for name, timings in found.items():
            cpu, wall = [t[0] for t in timings], [t[1] for t in timings]
            ratios = (
                f"{spread(ratio_cpu, digits=1)} | {spread(ratio_wall, digits=1)}"
                if name == "cached"
                else " | "
            )
            print(f"| {statistic} | {name} | {spread(cpu, digits=3)} | {spread(wall, digits=3)} | {ratios} |")
        median = statistics.median(t[0] for t in found["cached"])
        print(
            f"cached {statistic}: median CPU {median:.3f} s (target < 1 s: {'met' if median < 1 else 'NOT met'})",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()

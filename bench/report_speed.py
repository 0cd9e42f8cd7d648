"""Correlation report benchmark (issue 10): how long the full report takes, by part, and how it grows.

A synthetic study of N replies x 9 raters (1-5 scale, every rater rates every reply) x 20 metric
signatures (a third of them rounded to one decimal, so with ties), 5 systems:

* Part A, the statistics (no database): the rater side (filter, human scores, alpha ordinal/interval/before
  the filter, Fleiss, ICC, pairwise Cohen, leave-one-out alpha, Human (Avg)/(Max), Figure 4 data), the
  point statistics of every metric overall and per system with all metric-pair comparisons (Williams)
  and the quantiles, the paired bootstrap (1,000 resamples, overall and per system), and the whole
  ``build_report`` end to end. Imports are warmed first (pingouin pulls in matplotlib: about 1.5 s once
  per process, which a worker pays once).
* Part B, on a SQLite database through Django: loading the inputs (``report_inputs``), computing and
  storing a snapshot (``report_compute_now``), and the cached page as the browser gets it (GET of the
  report page for an unchanged study, through Django's test client), plus the figures JSON.

* Part C, against the reference library: the paired bootstrap of 20 metrics (Pearson and Spearman, 1,000
  resamples) by this project and by ``scipy.stats.bootstrap`` (vectorised, paired, percentile; one call per
  metric and coefficient), timed interleaved in one run (project, project with exact re-ranking, scipy;
  repeated ``--rounds`` times), with the ratio scipy / project per round as min / median / max. The two
  draw different resamples, so their intervals agree to Monte Carlo noise; the largest difference of an
  interval end is printed.

Each part runs ``--rounds`` times; the table gives CPU time (process) and wall time, min / median / max.
Targets: the full report at 10k replies under 5 s; a cached page under 300 ms.

    .venv/bin/python -m bench.report_speed [--sizes 1000,10000,50000] [--db-sizes 1000,10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RATERS = 9
METRICS = 20
SYSTEMS = 5


def synthetic_inputs(n: int, *, raters: int = RATERS, metrics: int = METRICS, seed: int = 0) -> Any:
    from stats.report.types import (
        AnnotatorInfo,
        QuestionInputs,
        ReportInputs,
        ResponseInfo,
        SignatureInputs,
    )

    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=n)
    noise = rng.integers(-1, 2, size=(n, raters)) * (rng.random((n, raters)) < 0.4)
    values = np.clip(truth[:, None] + noise, 1, 5)
    ratings = tuple((k, i, int(values[i, k])) for i in range(n) for k in range(raters))
    metric_values = {}
    for j in range(metrics):
        column = truth * 0.1 * (j % 4) + rng.normal(0, 1, n)
        if j % 3 == 0:
            column = np.round(column, 1)
        metric_values[j] = dict(zip(range(n), column.tolist(), strict=True))
    return ReportInputs(
        study_id=1,
        study_name="bench",
        data_version=1,
        study_threshold=0.2,
        responses={
            i: ResponseInfo(text=f"reply {i}", system=f"system-{i % SYSTEMS}", context=f"c{i}")
            for i in range(n)
        },
        annotators={
            k: AnnotatorInfo(
                key=k, pseudonym=f"rater-{k}", identity_known=True, inclusion="auto", agreement=0.5
            )
            for k in range(raters)
        },
        questions=(QuestionInputs(name="q", scale_min=1, scale_max=5, ratings=ratings, imported_means={}),),
        signatures=tuple(
            SignatureInputs(
                id=j,
                name=f"metric-{j}",
                text=f"metric-{j}|refs:single|version:bench",
                references="single",
                group="Referenced",
            )
            for j in range(metrics)
        ),
        metric_values=metric_values,
    )


def timed(function: Callable[[], object], rounds: int) -> tuple[list[float], list[float]]:
    cpu, wall = [], []
    for _ in range(rounds):
        started_cpu, started_wall = time.process_time(), time.perf_counter()
        function()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started_wall)
    return cpu, wall


def spread(values: list[float], unit: float = 1.0, digits: int = 2) -> str:
    scaled = [value * unit for value in values]
    return f"{min(scaled):.{digits}f} / {statistics.median(scaled):.{digits}f} / {max(scaled):.{digits}f}"


def part_a(sizes: list[int], rounds: int) -> list[tuple[int, str, list[float], list[float]]]:
    from stats.report.builder import build_report
    from stats.report.types import ReportOptions

    build_report(synthetic_inputs(300), ReportOptions(resamples=20))  # warm the imports
    results = []
    for n in sizes:
        for name, function in _statistics_parts(n):
            cpu, wall = timed(function, rounds)
            results.append((n, name, cpu, wall))
            print(f"  {n:>6} {name}: cpu {spread(cpu)} s, wall {spread(wall)} s", file=sys.stderr, flush=True)
    return results


def _statistics_parts(n: int) -> list[tuple[str, Callable[[], object]]]:
    from stats.bootstrap import Resamples, bootstrap_correlations
    from stats.report.builder import build_report
    from stats.report.human import human_side
    from stats.report.metrics import _matrix, metric_section
    from stats.report.types import ReportOptions

    options = ReportOptions()
    inputs = synthetic_inputs(n)
    question = inputs.questions[0]
    side = human_side(question, inputs.annotators, options, inputs.study_threshold)
    items = np.array(sorted(side.scores))
    x = np.array([side.scores[int(i)] for i in items])
    values = _matrix(items, list(inputs.signatures), inputs.metric_values)
    systems = np.array([inputs.responses[int(i)].system for i in items])

    def bootstrap() -> None:
        bootstrap_correlations(x, values, Resamples(n=x.size, count=options.resamples, seed=options.seed))
        for offset, system in enumerate(sorted(set(systems))):
            mask = systems == system
            count = int(mask.sum())
            bootstrap_correlations(
                x[mask], values[mask], Resamples(count, options.resamples, options.seed + 1 + offset)
            )

    return [
        (
            "rater side (filter, agreement, Human rows, Fig. 4)",
            lambda: human_side(question, inputs.annotators, options, inputs.study_threshold),
        ),
        (
            "metrics: point statistics, per system, 190 pairs, quantiles",
            lambda: metric_section("q", side.scores, inputs, ReportOptions(resamples=0)),
        ),
        ("bootstrap: 1,000 resamples, overall + 5 systems", bootstrap),
        ("whole report (build_report)", lambda: build_report(inputs, options)),
    ]


def part_c(sizes: list[int], rounds: int) -> list[str]:
    """The bootstrap against scipy.stats.bootstrap, interleaved; returns the table's lines."""
    return [line for n in sizes for line in _comparison(n, rounds)]


def _vectorised_pearson(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    a = a - a.mean(axis=axis, keepdims=True)
    b = b - b.mean(axis=axis, keepdims=True)
    return np.asarray((a * b).sum(axis=axis) / np.sqrt((a * a).sum(axis=axis) * (b * b).sum(axis=axis)))


def _vectorised_spearman(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    from scipy import stats as scipy_stats

    return _vectorised_pearson(
        scipy_stats.rankdata(a, axis=axis), scipy_stats.rankdata(b, axis=axis), axis=axis
    )


def _comparison(n: int, rounds: int) -> list[str]:
    from scipy import stats as scipy_stats

    from stats.bootstrap import BootstrapDraws, Resamples, bootstrap_correlations, percentile_interval
    from stats.report.human import human_side
    from stats.report.metrics import _matrix
    from stats.report.types import ReportOptions

    inputs = synthetic_inputs(n)
    side = human_side(inputs.questions[0], inputs.annotators, ReportOptions(), inputs.study_threshold)
    items = np.array(sorted(side.scores))
    x = np.array([side.scores[int(i)] for i in items])
    values = _matrix(items, list(inputs.signatures), inputs.metric_values)
    draws: dict[str, BootstrapDraws] = {}
    reference_intervals: list[tuple[float, float]] = []

    def project(method: str) -> Callable[[], object]:
        def run() -> None:
            draws[method] = bootstrap_correlations(x, values, Resamples(n, 1000), spearman=method)

        return run

    def reference() -> None:
        reference_intervals.clear()
        for column in range(values.shape[1]):
            for statistic in (_vectorised_pearson, _vectorised_spearman):
                result = scipy_stats.bootstrap(
                    (x, values[:, column]),
                    statistic,
                    paired=True,
                    vectorized=True,
                    n_resamples=1000,
                    batch=max(1, 2_000_000 // n),
                    method="percentile",
                    random_state=np.random.default_rng(column),
                )
                reference_intervals.append((result.confidence_interval.low, result.confidence_interval.high))

    runners = [
        ("project (auto)", project("auto")),
        ("project (exact re-ranking)", project("exact")),
        ("scipy.stats.bootstrap", reference),
    ]
    cpu: dict[str, list[float]] = {name: [] for name, _ in runners}
    wall: dict[str, list[float]] = {name: [] for name, _ in runners}
    for _ in range(rounds):
        for name, runner in runners:  # interleaved: A, B, C, A, B, C, ...
            round_cpu, round_wall = timed(runner, 1)
            cpu[name] += round_cpu
            wall[name] += round_wall
    ours = draws["auto"]
    gap = 0.0
    for column in range(values.shape[1]):
        for offset, column_draws in enumerate((ours.pearson[column], ours.spearman[column])):
            interval = percentile_interval(column_draws)
            assert interval is not None
            low, high = reference_intervals[2 * column + offset]
            gap = max(gap, abs(interval[0] - low), abs(interval[1] - high))
    lines = []
    for name, _ in runners:
        ratios = ""
        if not name.startswith("scipy"):
            ratio_cpu = [b / a for a, b in zip(cpu[name], cpu["scipy.stats.bootstrap"], strict=True)]
            ratio_wall = [b / a for a, b in zip(wall[name], wall["scipy.stats.bootstrap"], strict=True)]
            ratios = f"{spread(ratio_cpu, digits=1)} | {spread(ratio_wall, digits=1)}"
        else:
            ratios = " | "
        lines.append(f"| {n:,} | {name} | {spread(cpu[name])} | {spread(wall[name])} | {ratios} |")
        print(
            f"  {n:>6} {name}: cpu {spread(cpu[name])} s, wall {spread(wall[name])} s",
            file=sys.stderr,
            flush=True,
        )
    lines.append(
        f"| {n:,} | auto used Spearman with {ours.spearman_method}; largest interval-end difference "
        f"from scipy: {gap:.3f} | | | | |"
    )
    return lines


def part_b(sizes: list[int], rounds: int) -> list[tuple[int, str, list[float], list[float]]]:
    workdir = Path(tempfile.mkdtemp(prefix="dialeval-report-bench-"))
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ["DJANGO_DEBUG"] = "false"
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    call_command("migrate", verbosity=0)
    setup_test_environment()
    results = []
    for n in sizes:
        for name, function, unit in _database_parts(n, rounds):
            cpu, wall = timed(function, rounds if unit == "s" else max(rounds, 5))
            results.append((n, name, cpu, wall))
            shown = (
                f"cpu {spread(cpu)} s, wall {spread(wall)} s"
                if unit == "s"
                else f"wall {spread(wall, 1000, 0)} ms"
            )
            print(f"  {n:>6} {name}: {shown}", file=sys.stderr, flush=True)
    return results


def _database_parts(n: int, rounds: int) -> list[tuple[str, Callable[[], object], str]]:
    from django.test import Client

    from correlation.report.cache import report_compute_now, study_version
    from correlation.report.loading import report_inputs
    from stats.report.types import ReportOptions

    study = _database_study(n)
    options = ReportOptions()
    client = Client()
    client.force_login(study.owner)
    page, figures = f"/reports/{study.pk}/", f"/reports/{study.pk}/figures.json"

    def compute() -> None:
        report_compute_now(study=study, options=options, version=study_version(study=study))

    def get(url: str) -> Callable[[], object]:
        def fetch() -> None:
            response = client.get(url)
            assert response.status_code == 200, response.status_code

        return fetch

    return [
        ("load the inputs from the database", lambda: report_inputs(study=study), "s"),
        ("compute and store a snapshot", compute, "s"),
        ("cached page (GET, unchanged study)", get(page), "ms"),
        ("figures JSON (GET)", get(figures), "ms"),
    ]


def _database_study(n: int) -> Any:
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from annotation.models import Annotator, DialogContext, Question, Rating, Response, Study, System
    from kernel.roles import RESEARCHERS_GROUP
    from scoring.models import MetricScore, MetricSignature

    inputs = synthetic_inputs(n)
    user_model = get_user_model()
    owner, _ = user_model.objects.get_or_create(username="bench-researcher")
    from django.contrib.auth.models import Group

    owner.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    with transaction.atomic():
        study = Study.objects.create(owner=owner, name=f"bench {n} {time.time_ns()}")
        question = Question.objects.create(study=study, name="q", scale_min=1, scale_max=5)
        systems = {
            name: System.objects.create(study=study, name=name)
            for name in sorted({r.system for r in inputs.responses.values()})
        }
        contexts = DialogContext.objects.bulk_create(
            [
                DialogContext(study=study, external_id=f"c{i}", turns=[{"speaker": "A", "text": "hello ."}])
                for i in range(n)
            ],
            batch_size=2000,
        )
        responses = Response.objects.bulk_create(
            [
                Response(
                    context=contexts[i],
                    system=systems[inputs.responses[i].system],
                    text=inputs.responses[i].text,
                )
                for i in range(n)
            ],
            batch_size=2000,
        )
        annotators = [Annotator.objects.create(study=study, pseudonym=f"rater-{k}") for k in range(RATERS)]
        Rating.objects.bulk_create(
            [
                Rating(annotator=annotators[k], response=responses[i], question=question, value=v)
                for k, i, v in inputs.questions[0].ratings
            ],
            batch_size=5000,
        )
        for signature in inputs.signatures:
            stored = MetricSignature.objects.create(
                text=f"{signature.text}|study:{study.pk}",
                name=signature.name,
                parameters={"refs": "single"},
                version="bench",
            )
            MetricScore.objects.bulk_create(
                [
                    MetricScore(response=responses[i], signature=stored, value=v)
                    for i, v in inputs.metric_values[signature.id].items()
                ],
                batch_size=5000,
            )
    return study


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--db-sizes", default="1000,10000")
    parser.add_argument("--compare-sizes", default="1000,10000", help="sizes for the comparison with scipy")
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    sizes = [int(size) for size in arguments.sizes.split(",") if size]
    db_sizes = [int(size) for size in arguments.db_sizes.split(",") if size]
    print(
        f"# report benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {np.__version__}",
        flush=True,
    )
    print(
        f"# {RATERS} raters x {METRICS} metrics x {SYSTEMS} systems, 1,000 bootstrap resamples; {arguments.rounds} rounds; "
        "times in seconds (pages in ms) as min / median / max",
        flush=True,
    )
    results = part_a(sizes, arguments.rounds) if sizes else []
    results += part_b(db_sizes, arguments.rounds) if db_sizes else []
    compare_sizes = [int(size) for size in arguments.compare_sizes.split(",") if size]
    comparison = part_c(compare_sizes, arguments.rounds) if compare_sizes else []
    print("\n| replies | part | CPU (s) | wall (s) |\n|---:|---|---:|---:|")
    for n, name, cpu, wall in results:
        if "GET" in name:
            print(f"| {n:,} | {name} | | {spread(wall, 1000, 0)} ms |")
        else:
            print(f"| {n:,} | {name} | {spread(cpu)} | {spread(wall)} |")
    if comparison:
        print(
            "\nPaired bootstrap of 20 metrics x (Pearson, Spearman), 1,000 resamples, interleaved with scipy"
            "\n\n| replies | implementation | CPU (s) | wall (s) | scipy / this, CPU | scipy / this, wall |"
            "\n|---:|---|---:|---:|---:|---:|"
        )
        print("\n".join(comparison))


if __name__ == "__main__":
    main()

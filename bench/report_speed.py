"""Correlation report benchmark: how long the full report takes, by part, and how it grows.

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

* With ``--meta``, part A also times the meta-evaluation statistics alone (stats/meta: grouped correlations with their
  bootstrap over groups, pairwise accuracy at system level and within contexts with tie calibration and
  their intervals, permutation tests with 1,000 permutations and significance clusters for the item-grouped
  Pearson, acc_eq within contexts and system-level accuracy, how many more ratings:
  :func:`meta_statistics`), and the whole report grouped by context. The report computes its share of them
  itself (stats/report/meta.py: grouped columns, pairwise accuracy, PERM-BOTH/PERM-INPUTS for every pair of
  metrics, clusters, more ratings; ``resamples`` resamples and permutations, 1,000 by default), so the whole
  report is the number the targets are about.
* Part D, ``--against REV``: the whole report (grouped by context when ``--meta``) in this checkout
  against the report of revision REV (its ``stats/`` exported with ``git archive`` into a temporary folder,
  e.g. ``--against 0f6389f``, the code before the meta-evaluation statistics), each timing in a fresh process on the same
  synthetic study, interleaved over ``--rounds`` rounds (A B, then B A, as the other benchmarks alternate
  which side goes first), CPU and wall time min / median / max, and the ratio before / this per round.
  Each side runs numpy's BLAS as its code does: this checkout's report with 1 thread
  (``build_report(blas_threads=1)``), older code with OpenBLAS's default (every core). ``--blas-threads N``
  runs both with N (``OPENBLAS_NUM_THREADS`` in the child processes, and ``blas_threads=N``), which compares
  the code alone; ``--before-blas-threads M`` gives REV's side M instead (``--against HEAD --blas-threads 1
  --before-blas-threads 2``: the same code at 1 and 2 threads). REV's report runs without the meta-evaluation statistics unless ``--before-meta`` (for a REV that
  has them: it is then grouped by context too).

Replies come in contexts of ``--systems`` replies, one per system (Gupta et al. (2019)'s design), rated by
``--raters`` raters, scored by ``--metrics`` metrics.

Each part runs ``--rounds`` times; the table gives CPU time (process) and wall time, min / median / max.
Targets: the full report at 10k replies under 5 s; a cached page under 300 ms; the meta-evaluation: the report with its
statistics at 10,000 replies x 20 metrics x 9 raters under 8 s CPU, at 100,000 x 10 x 5 under 10 s.

    .venv/bin/python -m bench.report_speed [--sizes 1000,10000,50000] [--db-sizes 1000,10000] [--rounds 5]
    .venv/bin/python -m bench.report_speed --sizes 10000 --db-sizes "" --compare-sizes "" --meta \
        --against 0f6389f
    .venv/bin/python -m bench.report_speed --sizes 100000 --raters 5 --metrics 10 --db-sizes "" \
        --compare-sizes "" --meta --against 0f6389f
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RATERS = 9
METRICS = 20
SYSTEMS = 5


def synthetic_inputs(
    n: int, *, raters: int = RATERS, metrics: int = METRICS, systems: int = SYSTEMS, seed: int = 0
) -> Any:
    """n replies in contexts of ``systems`` replies (reply i: system i mod systems, context i // systems)."""
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
            i: ResponseInfo(text=f"reply {i}", system=f"system-{i % systems}", context=f"c{i // systems}")
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


@dataclass(frozen=True)
class Shape:
    """The synthetic study's raters, metrics and systems (replies per context)."""

    raters: int = RATERS
    metrics: int = METRICS
    systems: int = SYSTEMS

    def inputs(self, n: int) -> Any:
        return synthetic_inputs(n, raters=self.raters, metrics=self.metrics, systems=self.systems)


def part_a(
    sizes: list[int], rounds: int, shape: Shape = Shape(), meta: bool = False
) -> list[tuple[int, str, list[float], list[float]]]:
    from stats.report.builder import build_report
    from stats.report.types import ReportOptions

    warm = shape.inputs(300)
    build_report(warm, ReportOptions(resamples=20))  # warm the imports
    if meta:
        meta_statistics(warm, ReportOptions(resamples=20))
    results = []
    for n in sizes:
        for name, function in _statistics_parts(n, shape, meta):
            cpu, wall = timed(function, rounds)
            results.append((n, name, cpu, wall))
            print(f"  {n:>6} {name}: cpu {spread(cpu)} s, wall {spread(wall)} s", file=sys.stderr, flush=True)
    return results


def _statistics_parts(n: int, shape: Shape, meta: bool) -> list[tuple[str, Callable[[], object]]]:
    from stats.bootstrap import Resamples, bootstrap_correlations
    from stats.report.builder import build_report
    from stats.report.human import human_side
    from stats.report.metrics import metric_matrix, metric_section
    from stats.report.types import ReportOptions

    options = ReportOptions()
    inputs = shape.inputs(n)
    question = inputs.questions[0]
    side = human_side(question, inputs.annotators, options, inputs.study_threshold)
    items = np.array(sorted(side.scores))
    x = np.array([side.scores[int(i)] for i in items])
    values = metric_matrix(items, list(inputs.signatures), inputs.metric_values)
    systems = np.array([inputs.responses[int(i)].system for i in items])
    pairs = shape.metrics * (shape.metrics - 1) // 2

    def bootstrap() -> None:
        bootstrap_correlations(x, values, Resamples(n=x.size, count=options.resamples, seed=options.seed))
        for offset, system in enumerate(sorted(set(systems))):
            mask = systems == system
            count = int(mask.sum())
            bootstrap_correlations(
                x[mask], values[mask], Resamples(count, options.resamples, options.seed + 1 + offset)
            )

    parts: list[tuple[str, Callable[[], object]]] = [
        (
            "rater side (filter, agreement, Human rows, Fig. 4)",
            lambda: human_side(question, inputs.annotators, options, inputs.study_threshold),
        ),
        (
            f"metrics: point statistics, per system, {pairs} pairs, quantiles",
            lambda: metric_section("q", side.scores, inputs, ReportOptions(resamples=0)),
        ),
        (f"bootstrap: 1,000 resamples, overall + {shape.systems} systems", bootstrap),
        ("whole report (build_report)", lambda: build_report(inputs, options)),
    ]
    if meta:
        parts += [
            (
                "meta-evaluation statistics (meta_statistics)",
                lambda: meta_statistics(inputs, options, scores=side.scores),
            ),
            (
                "whole report, grouping by context (the meta-evaluation statistics in it)",
                lambda: build_report(inputs, ReportOptions(grouping="context")),
            ),
        ]
    return parts


def meta_statistics(
    inputs: Any,
    options: Any,
    *,
    scores: Mapping[int, float] | None = None,
    permutations: int = 1000,
) -> dict[str, Any]:
    """The meta-evaluation statistics for the first question, as the report would compute them from its inputs: every
    grouped coefficient (context, system) with its interval, pairwise accuracy (system level; within contexts
    with tie calibration) with intervals, significance clusters (permutation tests, 1,000 permutations,
    PERM-BOTH; the pairs test for acc_eq) for three statistics, and how many more ratings. ``scores``: the
    human scores when already known (else they are computed as the report does)."""
    from stats.meta import (
        Layout,
        Statistic,
        StudyRatings,
        grouped_correlations,
        rating_plan,
        reply_pairwise_accuracy,
        significance_clusters,
        system_pairwise_accuracy,
    )
    from stats.report.human import human_scores
    from stats.report.metrics import metric_matrix
    from tests.stats.meta.cluster_inputs import permutation_p_values

    question = inputs.questions[0]
    if scores is None:
        scores = human_scores(question, inputs.annotators, options, inputs.study_threshold)
    items = np.array(sorted(scores), dtype=np.int64)
    x = np.array([scores[int(i)] for i in items])
    signatures = list(inputs.signatures)
    values = metric_matrix(items, signatures, inputs.metric_values)
    replies = [inputs.responses[int(i)] for i in items]
    layout = Layout.of([reply.context for reply in replies], [reply.system for reply in replies])
    result: dict[str, Any] = {}
    for grouping, groups in (("context", layout.contexts), ("system", layout.systems)):
        for coefficient in ("pearson", "spearman", "kendall"):
            result[f"{coefficient}_{grouping}"] = grouped_correlations(
                x, values, groups, coefficient=coefficient, resamples=options.resamples, seed=options.seed
            )
    result["system_accuracy"] = system_pairwise_accuracy(
        x,
        values,
        layout.systems,
        contexts=layout.contexts,
        tie_calibration=True,
        resamples=options.resamples,
        seed=options.seed,
    )
    result["reply_accuracy"] = reply_pairwise_accuracy(
        x, values, layout.contexts, resamples=options.resamples, seed=options.seed
    )
    ranked = {
        "pearson_context": (Statistic("pearson", "context"), result["pearson_context"]),
        "reply_accuracy": (Statistic("reply_accuracy"), result["reply_accuracy"]),
        "system_accuracy": (Statistic("system_accuracy", tie_calibration=True), result["system_accuracy"]),
    }
    for name, (statistic, rows) in ranked.items():
        tests = permutation_p_values(
            x, values, layout, statistic, permutations=permutations, seed=options.seed
        )
        result[f"clusters_{name}"] = significance_clusters([row.value for row in rows], _p_value_of(tests))
    rating_items = [response_id for _, response_id, _ in question.ratings]
    rating_values = [float(value) for _, _, value in question.ratings]
    result["plan"] = rating_plan(
        StudyRatings(
            rating_items,
            rating_values,
            items.tolist(),
            [reply.system for reply in replies],
            [reply.context for reply in replies],
            {signature.name: values[:, column] for column, signature in enumerate(signatures)},
        )
    )
    return result


def _p_value_of(tests: Callable[[int, int], Any]) -> Callable[[int, int], float | None]:
    return lambda better, worse: tests(better, worse).p_value


def part_d(
    sizes: list[int],
    rounds: int,
    shape: Shape,
    meta: bool,
    against: str,
    blas_threads: int | None = None,
    before_meta: bool = False,
    before_blas_threads: int | None = None,
) -> list[str]:
    """This checkout's whole report (with the meta-evaluation statistics when ``meta``) against REV's, interleaved, each
    timing in a fresh process; returns the table's lines."""
    lines = []
    with tempfile.TemporaryDirectory(prefix="dialeval-report-before-") as before:
        archive = subprocess.run(
            ["git", "archive", against, "stats"], cwd=REPO, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", before], input=archive, check=True)
        threads = {
            "this": blas_threads,
            "before": blas_threads if before_blas_threads is None else before_blas_threads,
        }
        sides = {"this": (str(REPO), meta), "before": (before, meta and before_meta)}
        for n in sizes:
            cpu: dict[str, list[float]] = {"this": [], "before": []}
            wall: dict[str, list[float]] = {"this": [], "before": []}
            for round_number in range(rounds):
                order = ["this", "before"] if round_number % 2 == 0 else ["before", "this"]
                for side in order:
                    code, with_meta = sides[side]
                    measured = _child_timing(code, n, shape, with_meta, threads[side])
                    cpu[side].append(measured["cpu"])
                    wall[side].append(measured["wall"])
                    print(
                        f"  {n:>6} round {round_number + 1} {side}: cpu {measured['cpu']:.2f} s, "
                        f"wall {measured['wall']:.2f} s",
                        file=sys.stderr,
                        flush=True,
                    )
            ratio_cpu = [b / a for a, b in zip(cpu["this"], cpu["before"], strict=True)]
            ratio_wall = [b / a for a, b in zip(wall["this"], wall["before"], strict=True)]
            label = "whole report + meta-evaluation statistics" if meta else "whole report"
            lines.append(
                f"| {n:,} | {shape.raters} x {shape.metrics} | this: {label} | {spread(cpu['this'])} | "
                f"{spread(wall['this'])} | {spread(ratio_cpu)} | {spread(ratio_wall)} |"
            )
            before_label = label if meta and before_meta else "whole report"
            lines.append(
                f"| {n:,} | {shape.raters} x {shape.metrics} | {against}: {before_label} | {spread(cpu['before'])} | "
                f"{spread(wall['before'])} | | |"
            )
    return lines


def _child_timing(
    code: str, n: int, shape: Shape, meta: bool, blas_threads: int | None = None
) -> dict[str, float]:
    command = [
        sys.executable,
        "-m",
        "bench.report_speed",
        "--child",
        code,
        "--child-size",
        str(n),
        "--raters",
        str(shape.raters),
        "--metrics",
        str(shape.metrics),
        "--systems",
        str(shape.systems),
    ]
    if meta:
        command.append("--meta")
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if blas_threads is not None:
        command += ["--blas-threads", str(blas_threads)]
        environment["OPENBLAS_NUM_THREADS"] = str(blas_threads)
    done = subprocess.run(command, cwd=REPO, check=True, capture_output=True, text=True, env=environment)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def child(code: str, n: int, shape: Shape, meta: bool, blas_threads: int | None = None) -> None:
    """Time the whole report (+ the meta-evaluation statistics) once, with ``stats`` imported from ``code``; with
    ``blas_threads``, passed to a ``build_report`` that takes it (older ones get ``OPENBLAS_NUM_THREADS``)."""
    sys.path.insert(0, code)
    import inspect

    from stats.report.builder import build_report
    from stats.report.types import ReportOptions

    warm = shape.inputs(300)
    build_report(warm, ReportOptions(resamples=20))
    inputs = shape.inputs(n)
    # Since the meta-evaluation statistics, the report computes its statistics itself (stats/report/meta.py); with ``meta`` it
    # also groups by context (REV's code, before the option, is run without it).
    options = ReportOptions(grouping="context") if meta else ReportOptions()
    takes_threads = "blas_threads" in inspect.signature(build_report).parameters
    threads: dict[str, Any] = (
        {"blas_threads": blas_threads} if blas_threads is not None and takes_threads else {}
    )
    started_cpu, started_wall = time.process_time(), time.perf_counter()
    build_report(inputs, options, **threads)
    measured = {"cpu": time.process_time() - started_cpu, "wall": time.perf_counter() - started_wall}
    loaded = sys.modules["stats"].__file__
    print(json.dumps({**measured, "stats": loaded}))


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
    from stats.report.metrics import metric_matrix
    from stats.report.types import ReportOptions

    inputs = synthetic_inputs(n)
    side = human_side(inputs.questions[0], inputs.annotators, ReportOptions(), inputs.study_threshold)
    items = np.array(sorted(side.scores))
    x = np.array([side.scores[int(i)] for i in items])
    values = metric_matrix(items, list(inputs.signatures), inputs.metric_values)
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


def setup_django(prefix: str = "dialeval-report-bench-") -> None:
    """Django on a fresh, migrated SQLite database in a temporary folder, with the test client's set-up."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
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


def part_b(sizes: list[int], rounds: int) -> list[tuple[int, str, list[float], list[float]]]:
    setup_django()
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

    study = database_study(n)
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


def database_study(
    n: int, *, seed: int = 0, name: str | None = None, shared: bool = False, contexts_of_systems: bool = False
) -> Any:
    """The synthetic study of n replies in the database, owned by "bench-researcher". ``shared``: its metric
    signatures are the same rows as other studies' (a benchmark across studies matches them), else its own;
    ``contexts_of_systems``: the replies of one context key share a dialog context (Gupta et al. (2019)'s design), else
    each reply has its own (as the report timings here were measured)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db import transaction

    from annotation.models import Annotator, DialogContext, Question, Rating, Response, Study, System
    from kernel.roles import RESEARCHERS_GROUP
    from scoring.models import MetricScore, MetricSignature

    inputs = synthetic_inputs(n, seed=seed)
    owner, _ = get_user_model().objects.get_or_create(username="bench-researcher")
    owner.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    keys = [inputs.responses[i].context_key if contexts_of_systems else i for i in range(n)]
    with transaction.atomic():
        study = Study.objects.create(owner=owner, name=name or f"bench {n} {time.time_ns()}")
        question = Question.objects.create(study=study, name="q", scale_min=1, scale_max=5)
        systems = {
            name: System.objects.create(study=study, name=name)
            for name in sorted({r.system for r in inputs.responses.values()})
        }
        distinct = list(dict.fromkeys(keys))
        created = DialogContext.objects.bulk_create(
            [
                DialogContext(study=study, external_id=f"c{key}", turns=[{"speaker": "A", "text": "hello ."}])
                for key in distinct
            ],
            batch_size=2000,
        )
        contexts = dict(zip(distinct, created, strict=True))
        responses = Response.objects.bulk_create(
            [
                Response(
                    context=contexts[keys[i]],
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
            text = signature.text if shared else f"{signature.text}|study:{study.pk}"
            stored, _ = MetricSignature.objects.get_or_create(
                text=text,
                defaults={"name": signature.name, "parameters": {"refs": "single"}, "version": "bench"},
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
    parser.add_argument("--raters", type=int, default=RATERS)
    parser.add_argument("--metrics", type=int, default=METRICS)
    parser.add_argument("--systems", type=int, default=SYSTEMS, help="systems, and replies per context")
    parser.add_argument(
        "--meta", action="store_true", help="also time the meta-evaluation statistics (stats/meta)"
    )
    parser.add_argument("--against", metavar="REV", help="time the whole report against REV's, interleaved")
    parser.add_argument(
        "--blas-threads", type=int, help="part D: run both sides' BLAS with this many threads (see above)"
    )
    parser.add_argument(
        "--before-meta",
        action="store_true",
        help="part D: REV has the meta-evaluation statistics too: run its report grouped by context as well",
    )
    parser.add_argument(
        "--before-blas-threads",
        type=int,
        help="part D: REV's side with this many BLAS threads (default: --blas-threads); with --against HEAD, "
        "the same code at two thread counts",
    )
    parser.add_argument("--child", metavar="CODE", help=argparse.SUPPRESS)
    parser.add_argument("--child-size", type=int, default=0, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    shape = Shape(arguments.raters, arguments.metrics, arguments.systems)
    if arguments.child:
        child(arguments.child, arguments.child_size, shape, arguments.meta, arguments.blas_threads)
        return
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
        f"# {shape.raters} raters x {shape.metrics} metrics x {shape.systems} systems (replies per context), "
        f"1,000 bootstrap resamples; {arguments.rounds} rounds; times in seconds (pages in ms) as min / median / max",
        flush=True,
    )
    results = (
        part_a(sizes, arguments.rounds, shape, arguments.meta) if sizes and not arguments.against else []
    )
    against = (
        part_d(
            sizes,
            arguments.rounds,
            shape,
            arguments.meta,
            arguments.against,
            arguments.blas_threads,
            arguments.before_meta,
            arguments.before_blas_threads,
        )
        if arguments.against
        else []
    )
    results += part_b(db_sizes, arguments.rounds) if db_sizes else []
    compare_sizes = [int(size) for size in arguments.compare_sizes.split(",") if size]
    comparison = part_c(compare_sizes, arguments.rounds) if compare_sizes else []
    if results:
        print("\n| replies | part | CPU (s) | wall (s) |\n|---:|---|---:|---:|")
    for n, name, cpu, wall in results:
        if "GET" in name:
            print(f"| {n:,} | {name} | | {spread(wall, 1000, 0)} ms |")
        else:
            print(f"| {n:,} | {name} | {spread(cpu)} | {spread(wall)} |")
    if against:
        default = "as its code runs it"
        before_threads = arguments.before_blas_threads or arguments.blas_threads or default
        threads = f"BLAS threads: this side {arguments.blas_threads or default}, {arguments.against} {before_threads}"
        print(
            f"\nThe whole report against {arguments.against}'s, interleaved (A B, then B A), one fresh process per "
            f"timing; {threads}\n\n| replies | raters x metrics | code | CPU (s) | wall (s) | before / this, CPU | before / this, "
            "wall |\n|---:|---|---|---:|---:|---:|---:|"
        )
        print("\n".join(against))
    if comparison:
        print(
            "\nPaired bootstrap of 20 metrics x (Pearson, Spearman), 1,000 resamples, interleaved with scipy"
            "\n\n| replies | implementation | CPU (s) | wall (s) | scipy / this, CPU | scipy / this, wall |"
            "\n|---:|---|---:|---:|---:|---:|"
        )
        print("\n".join(comparison))


if __name__ == "__main__":
    main()

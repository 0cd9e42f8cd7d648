"""Scoring through the queue: throughput with 1 and 2 worker processes against the same metrics
in-process, and the time a run takes to recover after its worker is SIGKILLed and restarted.

Part A, throughput: N DailyDialog items (bench.dailydialog_pairs: query, reference, another pair's reply)
as a study of N contexts x 1 system, scored with every baseline metric (BLEU-1..4, ROUGE-L, METEOR,
embedding average / vector extrema / greedy matching over GloVe), interleaved per round:
  * in-process: the metric core on all N items (``compute_metrics``, no database), in a fresh subprocess;
  * queue x1 / queue x2: a real redis-server and a real Celery worker with 1 or 2 pool processes (started
    before the clock starts), a run created with ``recompute`` and timed until it SUCCEEDED: planning,
    chunks, messages, database writes included. CPU is the worker's (main and pool processes, /proc).
The overhead is queue x1 wall / in-process wall - 1, per round (min / median / max).

Part B, recovery: a run of --recovery-replies replies x METEOR on a worker with 2 pool processes and Celery
beat, with the default settings (a chunk is stale after DIALEVAL_RUN_STALE_SECONDS = 60 s; beat sends the
recovery every 30 s); once two chunks are done the whole worker process group is SIGKILLed and restarted at
once. Reported per trial: seconds from the kill until the killed chunks are claimed again, and until the
run has succeeded, with every score stored once.

    .venv/bin/python -m bench.scoring_queue [--replies 10000] [--rounds 5] [--recovery-trials 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CELERY = Path(sys.executable).parent / "celery"
BASELINES = [
    "bleu-1", "bleu-2", "bleu-3", "bleu-4", "rouge-l", "meteor",
    "embedding-average", "vector-extrema", "greedy-matching",
]  # fmt: skip
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Services:
    """redis-server, a Celery worker (N pool processes) and optionally beat, all on the bench database."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.env = {**env, "REDIS_URL": f"redis://127.0.0.1:{self.port}/0"}
        self.redis = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        self.worker: subprocess.Popen[bytes] | None = None
        self.beat: subprocess.Popen[bytes] | None = None
        time.sleep(0.5)

    def start_worker(self, concurrency: int, extra: dict[str, str] | None = None) -> None:
        log = self.workdir / "worker.log"
        start = log.stat().st_size if log.exists() else 0
        with log.open("ab") as out:
            self.worker = subprocess.Popen(
                [str(CELERY), "-A", "config.celery_app", "worker", "-Q", "cpu,gpu", "--concurrency",
                 str(concurrency), "--loglevel", "INFO", "--without-gossip", "--without-mingle"],
                cwd=REPO, env={**self.env, **(extra or {})}, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        while b" ready." not in log.read_bytes()[start:]:
            if self.worker.poll() is not None:
                raise SystemExit(f"the worker exited:\n{log.read_text()[-3000:]}")
            time.sleep(0.1)

    def start_beat(self) -> None:
        self.beat = subprocess.Popen(
            [str(CELERY), "-A", "config.celery_app", "beat", "--schedule", str(self.workdir / "beat-schedule")],
            cwd=REPO, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip

    def worker_cpu_seconds(self) -> float:
        assert self.worker is not None
        pid = self.worker.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        total = 0
        for each in [pid, *map(int, children)]:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / CLOCK_TICKS

    def stop_worker(self, sig: int = signal.SIGTERM) -> None:
        if self.worker is not None and self.worker.poll() is None:
            os.killpg(self.worker.pid, sig)
            self.worker.wait(timeout=60)
        self.worker = None

    def close(self) -> None:
        self.stop_worker()
        for process in (self.beat, self.redis):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)


def setup_django(workdir: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DIALEVAL_VAR_DIR": str(workdir),
        "DJANGO_DEBUG": "false",
        "PYTHONPATH": str(REPO),
        "DIALEVAL_TRAIN_DEFAULT_MODELS": "0",
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return env


def build_study(replies: int) -> Any:
    from bench.dailydialog_pairs import benchmark_pairs

    pairs = benchmark_pairs(count=replies)
    return study_from_pairs(pairs.queries, pairs.references, pairs.hypotheses), pairs.description


def study_from_pairs(queries: list[str], references: list[list[str]], hypotheses: list[str]) -> Any:
    """A study of one context per query (its one turn), its first reference, and one system whose reply to
    each context is the hypothesis: written with three bulk inserts."""
    from django.contrib.auth import get_user_model

    from annotation.models import DialogContext, Reference, Response, Study, System

    owner, _ = get_user_model().objects.get_or_create(username="queue-bench")
    study = Study.objects.create(name=f"queue bench {time.time_ns()}", owner=owner)
    system = System.objects.create(study=study, name="another pair's reply")
    contexts = DialogContext.objects.bulk_create(
        [
            DialogContext(study=study, external_id=str(i), turns=[{"speaker": "A", "text": q}], position=i)
            for i, q in enumerate(queries)
        ]
    )
    Reference.objects.bulk_create(
        [
            Reference(context=c, text=refs[0], origin="original")
            for c, refs in zip(contexts, references, strict=True)
        ]
    )
    Response.objects.bulk_create(
        [Response(context=c, system=system, text=h) for c, h in zip(contexts, hypotheses, strict=True)]
    )
    return study


IN_PROCESS = """
import json, sys, time
from bench.dailydialog_pairs import benchmark_pairs
from scoring.metrics.registry import compute_metrics
pairs = benchmark_pairs(count=int(sys.argv[1]))
metrics = json.loads(sys.argv[2])
wall, cpu = time.perf_counter(), time.process_time()
compute_metrics(metrics, pairs.hypotheses, pairs.references, pairs.queries, "en")
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}))
"""


def in_process(env: dict[str, str], replies: int) -> tuple[float, float]:
    out = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, str(replies), json.dumps(BASELINES)],
        cwd=REPO, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["cpu"], result["wall"]


def through_queue(services: Services, study: Any, concurrency: int) -> tuple[float, float]:
    from celery import current_app

    from scoring.models import ScoringRun
    from scoring.services import scoring_run_create

    services.start_worker(concurrency)
    current_app.conf.broker_url = services.env["REDIS_URL"]
    current_app._pool = None
    current_app.amqp._producer_pool = None
    cpu_before = services.worker_cpu_seconds()
    started = time.perf_counter()
    run = scoring_run_create(study=study, metrics=BASELINES, recompute=True)
    while not (run := ScoringRun.objects.get(pk=run.pk)).is_finished:
        time.sleep(0.05)
    wall = time.perf_counter() - started
    cpu = services.worker_cpu_seconds() - cpu_before
    services.stop_worker()
    if run.status != "succeeded":
        raise SystemExit(f"run {run.pk} {run.status}: {run.error}")
    return cpu, wall


def spread(values: list[float], digits: int = 1) -> str:
    return " / ".join(f"{v:.{digits}f}" for v in (min(values), statistics.median(values), max(values)))


def part_a(workdir: Path, env: dict[str, str], replies: int, rounds: int) -> None:
    study, description = build_study(replies)
    services = Services(workdir, env)
    results: dict[str, list[tuple[float, float]]] = {"in-process": [], "queue x1": [], "queue x2": []}
    try:
        for number in range(1, rounds + 1):
            results["in-process"].append(in_process(env, replies))
            results["queue x1"].append(through_queue(services, study, 1))
            results["queue x2"].append(through_queue(services, study, 2))
            print(
                f"round {number}: " + ", ".join(f"{k} {v[-1][1]:.1f} s" for k, v in results.items()),
                flush=True,
            )
    finally:
        services.close()
    scores = replies * len(BASELINES)
    print(f"\n{replies:,} replies x {len(BASELINES)} baseline metrics = {scores:,} scores; {description}")
    print("| mode | wall s (min / median / max) | CPU s | replies/s (median) | scores/s (median) |")
    print("|---|---|---|---|---|")
    for mode, values in results.items():
        cpu, wall = [v[0] for v in values], [v[1] for v in values]
        median = statistics.median(wall)
        print(
            f"| {mode} | {spread(wall)} | {spread(cpu)} | {replies / median:,.0f} | {scores / median:,.0f} |"
        )
    base = [v[1] for v in results["in-process"]]
    for mode in ("queue x1", "queue x2"):
        ratios = [queued[1] / alone for queued, alone in zip(results[mode], base, strict=True)]
        print(f"{mode} wall / in-process wall, per round: {spread(ratios, 2)}")


def part_b(workdir: Path, env: dict[str, str], replies: int, trials: int) -> None:
    from django.conf import settings

    from scoring.models import ChunkStatus, MetricScore, ScoringChunk, ScoringRun
    from scoring.services import scoring_run_create

    study, _ = build_study(replies)
    services = Services(workdir, env)
    services.start_beat()
    from celery import current_app

    current_app.conf.broker_url = services.env["REDIS_URL"]
    current_app._pool = None
    current_app.amqp._producer_pool = None
    rows = []
    try:
        services.start_worker(2, {"DIALEVAL_SCORING_CHUNK_SIZE": "256"})
        for trial in range(1, trials + 1):
            run = scoring_run_create(study=study, metrics=["meteor"], recompute=True)
            while ScoringChunk.objects.filter(run=run, status=ChunkStatus.DONE).count() < 2:
                time.sleep(0.05)
            killed = list(
                ScoringChunk.objects.filter(run=run, status=ChunkStatus.RUNNING).values_list("pk", flat=True)
            )
            services.stop_worker(signal.SIGKILL)
            killed_at = time.perf_counter()
            services.start_worker(2, {"DIALEVAL_SCORING_CHUNK_SIZE": "256"})
            resumed = None
            while not (current := ScoringRun.objects.get(pk=run.pk)).is_finished:
                if (
                    resumed is None
                    and killed
                    and not ScoringChunk.objects.filter(pk__in=killed, attempts=1).exists()
                ):
                    resumed = time.perf_counter() - killed_at
                time.sleep(0.1)
            done = time.perf_counter() - killed_at
            stored = MetricScore.objects.filter(
                response__context__study=study, signature__name="meteor"
            ).count()
            ok = current.status == "succeeded" and stored == replies
            rows.append((trial, len(killed), resumed if resumed is not None else done, done, ok))
            print(
                f"trial {trial}: {len(killed)} chunk(s) killed; resumed after {rows[-1][2]:.1f} s, "
                f"run done {done:.1f} s after the kill; {'ok' if ok else current.status}",
                flush=True,
            )
    finally:
        services.close()
    print(
        f"\nrecovery after SIGKILL of the worker group and an immediate restart ({replies:,} replies x meteor, "
        f"chunks of 256, 2 pool processes; stale after {settings.DIALEVAL_RUN_STALE_SECONDS} s, "
        f"recovery every {settings.DIALEVAL_RECOVERY_INTERVAL_SECONDS} s)"
    )
    print("| | min | median | max |\n|---|---|---|---|")
    for label, column in (
        ("killed chunks claimed again, s after the kill", 2),
        ("run succeeded, s after the kill", 3),
    ):
        values = [row[column] for row in rows]
        print(f"| {label} | {min(values):.1f} | {statistics.median(values):.1f} | {max(values):.1f} |")
    print(f"every score stored once in {sum(row[4] for row in rows)} of {len(rows)} trials")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--replies", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--recovery-replies", type=int, default=2_000)
    parser.add_argument("--recovery-trials", type=int, default=5)
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="dialeval-queue-bench-"))
    env = setup_django(workdir)
    cores = len(os.sched_getaffinity(0))
    print(
        f"# scoring queue benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {platform.node()}, {cores} cores, "
        f"Python {platform.python_version()}"
    )
    if not args.skip_throughput:
        part_a(workdir, env, args.replies, args.rounds)
    if args.recovery_trials:
        part_b(workdir, env, args.recovery_replies, args.recovery_trials)


if __name__ == "__main__":
    main()

"""The baseline suite on 10,000 replies through ``manage.py score_study --sync``.

Builds a study of N DailyDialog items (bench.dailydialog_pairs: N contexts x 1 system, each with its
original reply as the reference and another pair's reply as the response) in a throwaway SQLite database,
then runs, in a fresh process each time,

    python manage.py score_study <study> --metrics <the 9 baseline metrics> --references single --sync

on a study without scores (the previous round's are deleted first, untimed), so every round computes and
inserts all 90,000 scores (BLEU-1..4, ROUGE-L, METEOR, embedding average, vector extrema, greedy matching) and reports that
process's CPU time (user + system, from ``RUSAGE_CHILDREN``) and wall time: Django's start-up, loading
WordNet and GloVe, planning, every chunk's reads, metrics and database writes included. The target is
under 20 s of CPU. ``--profile FILE`` runs the command under cProfile instead (one extra run, not
counted) and prints the 30 most expensive functions by cumulative and by own time.

    .venv/bin/python -m bench.baseline_suite [--replies 10000] [--rounds 3] [--profile /tmp/suite.prof]
"""

from __future__ import annotations

import argparse
import os
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BASELINES = [
    "bleu-1", "bleu-2", "bleu-3", "bleu-4", "rouge-l", "meteor",
    "embedding-average", "vector-extrema", "greedy-matching",
]  # fmt: skip
TARGET_CPU_SECONDS = 20.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--replies", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", type=Path, help="also run once under cProfile, writing stats here")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="dialeval-suite-bench-"))
    from bench.scoring_queue import build_study, setup_django

    env = setup_django(workdir)
    study, description = build_study(args.replies)
    print(
        f"# baseline suite through score_study --sync, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; "
        f"{platform.node()}, {len(os.sched_getaffinity(0))} cores, Python {platform.python_version()}"
    )
    print(f"study: {args.replies:,} replies x {len(BASELINES)} metrics; {description}; database {workdir}")
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    command = [
        sys.executable, "manage.py", "score_study", str(study.pk), "--metrics", ",".join(BASELINES),
        "--references", "single", "--sync",
    ]  # fmt: skip
    cpu_seconds, wall_seconds = [], []
    for number in range(1, args.rounds + 1):
        clear_scores(study)
        cpu, wall, output = run(command, env)
        cpu_seconds.append(cpu)
        wall_seconds.append(wall)
        summary = next((line for line in output.splitlines() if "succeeded" in line), output[-300:])
        print(f"round {number}: {cpu:.1f} s CPU, {wall:.1f} s wall; {summary.strip()}", flush=True)
    if cpu_seconds:
        median = statistics.median(cpu_seconds)
        print(
            f"CPU s (min / median / max): {min(cpu_seconds):.1f} / {median:.1f} / {max(cpu_seconds):.1f}; "
            f"wall s: {min(wall_seconds):.1f} / {statistics.median(wall_seconds):.1f} / {max(wall_seconds):.1f}; "
            f"target < {TARGET_CPU_SECONDS:.0f} s CPU: {'met' if median < TARGET_CPU_SECONDS else 'NOT met'}"
        )
    if args.profile:
        clear_scores(study)
        profile_command = [sys.executable, "-m", "cProfile", "-o", str(args.profile), *command[1:]]
        run(profile_command, env)
        stats = pstats.Stats(str(args.profile))
        stats.sort_stats("cumulative").print_stats(30)
        stats.sort_stats("tottime").print_stats(30)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def clear_scores(study: Any) -> None:
    from scoring.models import MetricScore

    MetricScore.objects.filter(response__context__study_id=study.pk).delete()


def run(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, output) of ``command`` in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, done.stdout


if __name__ == "__main__":
    main()

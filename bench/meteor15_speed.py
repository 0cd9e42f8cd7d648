"""METEOR 1.5: the project's jar process (pipelined) against pycocoevalcap's own wrapper, measured honestly.

Both sides run the same jar (pycocoevalcap 1.2's ``meteor-1.5.jar -stdio -l en -norm``) on the same pairs:

    project   ``scoring.metrics.meteor15.meteor15_batch``: SCORE lines written in batches before their
              answers are read, then one EVAL line per batch, through one long-lived process
    peer      pycocoevalcap ``Meteor().compute_score`` (what nlg-eval calls): one blocking round trip per
              SCORE line, then one EVAL line; its per-item list is compared

Start-up: each side's Java process is started alone (the other one already running and idle) and timed
until it answers its first pair: the jar loads the paraphrase table then, several seconds. It is printed
separately and is not part of the rounds: both sides are timed with an already-started process.

Warm-up: each side scores all pairs once, untimed (the JIT compiles the scorer); the values of that call are
compared: the largest absolute difference and how many per-item values are exactly equal.

Rounds: ``--rounds`` (default 5) rounds, the sides alternating which goes first (A B, then B A). Each call
is timed after a ``gc.collect()``: CPU of this Python process (``time.process_time()``), CPU of the side's
Java child (user + system, from psutil or /proc/<pid>/stat) and wall time (``time.perf_counter()``).
Printed: the median seconds of each side, and min / median / max over rounds of the ratio peer / project
(above 1: the project is faster) in total CPU (Python + Java), Java CPU and wall time; then each Java
process's resident memory (RSS).

Pairs: --pairs (default 2,000) DailyDialog (reference, another pair's reply) items from --data (default
../shared/data/dailydialog, as bench.dailydialog_pairs builds them), one reference each.

    .venv/bin/python -m bench.meteor15_speed [--rounds 5] [--pairs 2000] [--data ../shared/data/dailydialog]

Run it on a quiet machine: the load averages at the start and the end are printed with the figures.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.dailydialog_pairs import DEFAULT_DAILYDIALOG, benchmark_pairs
from scoring.metrics.meteor15 import (
    meteor15_batch,
    meteor15_pid,
    meteor15_shutdown,
    meteor15_start,
    meteor15_version,
)

DEFAULT_PAIRS = 2000
DEFAULT_ROUNDS = 5
SIDES = ("project", "peer")


@dataclass
class Side:
    name: str
    description: str
    run: Callable[[], list[float]]
    java_pid: int
    startup_s: float
    cpu: list[float] = field(default_factory=list)  # this Python process
    java_cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    wrapper: object = None  # the peer's Meteor object, kept alive: its __del__ kills its process

    def total_cpu(self) -> list[float]:
        return [a + b for a, b in zip(self.cpu, self.java_cpu, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rounds", type=int, default=DEFAULT_ROUNDS, help="interleaved rounds (>= 5 to report)"
    )
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS)
    parser.add_argument("--data", type=Path, default=DEFAULT_DAILYDIALOG)
    args = parser.parse_args()
    if args.rounds < 1 or args.pairs < 2:
        parser.error("--rounds must be at least 1 and --pairs at least 2")

    load_start = os.getloadavg()
    pairs = benchmark_pairs(args.data, count=args.pairs)
    hypotheses, references = pairs.hypotheses, pairs.references

    print(f"# METEOR 1.5: project jar process vs pycocoevalcap's wrapper, {len(hypotheses):,} pairs")
    print(f"command: python -m bench.meteor15_speed {shlex.join(sys.argv[1:])}".rstrip())
    print(f"pairs: DailyDialog ({args.data}): {pairs.description}")
    print_machine(load_start)
    if args.rounds < DEFAULT_ROUNDS:
        print(
            f"NOTE: {args.rounds} round(s), fewer than {DEFAULT_ROUNDS}: a sanity check, not figures to report"
        )

    sides = {"project": start_project(hypotheses, references), "peer": start_peer(hypotheses, references)}
    values = {name: side.run() for name, side in sides.items()}  # warm-up, untimed
    run_rounds(sides, args.rounds)

    print()
    print_table(sides, len(hypotheses))
    print_agreement(values["project"], values["peer"])
    print()
    for side in sides.values():
        print(f"{side.name} Java process (pid {side.java_pid}): RSS {rss_mib(side.java_pid):,.0f} MiB")
    end = os.getloadavg()
    print(f"\nload average at end: {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")
    meteor15_shutdown()


def start_project(hypotheses: list[str], references: list[list[str]]) -> Side:
    meteor15_shutdown()
    started = time.perf_counter()
    meteor15_start()
    startup = time.perf_counter() - started
    pid = meteor15_pid()
    assert pid is not None
    return Side(
        "project",
        f"meteor15_batch ({meteor15_version()})",
        lambda: meteor15_batch(hypotheses, references),
        pid,
        startup,
    )


def start_peer(hypotheses: list[str], references: list[list[str]]) -> Side:
    from pycocoevalcap.meteor.meteor import Meteor

    gts = dict(enumerate(references))
    res = {index: [hypothesis] for index, hypothesis in enumerate(hypotheses)}
    started = time.perf_counter()
    meteor: Any = Meteor()  # untyped package
    meteor.compute_score({0: ["a"]}, {0: ["a"]})  # until it answers: the paraphrase table is loaded
    startup = time.perf_counter() - started

    def run() -> list[float]:
        return [float(score) for score in meteor.compute_score(gts, res)[1]]

    return Side(
        "peer", "pycocoevalcap Meteor().compute_score", run, int(meteor.meteor_p.pid), startup, wrapper=meteor
    )


def java_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (psutil when installed, else /proc)."""
    try:
        import psutil
    except ImportError:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def timed(side: Side) -> None:
    gc.collect()
    java, cpu, wall = java_cpu_seconds(side.java_pid), time.process_time(), time.perf_counter()
    side.run()
    side.wall.append(time.perf_counter() - wall)
    side.cpu.append(time.process_time() - cpu)
    side.java_cpu.append(java_cpu_seconds(side.java_pid) - java)


def run_rounds(sides: dict[str, Side], rounds: int) -> None:
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: process_time() counts every thread of the process
    with tqdm(total=rounds, unit="round", file=sys.stderr) as bar:
        for number in range(rounds):
            for name in SIDES if number % 2 == 0 else reversed(SIDES):
                timed(sides[name])
            bar.update(1)  # between rounds only


def spread(values: Sequence[float]) -> str:
    return " / ".join(f"{value:.2f}" for value in (min(values), statistics.median(values), max(values)))


def ratios(peer: Sequence[float], project: Sequence[float]) -> list[float]:
    return [p / o if o > 0 else float("inf") for p, o in zip(peer, project, strict=True)]


def print_table(sides: dict[str, Side], n: int) -> None:
    print("Start-up until the first answer (paraphrase table loaded), wall s, each started alone:")
    for side in sides.values():
        print(f"- {side.name}: {side.startup_s:.2f} s ({side.description})")
    print()
    print("| side | Python CPU s | Java CPU s | total CPU s | wall s | ms per pair (wall) |")
    print("|---|---:|---:|---:|---:|---:|")
    for side in sides.values():
        wall = statistics.median(side.wall)
        print(
            f"| {side.name}: {side.description} | {statistics.median(side.cpu):.3f} "
            f"| {statistics.median(side.java_cpu):.3f} | {statistics.median(side.total_cpu()):.3f} "
            f"| {wall:.3f} | {1000 * wall / n:.3f} |"
        )
    project, peer = sides["project"], sides["peer"]
    print()
    print("| peer/project total CPU (min / median / max) | Java CPU | wall |")
    print("|---|---|---|")
    print(
        f"| {spread(ratios(peer.total_cpu(), project.total_cpu()))} "
        f"| {spread(ratios(peer.java_cpu, project.java_cpu))} | {spread(ratios(peer.wall, project.wall))} |"
    )
    print(
        f"\nSeconds are medians over {len(project.wall)} round(s) for all {n:,} pairs; ratios are per round, "
        "peer / project (above 1: the project is faster). Java CPU is the side's own Java process."
    )


def print_agreement(ours: Sequence[float], theirs: Sequence[float]) -> None:
    equal = sum(a == b for a, b in zip(ours, theirs, strict=True))
    largest = max((abs(a - b) for a, b in zip(ours, theirs, strict=True)), default=0.0)
    print(
        f"values: {equal:,} of {len(ours):,} per-item scores exactly equal; max abs difference {largest:.1e}"
    )


def print_machine(load: tuple[float, float, float]) -> None:
    import subprocess
    from importlib.metadata import version

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 0
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    java_version = (java.stderr.splitlines() or ["java: unknown"])[0]
    print(
        f"machine: {platform.node()}, {platform.machine()}, {cores} usable core(s); Python "
        f"{platform.python_version()}, pycocoevalcap {version('pycocoevalcap')}, {java_version}; "
        f"{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}"
    )
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()

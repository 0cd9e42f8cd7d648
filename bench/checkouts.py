"""Two checkouts of the project, one command each, timed interleaved: did a change make anything slower?

A refactoring's promise ("nothing got slower") is checked by running the same bench command in the
code before and in the code after, on the same machine, alternately: round r runs BEFORE then AFTER when r
is even and AFTER then BEFORE when it is odd, so drift in the machine's speed lands on both sides. Each run
is a fresh process started in its checkout (``python -m MODULE ARGS`` with that checkout's code on the path
and the current directory there); its CPU time (user + system, ``RUSAGE_CHILDREN``) and wall time are
measured from outside, so the command's own start-up (Django, imports, models) counts on both sides alike.
Printed: median CPU and wall per side, the ratio before / after per round as min / median / max (above 1:
the after side is faster), the load averages at the start and the end. Then the rows of the Markdown tables
the command itself printed, when both sides printed them: for each row (named by its text cells) and each
measured cell (a number with a decimal point, or "min / median / max" of such numbers, in s or ms: the
middle one is taken), the median of each side over the rounds and the ratio before / after per round.

    .venv/bin/python -m bench.checkouts --before /path/to/old/checkout --after . [--rounds 5] \\
        -- bench.report_speed --sizes 10000 --db-sizes "" --compare-sizes "" --rounds 1

Make the old checkout with ``git worktree add /tmp/before REV`` (its .venv: a link to this one's). The
command's output is kept in ``--log-dir`` (one file per run), not printed.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path


def _run(checkout: Path, command: list[str], log: Path) -> tuple[float, float, int]:
    """CPU seconds (user + system of the child), wall seconds and the exit status of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    environment = dict(os.environ, PYTHONPATH=str(checkout))
    with log.open("w") as output:
        status = subprocess.run(
            [sys.executable, "-m", *command],
            cwd=checkout,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
        ).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, status


MEASURE = re.compile(r"^(\d+\.\d+)(?: / (\d+\.\d+) / \d+\.\d+)?(?: m?s)?$|^(\d+) / (\d+) / (\d+) ms$")
Cells = dict[tuple[str, str], float]  # (row's text cells, column header) -> the measured value


def table_measures(text: str) -> Cells:
    """The measured cells of the Markdown tables in ``text``, keyed by row name and column header."""
    found: Cells = {}
    header: list[str] = []
    for line in text.splitlines():
        if not line.startswith("|"):
            header = []
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if set("".join(cells)) <= set("-: "):
            continue
        if not header:
            header = cells
            continue
        name = " · ".join(cell for cell in cells if cell and not MEASURE.match(cell))
        for column, cell in zip(header, cells, strict=False):
            match = MEASURE.match(cell)
            if match:
                middle = match.group(2) or match.group(1) or match.group(4)
                found[(name, f"{column} [ms]" if cell.endswith(" ms") else column)] = float(middle)
    return found


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, required=True, help="the checkout of the code before")
    parser.add_argument("--after", type=Path, required=True, help="the checkout of the code after")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--log-dir", type=Path, default=Path("/tmp/bench-checkouts"))
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- MODULE [ARGS...]")
    arguments = parser.parse_args()
    command = arguments.command[1:] if arguments.command[:1] == ["--"] else arguments.command
    if not command:
        parser.error("name the bench module to run after --, e.g. -- bench.report_speed --sizes 10000")
    sides = {"before": arguments.before.resolve(), "after": arguments.after.resolve()}
    for name, checkout in sides.items():
        if not (checkout / "manage.py").is_file():
            parser.error(f"--{name} {checkout}: not a checkout of this project (no manage.py)")
    arguments.log_dir.mkdir(parents=True, exist_ok=True)
    print(f"# {' '.join(command)}: before ({sides['before']}) vs after ({sides['after']}), interleaved")
    print(
        f"machine: {platform.node() or 'unknown'}, {platform.machine()}, {os.cpu_count()} core(s); "
        f"Python {platform.python_version()}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )
    print(f"load average at start: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    cpu: dict[str, list[float]] = {"before": [], "after": []}
    measures: dict[str, list[Cells]] = {"before": [], "after": []}
    wall: dict[str, list[float]] = {"before": [], "after": []}
    for round_number in range(arguments.rounds):
        order = ("before", "after") if round_number % 2 == 0 else ("after", "before")
        for name in order:
            log = arguments.log_dir / f"{name}-{round_number}.log"
            seconds, elapsed, status = _run(sides[name], command, log)
            if status != 0:
                raise SystemExit(f"round {round_number + 1}, {name}: exit status {status}; see {log}")
            measures[name].append(table_measures(log.read_text(errors="replace")))
            cpu[name].append(seconds)
            wall[name].append(elapsed)
        print(
            f"round {round_number + 1}: before {cpu['before'][-1]:.2f} s CPU / {wall['before'][-1]:.2f} s wall, "
            f"after {cpu['after'][-1]:.2f} s CPU / {wall['after'][-1]:.2f} s wall",
            flush=True,
        )
    cpu_ratios = [old / new for old, new in zip(cpu["before"], cpu["after"], strict=True)]
    wall_ratios = [old / new for old, new in zip(wall["before"], wall["after"], strict=True)]
    print()
    print("| side | CPU s (median) | wall s (median) |")
    print("|---|---:|---:|")
    for name in ("before", "after"):
        print(f"| {name} | {statistics.median(cpu[name]):.2f} | {statistics.median(wall[name]):.2f} |")
    print()
    print(
        f"before / after per round (min / median / max): CPU {_spread(cpu_ratios)}, wall {_spread(wall_ratios)}"
    )
    _print_measures(measures)
    print(f"load average at end: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    print(f"each run's output: {arguments.log_dir}")


def _print_measures(measures: dict[str, list[Cells]]) -> None:
    keys = [
        key for key in measures["before"][0] if all(key in run for side in measures.values() for run in side)
    ]
    if not keys:
        return
    print()
    print("The command's own table cells (median of each side over the rounds; before / after per round):")
    print("| row | column | before | after | before / after (min / median / max) |")
    print("|---|---|---:|---:|---|")
    for key in keys:
        before = [run[key] for run in measures["before"]]
        after = [run[key] for run in measures["after"]]
        ratios = [old / new for old, new in zip(before, after, strict=True) if new]
        spread = _spread(ratios) if ratios else "-"
        print(
            f"| {key[0]} | {key[1]} | {statistics.median(before):.2f} | {statistics.median(after):.2f} | {spread} |"
        )


if __name__ == "__main__":
    main()

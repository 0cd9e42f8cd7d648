"""Benchmark 3 of issue 3: speed of every metric on 10,000 DailyDialog test pairs on 2 CPU cores, next to
the reference libraries measured in the same run on the same pairs.

For each registered metric (and RUBER's s_R, seed 000 section 3.1, outside the registry until it
registers ``ruber-referenced``): the first call on 16 pairs (which loads WordNet, GloVe, MiniLM or a
model; reported apart) and then pairs/second of ``compute_metrics`` on all pairs, single reference.
Next to them: nltk's ``sentence_bleu`` (smoothing method1, one call per order, on the same tokens),
sacrebleu's ``sentence_score`` (BLEU-4, its own tokenizer) and rouge-score's ``rougeL``, as ratios
ours / reference in pairs per second. Then the whole baseline suite of the multi-reference study (seed
003, Table 2: BLEU-1..4, ROUGE-L, METEOR, the three embedding metrics) plus s_R in one call, against the
targets: under 60 s on 10k pairs, BLEU at least 3x nltk per pair. Learned metrics (RUBER, BERT-RUBER
heads) are included when ``--ruber-model`` / ``--bert-ruber-model`` are given and the registry has them.

The tables are markdown, ready for docs/benchmarks.md. Timings are wall-clock and noisy on a shared
machine: the load averages at start and end are printed with them.

    .venv/bin/python -m bench.metric_speed [--data ../shared/data/dailydialog] [--pairs 10000]
        [--ruber-model FOLDER] [--bert-ruber-model FOLDER] [--threads 2]
"""

from __future__ import annotations

import argparse
import datetime
import gc
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

# METEOR's WordNet, built by scripts/setup.sh; nltk reads NLTK_DATA when it is first imported.
os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parent.parent / "var" / "nltk_data"))

from bench.dailydialog_pairs import (
    BERT_RUBER_MODEL,
    DEFAULT_DAILYDIALOG,
    DEFAULT_PAIRS,
    RUBER_MODEL,
    SR_NAME,
    BenchPairs,
    benchmark_pairs,
    compute,
    require_data,
    runnable_metrics,
    sr_scorer,
    sr_through_registry,
)
from scoring.metrics.tokenize import tokenize

T = TypeVar("T")
BLEU = ["bleu-1", "bleu-2", "bleu-3", "bleu-4"]
EMBEDDING = ["embedding-average", "vector-extrema", "greedy-matching"]
BASELINE_SUITE = [*BLEU, "rouge-l", "meteor", *EMBEDDING]  # + s_R
FIRST_CALL_PAIRS = 16
SUITE_TARGET_SECONDS = 60.0
BLEU_TARGET_RATIO = 3.0


@dataclass
class Row:
    metric: str
    first_call: float | None  # seconds of the first call on FIRST_CALL_PAIRS pairs (loads data/models)
    seconds: float | None  # seconds on all pairs, warm
    reference: str = ""
    reference_seconds: float | None = None
    note: str = ""


def timed(function: Callable[[], T]) -> tuple[T, float]:
    gc.collect()
    started = time.perf_counter()
    result = function()
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DAILYDIALOG)
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS)
    parser.add_argument("--ruber-model", type=Path, help="a RUBER artifact folder (train_metric ruber)")
    parser.add_argument("--bert-ruber-model", type=Path, help="a BERT-RUBER artifact folder")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the benchmark's 2 cores)")
    args = parser.parse_args()
    require_data(args.data)

    (torch, torch_import) = timed(_import_torch)
    torch.set_num_threads(args.threads)
    load_start = os.getloadavg()
    pairs = benchmark_pairs(args.data, count=args.pairs)
    n = len(pairs)
    models: dict[str, Path] = {}
    if args.ruber_model:
        models[RUBER_MODEL] = args.ruber_model
    if args.bert_ruber_model:
        models[BERT_RUBER_MODEL] = args.bert_ruber_model
    names, skipped = runnable_metrics(models)
    small = pairs.head(FIRST_CALL_PAIRS)

    print(f"# Metric speed, {n} DailyDialog pairs, single reference")
    print(f"pairs: {pairs.description}" + (f"; fewer than the {args.pairs} asked" if n < args.pairs else ""))
    _print_machine(torch, args.threads, torch_import, load_start)
    if skipped:
        print("left out: " + "; ".join(skipped))

    rows: dict[str, Row] = {}
    errors: dict[str, str] = {}
    for name in names:  # first calls, in registry order, so each loader is charged to its first metric
        try:
            rows[name] = Row(name, timed(partial(compute, [name], small, models))[1], None)
        except Exception as error:  # a metric whose data is missing must not hide the others
            errors[name] = f"{type(error).__name__}: {error}"
    sr_label, sr_run = _sr(args, pairs, small, models, rows)

    for name in list(rows):
        if name == sr_label:
            continue
        try:
            rows[name].seconds = timed(partial(compute, [name], pairs, models))[1]
        except Exception as error:
            errors[name] = f"{type(error).__name__}: {error}"
    rows[sr_label].seconds = timed(lambda: sr_run(pairs))[1]
    for label, group in (("bleu-1..4 (one call)", BLEU), ("embedding trio (one call)", EMBEDDING)):
        if all(name in rows for name in group):
            rows[label] = Row(label, None, timed(partial(compute, group, pairs, models))[1])

    references = _reference_timings(pairs)
    _attach_references(rows, references)

    suite = [name for name in BASELINE_SUITE if name in rows]
    suite_scores, suite_seconds = timed(lambda: compute(suite, pairs, models))
    _, suite_sr_seconds = timed(lambda: sr_run(pairs))
    suite_total = suite_seconds + suite_sr_seconds
    suite_load = sum(rows[name].first_call or 0.0 for name in [*suite, sr_label])

    print()
    _print_speed_table(rows, n)
    print()
    _print_suite_table(
        suite=[*suite, sr_label],
        total=suite_total,
        load=suite_load,
        n=n,
        bleu_ratio=_ratio(rows.get("bleu-1..4 (one call)")),
        missing=[name for name in BASELINE_SUITE if name not in rows],
    )
    bleu_gap = _bleu_agreement(pairs, suite_scores) if "bleu-4" in suite_scores else None
    if bleu_gap is not None:
        print(f"\nsanity: max |ours - nltk| over BLEU-1..4 on these pairs = {bleu_gap:.2e}")
    for name, message in errors.items():
        print(f"FAILED {name}: {message}")
    end = os.getloadavg()
    print(f"load average at end: {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")


def _import_torch() -> Any:
    import torch

    return torch


def _sr(
    args: argparse.Namespace,
    pairs: BenchPairs,
    small: BenchPairs,
    models: dict[str, Path],
    rows: dict[str, Row],
) -> tuple[str, Callable[[BenchPairs], object]]:
    """The row label of s_R and how to run it: the registry's metric, or the direct scorer (its load timed)."""
    if sr_through_registry(models):
        return SR_NAME, lambda batch: compute([SR_NAME], batch, models)
    scorer, load = timed(lambda: sr_scorer(data=args.data, ruber_model=args.ruber_model))
    _, first = timed(lambda: scorer.score(small.hypotheses, small.references))
    rows[scorer.label] = Row(scorer.label, load + first, None, note="outside the registry")
    return scorer.label, lambda batch: scorer.score(batch.hypotheses, batch.references)


def _reference_timings(pairs: BenchPairs) -> dict[str, tuple[str, float]]:
    """Seconds of each reference implementation on ``pairs``: {our row: (what, seconds)}."""
    from nltk.translate.bleu_score import SmoothingFunction
    from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU as SacreBLEU

    smooth = SmoothingFunction().method1
    # nltk gets our tokens for free (tokenizing is not its cost); our timings include tokenizing.
    tokenized = [
        (tokenize(h), [tokenize(r) for r in refs])
        for h, refs in zip(pairs.hypotheses, pairs.references, strict=True)
    ]

    def nltk_orders(orders: range) -> None:
        for hypothesis, refs in tokenized:
            for order in orders:
                nltk_sentence_bleu(
                    refs, hypothesis, weights=(1.0 / order,) * order, smoothing_function=smooth
                )

    sacre = SacreBLEU(effective_order=True)
    rouge = rouge_scorer.RougeScorer(["rougeL"])
    _, nltk4 = timed(lambda: nltk_orders(range(1, 5)))
    _, nltk_bleu4 = timed(lambda: nltk_orders(range(4, 5)))
    _, sacre_seconds = timed(
        lambda: [
            sacre.sentence_score(h, refs) for h, refs in zip(pairs.hypotheses, pairs.references, strict=True)
        ]
    )
    _, rouge_seconds = timed(
        lambda: [rouge.score(refs[0], h) for h, refs in zip(pairs.hypotheses, pairs.references, strict=True)]
    )
    return {
        "bleu-1..4 (one call)": ("nltk sentence_bleu x4 orders, method1", nltk4),
        "bleu-4": ("nltk sentence_bleu BLEU-4, method1", nltk_bleu4),
        "bleu-4 vs sacrebleu": ("sacrebleu sentence_score BLEU-4", sacre_seconds),
        "rouge-l": ("rouge-score RougeScorer(rougeL)", rouge_seconds),
    }


def _attach_references(rows: dict[str, Row], references: dict[str, tuple[str, float]]) -> None:
    for label, (what, seconds) in references.items():
        if label == "bleu-4 vs sacrebleu":
            if "bleu-4" in rows:
                rows[label] = Row("bleu-4", None, rows["bleu-4"].seconds, what, seconds)
        elif label in rows:
            rows[label].reference, rows[label].reference_seconds = what, seconds
    # keep the sacrebleu row next to the nltk BLEU-4 row
    if "bleu-4 vs sacrebleu" in rows:
        ordered = {}
        for key, row in rows.items():
            if key != "bleu-4 vs sacrebleu":
                ordered[key] = row
            if key == "bleu-4":
                ordered["bleu-4 vs sacrebleu"] = rows["bleu-4 vs sacrebleu"]
        rows.clear()
        rows.update(ordered)


def _ratio(row: Row | None) -> float | None:
    if row is None or not row.seconds or not row.reference_seconds:
        return None
    return row.reference_seconds / row.seconds  # (n / ours) / (n / reference)


def _print_speed_table(rows: dict[str, Row], n: int) -> None:
    print(
        f"| metric | first call, {FIRST_CALL_PAIRS} pairs (s) | {n} pairs (s) | pairs/s "
        "| reference implementation | its pairs/s | ours / reference |"
    )
    print("|---|---:|---:|---:|---|---:|---:|")
    for row in rows.values():
        first = "" if row.first_call is None else f"{row.first_call:.2f}"
        seconds = "" if row.seconds is None else f"{row.seconds:.2f}"
        rate = "" if not row.seconds else f"{n / row.seconds:,.0f}"
        reference = row.reference or ("—" if not row.note else row.note)
        reference_rate = f"{n / row.reference_seconds:,.0f}" if row.reference_seconds else ""
        ratio = _ratio(row)
        print(
            f"| {row.metric} | {first} | {seconds} | {rate} | {reference} | {reference_rate} "
            f"| {'' if ratio is None else f'{ratio:.1f}x'} |"
        )


def _print_suite_table(
    *, suite: list[str], total: float, load: float, n: int, bleu_ratio: float | None, missing: list[str]
) -> None:
    print("| target | measured | met |")
    print("|---|---:|---|")
    print(
        f"| baseline suite ({', '.join(suite)}) on {n} pairs, warm, < {SUITE_TARGET_SECONDS:.0f} s "
        f"| {total:.1f} s ({n / total:,.0f} pairs/s); + {load:.1f} s first-call loads "
        f"| {'yes' if total < SUITE_TARGET_SECONDS else 'NO'} |"
    )
    if bleu_ratio is not None:
        print(
            f"| BLEU-1..4 per pair >= {BLEU_TARGET_RATIO:.0f}x nltk | {bleu_ratio:.1f}x "
            f"| {'yes' if bleu_ratio >= BLEU_TARGET_RATIO else 'NO'} |"
        )
    if missing:
        print(f"suite incomplete, not measured: {', '.join(missing)}")


def _bleu_agreement(pairs: BenchPairs, scores: dict[str, list[float | None]]) -> float:
    """Largest difference from nltk on the first 500 pairs: the ratios compare the same numbers."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smooth = SmoothingFunction().method1
    gap = 0.0
    for i in range(min(500, len(pairs))):
        hypothesis = tokenize(pairs.hypotheses[i])
        refs = [tokenize(r) for r in pairs.references[i]]
        for order in range(1, 5):
            theirs = sentence_bleu(
                refs, hypothesis, weights=(1.0 / order,) * order, smoothing_function=smooth
            )
            ours = scores[f"bleu-{order}"][i]
            gap = max(gap, float("inf") if ours is None else abs(ours - float(theirs)))
    return gap


def _print_machine(torch: Any, threads: int, torch_import: float, load: tuple[float, float, float]) -> None:
    import nltk
    import numpy

    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count() or 0
    print(
        f"machine: {platform.machine()} {platform.processor() or ''}, os.cpu_count() {os.cpu_count()}, "
        f"usable cores {affinity}, torch threads {threads}; Python {platform.python_version()}, "
        f"torch {torch.__version__}, numpy {numpy.__version__}, nltk {nltk.__version__}; "
        f"{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}"
    )
    print(f"torch import: {torch_import:.2f} s (before the first calls below)")
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()

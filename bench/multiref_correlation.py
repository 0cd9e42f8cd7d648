"""Benchmark: every reference-based metric against human judgments on the multi-reference DailyDialog
study (Gupta et al., 2019, Table 4), and BLEU speed.

Reads ../shared/data/multirefeval (never copied into the repository) and prints two tables:

1. Correlation of each metric with the 500 mean human ratings, single reference (the original reply) vs
   multi-reference (all five, best-matching reference: Gupta et al. (2019), eq. 1), next to the paper's Table 4.
2. Pairs per second of this project's BLEU-1..4 (one pass computes all four orders) against nltk's
   sentence_bleu (one call per order, as a script using nltk would) and sacrebleu's sentence_bleu (BLEU-4
   only, its own tokenizer), on every (collected reference, original reply) pair of multireftest.json.

    .venv/bin/python -m bench.multiref_correlation [--data ../shared/data/multirefeval] [--pairs 6740]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import time
from pathlib import Path

# METEOR's WordNet, built by scripts/setup.sh; nltk reads NLTK_DATA when it is first imported.
os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parent.parent / "var" / "nltk_data"))

from scoring.metrics.registry import available_metric_names, compute_metrics, metric_spec
from scoring.metrics.tokenize import tokenize
from stats.correlations import pearson_with_ci, spearman_with_ci

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "multirefeval"
ORDERS = ["bleu-1", "bleu-2", "bleu-3", "bleu-4"]
# Gupta et al. (2019), Table 4: (single Spearman, single Pearson, multi Spearman, multi Pearson).
PAPER_TABLE_4 = {
    "bleu-1": (0.0241, 0.1183, 0.1572, 0.2190),
    "bleu-2": (0.0250, 0.1803, 0.2077, 0.2910),
    "bleu-3": (0.0608, 0.1269, 0.2520, 0.2086),
    "bleu-4": (0.0345, 0.1380, 0.2202, 0.2333),
    "meteor": (0.1064, 0.1871, 0.2247, 0.2855),
    "rouge-l": (0.0715, 0.1408, 0.2203, 0.2798),
    "embedding-average": (0.0301, -0.0067, 0.1248, 0.0636),
    "vector-extrema": (0.1919, 0.2114, 0.2785, 0.2946),
    "greedy-matching": (0.1306, 0.1150, 0.2367, 0.2352),
}


def load_multireftest(path: Path) -> dict[str, list[str]]:
    """context id "d_i" -> the five references of turn i of dialogue d (the original first)."""
    references: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as lines:
        for d, line in enumerate(lines):
            for i, turn in enumerate(json.loads(line)["dialogue"]):
                if turn.get("responses"):
                    references[f"{d}_{i}"] = list(turn["responses"])
    return references


def correlation_table(data: Path) -> None:
    references = load_multireftest(data / "multireftest.json")
    with (data / "mturk_rating_processed_output.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    hypotheses = [row["response"] for row in rows]
    human = [float(row["human_average_rating"]) for row in rows]
    single = [[row["prevgt"]] for row in rows]
    multi = [references[row["context_id"]] for row in rows]
    queries = [""] * len(rows)
    names = [
        name
        for name in available_metric_names()
        if metric_spec(name).needs_references and not metric_spec(name).model_kind
    ]
    scores = {
        "single": compute_metrics(names, hypotheses, single, queries, "en"),
        "multi": compute_metrics(names, hypotheses, multi, queries, "en"),
    }
    print(f"\nMetric vs mean human rating, {len(rows)} responses (ours | paper Table 4)")
    header = (
        f"{'metric':18} {'refs':6} {'Spearman':>9} {'p':>9} {'paper':>7} {'Pearson':>8} {'p':>9} {'paper':>7}"
    )
    print(header)
    print("-" * len(header))
    wins = 0
    for name in names:
        paper = PAPER_TABLE_4.get(name, (float("nan"),) * 4)
        results = {}
        for mode, offset in (("single", 0), ("multi", 2)):
            values = [float(value) for value in scores[mode][name] if value is not None]
            if len(values) != len(human):  # the baselines always give a value; say so if one did not
                raise SystemExit(f"{name} ({mode}) has no value for {len(human) - len(values)} replies")
            rho = spearman_with_ci(human, values)
            r = pearson_with_ci(human, values)
            results[mode] = (rho.coefficient or 0.0, r.coefficient or 0.0)
            print(
                f"{name:18} {mode:6} {rho.coefficient:9.4f} {rho.p_value:9.2g} {paper[offset]:7.4f} "
                f"{r.coefficient:8.4f} {r.p_value:9.2g} {paper[offset + 1]:7.4f}"
            )
        wins += results["multi"][0] > results["single"][0] and results["multi"][1] > results["single"][1]
    print(f"multi-reference beats single-reference on both coefficients for {wins} of {len(names)} metrics")


def speed_table(data: Path, limit: int) -> None:
    from nltk.translate.bleu_score import SmoothingFunction
    from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu
    from sacrebleu.metrics import BLEU

    pairs = [(refs[1], refs[0]) for refs in load_multireftest(data / "multireftest.json").values()][:limit]
    hypotheses = [h for h, _ in pairs]
    references = [[r] for _, r in pairs]
    queries = [""] * len(pairs)

    started = time.perf_counter()
    compute_metrics(ORDERS, hypotheses, references, queries, "en")
    ours = time.perf_counter() - started

    smooth = SmoothingFunction().method1
    tokenized = [(tokenize(h), [tokenize(r)]) for h, r in pairs]  # same tokens; tokenizing is not nltk's cost
    started = time.perf_counter()
    for hyp, refs in tokenized:
        for n in range(1, 5):
            nltk_sentence_bleu(refs, hyp, weights=tuple([1.0 / n] * n), smoothing_function=smooth)
    nltk_seconds = time.perf_counter() - started

    sacre = BLEU(effective_order=True)
    started = time.perf_counter()
    for h, r in pairs:
        sacre.sentence_score(h, [r])
    sacre_seconds = time.perf_counter() - started

    n = len(pairs)
    print(
        f"\nSentence BLEU speed, {n} pairs, {platform.processor() or platform.machine()}, Python {platform.python_version()}"
    )
    print(f"{'implementation':46} {'pairs/s':>9} {'ours is x faster':>17}")
    print(f"{'dialeval BLEU-1..4 (incl. tokenization)':46} {n / ours:9.0f} {'1.0':>17}")
    print(
        f"{'nltk sentence_bleu x4 orders (pre-tokenized)':46} {n / nltk_seconds:9.0f} {nltk_seconds / ours:17.1f}"
    )
    print(
        f"{'sacrebleu sentence_score (BLEU-4 only)':46} {n / sacre_seconds:9.0f} {sacre_seconds / ours:17.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--pairs", type=int, default=6740)
    args = parser.parse_args()
    if not args.data.is_dir():
        raise SystemExit(f"{args.data} is missing: this benchmark needs ../shared/data/multirefeval")
    correlation_table(args.data)
    speed_table(args.data, args.pairs)


if __name__ == "__main__":
    main()

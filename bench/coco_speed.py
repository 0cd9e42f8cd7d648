"""The native coco-caption metrics (scoring.metrics.coco) against pycocoevalcap 1.2, measured honestly.

nlg-eval computes the dialog literature's BLEU, ROUGE-L and CIDEr-D by handing pycocoevalcap's scorers raw
strings; scoring.metrics.coco gives the same values natively. Each comparison pits one native function
against the pycocoevalcap call that nlg-eval makes, on the same raw strings, in one process:

    bleu-1..4          coco_sentence_bleu_batch(orders 1..4)  vs Bleu(4).compute_score (per-sentence lists)
    corpus bleu-1..4   coco_corpus_bleu                       vs Bleu(4).compute_score (corpus values)
    rouge-l            coco_rouge_l_batch                     vs Rouge().compute_score
    cider-d            coco_cider_d                           vs Cider().compute_score

pycocoevalcap's ``compute_score`` computes corpus and sentence BLEU in one call, so it is timed against
each native function separately (each row gives the peer that whole call). Inputs in each side's layout
(lists for the project, pycocoevalcap's ``{id: [text]}`` dicts) are built before any timing; turning a
side's result into per-item float tuples for the check is inside its timed call, for both sides.

Timing, rounds and the table follow bench.metric_speed (whose helpers this reuses): one untimed warm-up
call per side, whose values are compared; then ``--rounds`` rounds (default 5), each timing every
comparison once per side, alternating which side goes first (A B, then B A), each call measured with
``time.process_time()`` (CPU) and ``time.perf_counter()`` (wall) after a ``gc.collect()``. Printed per
comparison: median seconds of each side, min / median / max over rounds of the ratio pycocoevalcap /
project in CPU and in wall time, whether the median CPU ratio meets the 5x target, and whether the two
sides' values agreed to 1e-9 (with the largest absolute difference).

Pairs: --pairs (default 5,000). With --references 1 (default), DailyDialog (query, reference, another
pair's reply) items from --data as bench.dailydialog_pairs builds them (a seeded generated sample, said
so, without the corpus). With --references K (2..5), the first K references of each context of
multirefeval's multireftest.json (--multiref-data), stripped as nlg-eval strips lines, the hypothesis
being the original reply of another context (seeded derangement).

    .venv/bin/python -m bench.coco_speed [--rounds 5] [--pairs 5000] [--references 1]
        [--data ../shared/data/dailydialog] [--multiref-data ../shared/data/multirefeval]
        [--only bleu,corpus-bleu,rouge-l,cider-d]

Run it on a quiet machine: the load averages at the start and the end are printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import statistics
import sys
from importlib.metadata import version
from pathlib import Path

from bench.dailydialog_pairs import DEFAULT_DAILYDIALOG
from bench.metric_speed import (
    DEFAULT_ROUNDS,
    Comparison,
    Values,
    largest_difference,
    load_pairs,
    only_comparisons,
    print_machine,
    run_rounds,
    spread,
)
from bench.multiref_correlation import DEFAULT_DATA as DEFAULT_MULTIREF
from bench.multiref_correlation import load_multireftest
from scoring.metrics.coco import coco_cider_d, coco_corpus_bleu, coco_rouge_l_batch, coco_sentence_bleu_batch

DEFAULT_PAIRS = 5_000
TARGET = 5.0  # pycocoevalcap / project CPU time, at least
TOLERANCE = 1e-9
SEED = 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rounds", type=int, default=DEFAULT_ROUNDS, help="interleaved rounds (>= 5 to report)"
    )
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS)
    parser.add_argument(
        "--references",
        type=int,
        default=1,
        help="references per item: 1 (DailyDialog) or 2..5 (multirefeval)",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DAILYDIALOG)
    parser.add_argument("--multiref-data", type=Path, default=DEFAULT_MULTIREF)
    parser.add_argument("--only", default="", help="comma-separated comparison keys (default: all)")
    args = parser.parse_args()
    if args.rounds < 1 or args.pairs < 2:
        parser.error("--rounds must be at least 1 and --pairs at least 2")
    if not 1 <= args.references <= 5:
        parser.error("--references must be between 1 and 5")

    load_start = os.getloadavg()
    if args.references == 1:
        pairs = load_pairs(args.data, args.pairs)
        hypotheses, references, description = pairs.hypotheses, pairs.references, pairs.description
    else:
        hypotheses, references, description = multireference_items(
            args.multiref_data, args.pairs, args.references
        )
    comparisons = build_comparisons(hypotheses, references)
    comparisons = only_comparisons(parser, comparisons, args.only)

    print(f"# coco-caption metrics: native vs pycocoevalcap, {len(hypotheses):,} items")
    print(f"command: python -m bench.coco_speed {shlex.join(sys.argv[1:])}".rstrip())
    print(f"items: {description}")
    print_machine(load_start)
    print(f"pycocoevalcap {version('pycocoevalcap')}, numpy {version('numpy')}")
    if args.rounds < DEFAULT_ROUNDS:
        print(
            f"NOTE: {args.rounds} round(s), fewer than {DEFAULT_ROUNDS}: a sanity check, not figures to report"
        )

    for comparison in comparisons:  # warm-up: one untimed call of each side, whose values are compared
        comparison.values["project"] = comparison.run_project()
        comparison.values["peer"] = comparison.run_peer()
    run_rounds(comparisons, args.rounds)

    print()
    print_table(comparisons, len(hypotheses))
    end = os.getloadavg()
    print(f"\nload average at end: {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")


def multireference_items(data: Path, count: int, per_item: int) -> tuple[list[str], list[list[str]], str]:
    """``count`` multireftest.json contexts with their first ``per_item`` references; as hypothesis, the
    original reply (first reference) of another context."""
    path = data / "multireftest.json"
    if not path.is_file():
        raise SystemExit(f"{path} is missing: --references above 1 needs ../shared/data/multirefeval")
    contexts = [
        [text.strip() for text in responses[:per_item]]
        for responses in load_multireftest(path).values()
        if len(responses) >= per_item
    ][:count]
    if len(contexts) < 2:
        raise SystemExit(f"{path}: fewer than 2 contexts with {per_item} references")
    order = list(range(len(contexts)))
    random.Random(SEED).shuffle(order)
    for i in range(len(order)):  # no item scores its own references
        if order[i] == i:
            j = (i + 1) % len(order)
            order[i], order[j] = order[j], order[i]
    hypotheses = [contexts[order[i]][0] for i in range(len(contexts))]
    shortfall = f" (only {len(contexts):,} available)" if len(contexts) < count else ""
    return (
        hypotheses,
        contexts,
        f"multirefeval ({path}): {len(contexts):,} contexts{shortfall}, {per_item} references each, "
        f"hypothesis = another context's original reply (seed {SEED})",
    )


def build_comparisons(hypotheses: list[str], references: list[list[str]]) -> list[Comparison]:
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    gts = {index: list(refs) for index, refs in enumerate(references)}
    res = {index: [hypothesis] for index, hypothesis in enumerate(hypotheses)}
    count = len(hypotheses)

    def project_bleu() -> Values:
        return [tuple(row) for row in coco_sentence_bleu_batch(hypotheses, references, [1, 2, 3, 4])]

    def peer_bleu() -> Values:
        _, per_order = Bleu(4).compute_score(gts, res, verbose=0)
        return list(zip(*per_order, strict=True))

    def project_corpus_bleu() -> Values:
        return [tuple(coco_corpus_bleu(hypotheses, references, 4))]

    def peer_corpus_bleu() -> Values:
        corpus, _ = Bleu(4).compute_score(gts, res, verbose=0)
        return [tuple(float(value) for value in corpus)]

    def project_rouge() -> Values:
        return [(f,) for _, _, f in coco_rouge_l_batch(hypotheses, references)]

    def peer_rouge() -> Values:
        _, scores = Rouge().compute_score(gts, res)
        return [(float(score),) for score in scores]

    def project_cider() -> Values:
        return [(score,) for score in coco_cider_d(hypotheses, references)]

    def peer_cider() -> Values:
        _, scores = Cider().compute_score(gts, res)
        return [(float(score),) for score in scores]

    assert count == len(references)
    return [
        Comparison("bleu", "bleu-1..4", "Bleu(4).compute_score", TARGET, project_bleu, peer_bleu),
        Comparison(
            "corpus-bleu",
            "corpus bleu-1..4",
            "Bleu(4).compute_score",
            TARGET,
            project_corpus_bleu,
            peer_corpus_bleu,
        ),
        Comparison("rouge-l", "rouge-l", "Rouge().compute_score", TARGET, project_rouge, peer_rouge),
        Comparison("cider-d", "cider-d", "Cider().compute_score", TARGET, project_cider, peer_cider),
    ]


def print_table(comparisons: list[Comparison], items: int) -> None:
    print(
        "| metric | items | project CPU s | pycocoevalcap CPU s | project wall s | pycocoevalcap wall s "
        "| ratio CPU (min / median / max) | ratio wall (min / median / max) | target (CPU) "
        "| values agree to 1e-9 |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---|---|---|")
    for comparison in comparisons:
        cpu_ratios = [p / o for p, o in zip(comparison.cpu["peer"], comparison.cpu["project"], strict=True)]
        wall_ratios = [
            p / o for p, o in zip(comparison.wall["peer"], comparison.wall["project"], strict=True)
        ]
        median = statistics.median(cpu_ratios)
        target = f">= {TARGET:.0f}x: {'met' if median >= TARGET else 'NOT met'}"
        ours, theirs = comparison.values["project"], comparison.values["peer"]
        same_shape = len(ours) == len(theirs) and all(
            len(a) == len(b) for a, b in zip(ours, theirs, strict=False)
        )
        if same_shape:
            difference = largest_difference(ours, theirs)
            agree = f"{'yes' if difference <= TOLERANCE else 'NO'} (max {difference:.1e})"
        else:
            agree = "NO (different shapes)"
        print(
            f"| {comparison.project} | {items:,} "
            f"| {statistics.median(comparison.cpu['project']):.3f} "
            f"| {statistics.median(comparison.cpu['peer']):.3f} "
            f"| {statistics.median(comparison.wall['project']):.3f} "
            f"| {statistics.median(comparison.wall['peer']):.3f} "
            f"| {spread(cpu_ratios)} | {spread(wall_ratios)} | {target} | {agree} |"
        )
    rounds = len(comparisons[0].cpu["project"]) if comparisons else 0
    print(
        f"\nSeconds are medians over {rounds} round(s); ratios are per round, pycocoevalcap / project (above 1: "
        "the project is faster). Values were compared on the warm-up call of each side."
    )


if __name__ == "__main__":
    main()

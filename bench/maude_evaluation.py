"""MaUde (Sinha et al., 2020) evaluated as the paper does, on the data in ../shared/data.

1. Robustness (Sinha et al., 2020, Table 1 / Table 6 layout), on the DailyDialog test split: for each scorer, the
   mean score ± standard deviation of the ground-truth reply and of each variant, and
   delta = score(c, ground truth) - score(c, variant):
   - semantic positive: the ground truth itself, and the collected multi-references of
     ../shared/data/multirefeval (its references 2-5 of each turn; the first is the original reply,
     lowercased, and is the ground truth of that row) - lower delta is better;
   - semantic negative: a random utterance of another test dialog - higher delta is better;
   - syntactic negative: word drop (30%), word order, word repeat - higher delta is better.
   Seed targets: delta >= 0.25 (random utterance), >= 0.6 (order, repeat), < 0.1 (multi-references).
2. Turn-level correlation with human judgments: GRADE's DailyDialog set (300 replies, mean of the
   annotators) and the multi-reference study's 500 rated replies; Pearson and Spearman with 95% bootstrap
   intervals (1,000 paired resamples of the replies, the same resamples for every scorer) and p-values,
   for every MaUde variant (every context turn, and the last turn only) beside RUBER's s_U and every
   trained BERT-RUBER unreferenced cell.

    .venv/bin/python -m bench.maude_evaluation --maude-model var/models/maude/<name>-<hash> \
        [--maude-model <another artifact>] [--ruber-model ...] [--bert-ruber-model ...] [--examples 3000]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parent.parent / "var" / "nltk_data"))

from scoring.metrics.learned_specs import FACTORIAL_CELLS
from scoring.metrics.maude import load_maude
from scoring.metrics.maude.dialogs import examples, read_dialogs
from scoring.metrics.maude.negatives import DEFAULT_DROP_FRACTION, word_drop, word_order, word_repeat
from scoring.metrics.registry import compute_metrics
from stats.bootstrap import Resamples, bootstrap_correlations, percentile_interval
from stats.correlations import pearson_with_ci, spearman_with_ci

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
Scorer = Callable[[Sequence[Sequence[str]], Sequence[str]], list[float]]


@dataclass(frozen=True)
class Judged:
    name: str
    contexts: list[list[str]]
    replies: list[str]
    human: np.ndarray


def scorers(args: argparse.Namespace) -> dict[str, Scorer]:
    """Every scorer to evaluate, by column name: each variant of each MaUde artifact (and its last-turn
    reading), RUBER's s_U, BERT-RUBER's trained unreferenced cells."""
    found: dict[str, Scorer] = {}
    for path in args.maude_model:
        model = load_maude(path)
        prefix = "" if len(args.maude_model) == 1 else f"{Path(path).name}/"
        for variant in model.variants:

            def score(
                contexts: Sequence[Sequence[str]], replies: Sequence[str], v: str = variant, m=model
            ) -> list[float]:
                return m.score(contexts, replies, variant=v)

            found[f"{prefix}maude:{variant}"] = score
            if variant == "maude":

                def one_turn(
                    contexts: Sequence[Sequence[str]], replies: Sequence[str], m=model
                ) -> list[float]:
                    return m.score(contexts, replies, variant="maude", turns=1)

                found[f"{prefix}maude:maude (last turn only)"] = one_turn
    registry: list[tuple[str, str, str]] = []
    if args.ruber_model:
        registry.append(("ruber-unreferenced", "ruber", args.ruber_model))
    if args.bert_ruber_model:
        config = json.loads((Path(args.bert_ruber_model) / "config.json").read_text(encoding="utf-8"))
        for cell in FACTORIAL_CELLS:
            if cell in config.get("cells", []):
                registry.append((f"bert-ruber-unreferenced:{cell}", "bert-ruber", args.bert_ruber_model))
    for name, kind, path in registry:

        def by_registry(
            contexts: Sequence[Sequence[str]],
            replies: Sequence[str],
            n: str = name,
            k: str = kind,
            p: str = path,
        ) -> list[float]:
            queries = [context[-1] for context in contexts]
            values = compute_metrics([n], list(replies), [[]] * len(replies), queries, "en", models={k: p})[n]
            return [float("nan") if value is None else float(value) for value in values]

        found[name] = by_registry
    return found


def robustness(data: Path, columns: dict[str, Scorer], count: int, seed: int) -> None:
    dialogs = read_dialogs(data / "dailydialog" / "test", corpus_format="dailydialog")
    found = examples(dialogs)
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(found)), min(count, len(found))))
    picked = [found[i] for i in chosen]
    contexts = [list(e.context) for e in picked]
    truth = [e.reply for e in picked]
    others = []
    for e in picked:
        other = found[rng.randrange(len(found))]
        while other.dialog == e.dialog or other.reply == e.reply:
            other = found[rng.randrange(len(found))]
        others.append(other.reply)
    rows = {
        ("Semantic positive (lower is better)", "Ground truth"): truth,
        ("Semantic negative (higher is better)", "Random utterance"): others,
        ("Syntactic negative (higher is better)", f"Word drop ({DEFAULT_DROP_FRACTION:.0%})"): [
            word_drop(t, rng) for t in truth
        ],
        ("Syntactic negative (higher is better)", "Word order"): [word_order(t, rng) for t in truth],
        ("Syntactic negative (higher is better)", "Word repeat"): [word_repeat(t, rng) for t in truth],
    }
    multi_contexts, multi_truth, multi_refs = multiref_positives(data, count, seed)
    print(
        f"\n## Robustness: mean score ± sd | delta = score(ground truth) - score(variant)\n\n"
        f"{len(picked)} (context, reply) examples of the DailyDialog test split (seed {seed}); multi-references: "
        f"{len(multi_refs)} collected references (drawn at random, seed {seed}) of "
        f"{len(set(map(tuple, multi_contexts)))} multiref contexts.\n"
    )
    print("| category | variant | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    results: dict[str, dict[str, tuple[float, float, float]]] = {name: {} for name in columns}
    timings = {}
    for name, score in columns.items():
        started = time.perf_counter()
        base = np.array(score(contexts, truth))
        for (_, label), replies in rows.items():
            values = base if replies is truth else np.array(score(contexts, replies))
            results[name][label] = (
                float(np.nanmean(values)),
                float(np.nanstd(values)),
                float(np.nanmean(base - values)),
            )
        multi_base = np.array(score(multi_contexts, multi_truth))
        multi = np.array(score(multi_contexts, multi_refs))
        results[name]["Multi-references"] = (
            float(np.nanmean(multi)),
            float(np.nanstd(multi)),
            float(np.nanmean(multi_base - multi)),
        )
        timings[name] = time.perf_counter() - started
    ordered = [(category, label) for category, label in rows]
    ordered.insert(1, ("Semantic positive (lower is better)", "Multi-references"))
    for category, label in ordered:
        cells = []
        for name in columns:
            mean, sd, delta = results[name][label]
            cells.append(
                f"{mean:.3f} ± {sd:.3f} | {delta:+.3f}"
                if label != "Ground truth"
                else f"{mean:.3f} ± {sd:.3f}"
            )
        print(f"| {category} | {label} | " + " | ".join(cells) + " |")
    print(
        "\nseconds per scorer (all rows): "
        + ", ".join(f"{name} {seconds:.0f}" for name, seconds in timings.items())
    )


def multiref_positives(data: Path, count: int, seed: int) -> tuple[list[list[str]], list[str], list[str]]:
    """(context, ground truth, one collected reference) for ``count`` collected references of the multiref
    set drawn at random (``seed``): a turn's "responses" after the first (the original reply, lowercased)."""
    contexts, truths, references = [], [], []
    with (data / "multirefeval" / "multireftest.json").open(encoding="utf-8") as lines:
        for line in lines:
            turns = json.loads(line)["dialogue"]
            for index, turn in enumerate(turns):
                responses = turn.get("responses") or []
                if len(responses) < 2 or index + 1 >= len(turns):
                    continue
                context = [t["text"].lower() for t in turns[: index + 1]]
                for reference in responses[1:]:
                    contexts.append(context)
                    truths.append(responses[0])
                    references.append(reference)
    chosen = sorted(random.Random(seed).sample(range(len(references)), min(count, len(references))))
    return [contexts[i] for i in chosen], [truths[i] for i in chosen], [references[i] for i in chosen]


def judged_sets(data: Path) -> list[Judged]:
    rows = [
        json.loads(line) for line in (data / "grade-dailydialog" / "human_judgement_dailydialog.jsonl").open()
    ]
    grade = Judged(
        "GRADE DailyDialog",
        [row["Context"].split("|||") for row in rows],
        [row["Response"] for row in rows],
        np.array([np.mean(json.loads(row["HumanScores"])) for row in rows]),
    )
    with (data / "multirefeval" / "mturk_rating_processed_output.csv").open(encoding="utf-8") as handle:
        rated = list(csv.DictReader(handle))
    multiref = Judged(
        "multiref (500)",
        [row["context"].split("||||") for row in rated],
        [row["response"] for row in rated],
        np.array([float(row["human_average_rating"]) for row in rated]),
    )
    return [grade, multiref]


def correlations(data: Path, columns: dict[str, Scorer], resamples: int) -> None:
    sets = judged_sets(data)
    print(
        f"\n## Turn-level correlation with human judgments\n\nPearson r [95% bootstrap CI] (p) / Spearman rho "
        f"[95% bootstrap CI] (p); {resamples} paired resamples of the replies, shared by every scorer.\n"
    )
    print("| scorer | " + " | ".join(s.name for s in sets) + " |")
    print("|---|" + "---|" * len(sets))
    cells: dict[str, list[str]] = {name: [] for name in columns}
    for judged in sets:
        matrix = np.column_stack(
            [np.array(score(judged.contexts, judged.replies), dtype=float) for score in columns.values()]
        )
        draws = bootstrap_correlations(
            judged.human, matrix, Resamples(n=len(judged.human), count=resamples, seed=0)
        )
        for column, name in enumerate(columns):
            keep = np.isfinite(matrix[:, column])
            r = pearson_with_ci(judged.human[keep].tolist(), matrix[keep, column].tolist())
            rho = spearman_with_ci(judged.human[keep].tolist(), matrix[keep, column].tolist())
            r_ci = percentile_interval(draws.pearson[column]) or (float("nan"), float("nan"))
            rho_ci = percentile_interval(draws.spearman[column]) or (float("nan"), float("nan"))
            cells[name].append(
                f"{r.coefficient:.3f} [{r_ci[0]:.3f}, {r_ci[1]:.3f}] ({r.p_value:.1e}) / "
                f"{rho.coefficient:.3f} [{rho_ci[0]:.3f}, {rho_ci[1]:.3f}] ({rho.p_value:.1e})"
            )
    for name in columns:
        print(f"| {name} | " + " | ".join(cells[name]) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--maude-model", action="append", required=True, help="a MaUde artifact folder (repeatable)"
    )
    parser.add_argument("--ruber-model", help="a RUBER artifact folder (its s_U joins the tables)")
    parser.add_argument(
        "--bert-ruber-model", help="a BERT-RUBER artifact folder (its trained cells join the tables)"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--examples", type=int, default=3000, help="DailyDialog test examples for the robustness table"
    )
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip", choices=["robustness", "correlation"], action="append", default=[])
    args = parser.parse_args()
    import torch

    print(
        f"# MaUde evaluation\n\nmachine: {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, CUDA {'yes' if torch.cuda.is_available() else 'no'}; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    columns = scorers(args)
    if "robustness" not in args.skip:
        robustness(args.data, columns, args.examples, args.seed)
    if "correlation" not in args.skip:
        correlations(args.data, columns, args.resamples)


if __name__ == "__main__":
    main()

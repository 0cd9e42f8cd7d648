"""Benchmark: the learned metrics (RUBER, Tao et al., 2018; BERT-RUBER, Ghazarian et al., 2019) against human
judgments, and the unreferenced scorers' ranking accuracy.

Takes trained models (``manage.py train_metric`` / ``train_default_models``, or ``bench.ruber_training``'s
output folder) and prints:

1. Pearson and Spearman (with p-values) of s_R, the vector-pool baseline, s_U, the four RUBER blends,
   BERT-RUBER's referenced score, every trained factorial cell and the BERT-RUBER blends, against the mean
   human rating of
   - GRADE's DailyDialog judgments (300 replies of 2 systems, ~10 annotators each, 1-5, one reference), and
   - the multi-reference DailyDialog study (500 rated replies, 1-5; single = the original reply as the
     reference, multi = all five, Gupta et al., 2019, eq. 1).
   Blends normalise over each dataset as a whole (Tao et al., 2018, eq. 4).
2. Ranking accuracy (true reply vs the reply of another random pair, seeded) on the DailyDialog test split.

    .venv/bin/python -m bench.learned_correlation --ruber-model var/models/ruber/<name>-<hash> \
        --bert-ruber-model var/models/bert-ruber/<name>-<hash> [--data ../shared/data] [--ranking-pairs 5000]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parent.parent / "var" / "nltk_data"))

from scoring.metrics.learned_specs import FACTORIAL_CELLS
from scoring.metrics.registry import compute_metrics, metric_spec
from scoring.metrics.ruber.corpus import read_corpus
from scoring.metrics.ruber.ranking import ranking_accuracy, ranking_triples
from stats.correlations import pearson_with_ci, spearman_with_ci

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


@dataclass(frozen=True)
class RatedSet:
    name: str
    hypotheses: list[str]
    queries: list[str]
    references: list[list[str]]
    human: list[float]


def grade_set(data: Path) -> RatedSet:
    rows = [
        json.loads(line) for line in (data / "grade-dailydialog" / "human_judgement_dailydialog.jsonl").open()
    ]
    human = []
    for row in rows:
        scores = json.loads(row["HumanScores"])
        human.append(sum(scores) / len(scores))
    return RatedSet(
        name="grade (1 ref)",
        hypotheses=[row["Response"] for row in rows],
        queries=[row["Context"].split("|||")[-1] for row in rows],
        references=[[row["Reference"]] for row in rows],
        human=human,
    )


def multiref_sets(data: Path) -> list[RatedSet]:
    with (data / "multirefeval" / "mturk_rating_processed_output.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    references: dict[str, list[str]] = {}
    with (data / "multirefeval" / "multireftest.json").open(encoding="utf-8") as lines:
        for d, line in enumerate(lines):
            for i, turn in enumerate(json.loads(line)["dialogue"]):
                if turn.get("responses"):
                    references[f"{d}_{i}"] = list(turn["responses"])
    common = {
        "hypotheses": [row["response"] for row in rows],
        "queries": [row["context"].split("||||")[-1] for row in rows],
        "human": [float(row["human_average_rating"]) for row in rows],
    }
    return [
        RatedSet(name="multiref single", references=[[row["prevgt"]] for row in rows], **common),  # type: ignore[arg-type]
        RatedSet(name="multiref multi", references=[references[row["context_id"]] for row in rows], **common),  # type: ignore[arg-type]
    ]


def metric_names(models: dict[str, str], cells: Sequence[str]) -> list[str]:
    names = []
    if "ruber" in models:
        names += ["ruber-referenced", "vector-pool-unreferenced", "ruber-unreferenced"]
        names += ["ruber-min", "ruber-max", "ruber-gmean", "ruber-amean"]
    names.append("bert-ruber-referenced")
    if "bert-ruber" in models:
        names += [f"bert-ruber-unreferenced:{cell}" for cell in cells]
        if "bert-max-ce" in cells:
            names += ["bert-ruber-min", "bert-ruber-max", "bert-ruber-gmean", "bert-ruber-amean"]
    return names


def trained_cells(path: str | None) -> list[str]:
    if path is None:
        return []
    config = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    return [cell for cell in FACTORIAL_CELLS if cell in config.get("cells", [])]


def correlation_table(sets: Sequence[RatedSet], names: Sequence[str], models: dict[str, str]) -> None:
    results: dict[tuple[str, str], tuple[float, float, float, float, int]] = {}
    for rated in sets:
        started = time.perf_counter()
        scores = compute_metrics(
            names, rated.hypotheses, rated.references, rated.queries, "en", models=models
        )
        print(
            f"[{rated.name}] {len(rated.hypotheses)} replies scored with {len(names)} metrics in "
            f"{time.perf_counter() - started:.1f} s"
        )
        for name in names:
            pairs = [(h, v) for h, v in zip(rated.human, scores[name], strict=True) if v is not None]
            human = [h for h, _ in pairs]
            values = [float(v) for _, v in pairs]
            r = pearson_with_ci(human, values)
            rho = spearman_with_ci(human, values)
            results[(name, rated.name)] = (
                r.coefficient or 0.0,
                r.p_value or 1.0,
                rho.coefficient or 0.0,
                rho.p_value or 1.0,
                len(pairs),
            )
    header = f"| {'metric':42} |" + "".join(f" {s.name:^31} |" for s in sets)
    print("\nPearson r (p) / Spearman rho (p) against the mean human rating")
    print(header)
    print("|" + "-" * 44 + "|" + "|".join("-" * 33 for _ in sets) + "|")
    for name in names:
        cells = []
        for rated in sets:
            pr, pp, sr, sp, _ = results[(name, rated.name)]
            cells.append(f" {pr:6.3f} ({pp:7.1e}) / {sr:6.3f} ({sp:7.1e}) ")
        print(f"| {name:42} |" + "|".join(cells) + "|")


def ranking_table(data: Path, names: Sequence[str], models: dict[str, str], limit: int) -> None:
    pairs = read_corpus(data / "dailydialog" / "test", corpus_format="dailydialog")[:limit]
    triples = ranking_triples(pairs, seed=0)
    print(
        f"\nRanking accuracy on {len(triples)} DailyDialog test pairs (true reply vs a random other reply; "
        "chance 0.5)"
    )
    print(f"| {'scorer':42} | accuracy | seconds |")
    print("|" + "-" * 44 + "|----------|---------|")
    for name in names:
        if metric_spec(name).needs_references:
            continue

        def score(queries: Sequence[str], replies: Sequence[str], metric: str = name) -> list[float]:
            values = compute_metrics([metric], replies, [[]] * len(replies), queries, "en", models=models)
            return [-1.0 if value is None else float(value) for value in values[metric]]

        started = time.perf_counter()
        accuracy = ranking_accuracy(score, triples)
        print(f"| {name:42} | {accuracy:8.4f} | {time.perf_counter() - started:7.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ruber-model", help="a RUBER artifact folder")
    parser.add_argument("--bert-ruber-model", help="a BERT-RUBER artifact folder")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--ranking-pairs", type=int, default=5000)
    args = parser.parse_args()
    if not (args.data / "grade-dailydialog").is_dir() or not (args.data / "multirefeval").is_dir():
        raise SystemExit(f"{args.data}: needs grade-dailydialog/ and multirefeval/ (../shared/data)")
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    models = {
        kind: path
        for kind, path in (("ruber", args.ruber_model), ("bert-ruber", args.bert_ruber_model))
        if path
    }
    names = metric_names(models, trained_cells(args.bert_ruber_model))
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}, "
        f"torch {torch.__version__}; models: {models}"
    )
    correlation_table([grade_set(args.data), *multiref_sets(args.data)], names, models)
    ranking_table(args.data, names, models, args.ranking_pairs)


if __name__ == "__main__":
    main()

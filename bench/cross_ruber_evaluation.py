"""Cross-RUBER against human judgments, beside the existing learned metrics.

Trains a Cross-RUBER model on DailyDialog's train split (early stopping on its validation split), or
loads one (``--model``), and prints:

1. training: wall and CPU seconds, threads, peak RSS, texts encoded, seconds per epoch, the epoch kept
   and its validation accuracies (from the artifact's ``timings.json`` and ``config.json``);
2. Pearson r and Spearman rho, each with a 95% bootstrap interval (1,000 paired resamples of the replies,
   the same resamples for every metric of a set) against the mean human rating of
   - GRADE's DailyDialog judgments (300 replies, two turns of context, the original reply as reference),
   - the multi-reference study's 500 rated replies (every context turn; "single": the original reply as
     the reference, "multi": all five, max over references, Gupta et al. (2019) eq. 1),
   for cross-ruber-unreferenced, -referenced and the four blends (RUBER's eq. 4 normalisation over each
   set), beside BERT-RUBER, MaUde and RUBER where their artifacts are given, and bert-ruber-referenced
   (no training needed);
3. with ``--combine``: the word-overlap and embedding baselines beside them, and two combinations of the
   scores every set has (the learned ones given, Cross-RUBER's two, bert-ruber-referenced, METEOR, ROUGE-L,
   BLEU-2, the three embedding metrics), each score z-normalised over its own set (no human labels, as
   RUBER's eq. 4 normalises): "combined, z-mean" (their plain mean: fitted on nothing) and "combined,
   ridge fitted on <other set>" (a ridge regression of the mean human rating on them, fitted on GRADE
   DailyDialog and reported on the multi-reference study, and the other way round: never reported on the
   set it was fitted on; the penalty is fixed at :data:`RIDGE_PENALTY`, not tuned). The fitted weights are
   printed;
4. with ``--speed N``: the seconds to score N DailyDialog test replies (context, reply, reference) with
   every Cross-RUBER score, CPU and wall, after the model is loaded.

    OMP_NUM_THREADS=1 .venv/bin/python -m bench.cross_ruber_evaluation --threads 1 \\
        [--model var/models/cross-ruber/<name>] [--output-dir /tmp/cross-ruber] [--cache-dir var/cache/cross-ruber] \\
        [--bert-ruber-model ...] [--maude-model ...] [--ruber-model ...] [--combine] [--speed 10000]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parent.parent / "var" / "nltk_data"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from stats.bootstrap import Resamples, bootstrap_correlations, percentile_interval
from stats.correlations import pearson_with_ci, spearman_with_ci

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
BASELINES = ["meteor", "rouge-l", "bleu-2", "embedding-average", "vector-extrema", "greedy-matching"]
COMBINED = [
    "cross-ruber-unreferenced",
    "cross-ruber-referenced",
    "bert-ruber-referenced",
    "ruber-unreferenced",
    "bert-ruber-unreferenced",
    "maude",
    *BASELINES,
]
RIDGE_PENALTY = 10.0  # on z-normalised scores of 300-500 replies: shrinks, never tuned on a set
FITTED_ON = {"GRADE DailyDialog": "multiref multi", "multiref single": "GRADE DailyDialog"}
FITTED_ON["multiref multi"] = "GRADE DailyDialog"


@dataclass(frozen=True)
class JudgedSet:
    """Rated replies: item i is ``hypotheses[i]`` after ``contexts[i]`` (turns, oldest first), with
    ``references[i]`` and the mean human rating ``human[i]``."""

    name: str
    contexts: list[list[str]]
    hypotheses: list[str]
    references: list[list[str]]
    human: np.ndarray


def judged_sets(data: Path) -> list[JudgedSet]:
    """GRADE DailyDialog (one reference) and the multi-reference study (single and multi reference)."""
    rows = [
        json.loads(line)
        for line in (data / "grade-dailydialog" / "human_judgement_dailydialog.jsonl").open(encoding="utf-8")
    ]
    grade = JudgedSet(
        "GRADE DailyDialog",
        [row["Context"].split("|||") for row in rows],
        [row["Response"] for row in rows],
        [[row["Reference"]] for row in rows],
        np.array([np.mean(json.loads(row["HumanScores"])) for row in rows]),
    )
    with (data / "multirefeval" / "mturk_rating_processed_output.csv").open(encoding="utf-8") as handle:
        rated = list(csv.DictReader(handle))
    references: dict[str, list[str]] = {}
    with (data / "multirefeval" / "multireftest.json").open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            for turn, entry in enumerate(json.loads(line)["dialogue"]):
                if entry.get("responses"):
                    references[f"{number}_{turn}"] = list(entry["responses"])
    common = {
        "contexts": [row["context"].split("||||") for row in rated],
        "hypotheses": [row["response"] for row in rated],
        "human": np.array([float(row["human_average_rating"]) for row in rated]),
    }
    return [
        grade,
        JudgedSet(name="multiref single", references=[[row["prevgt"]] for row in rated], **common),  # type: ignore[arg-type]
        JudgedSet(
            name="multiref multi",
            references=[references[row["context_id"]] for row in rated],
            **common,  # type: ignore[arg-type]
        ),
    ]


def correlation_cells(
    human: np.ndarray, columns: Mapping[str, Sequence[float | None]], resamples: int
) -> dict[str, dict[str, Any]]:
    """Per column: Pearson and Spearman, with their 95% bootstrap intervals over shared resamples."""
    matrix = np.column_stack(
        [
            np.array([np.nan if v is None else float(v) for v in values], dtype=float)
            for values in columns.values()
        ]
    )
    draws = bootstrap_correlations(human, matrix, Resamples(n=len(human), count=resamples, seed=0))
    found: dict[str, dict[str, Any]] = {}
    for column, name in enumerate(columns):
        keep = np.isfinite(matrix[:, column])
        r = pearson_with_ci(human[keep].tolist(), matrix[keep, column].tolist())
        rho = spearman_with_ci(human[keep].tolist(), matrix[keep, column].tolist())
        found[name] = {
            "pearson": r.coefficient,
            "pearson_ci": percentile_interval(draws.pearson[column]),
            "pearson_p": r.p_value,
            "spearman": rho.coefficient,
            "spearman_ci": percentile_interval(draws.spearman[column]),
            "n": int(keep.sum()),
        }
    return found


def cell_text(cell: dict[str, Any]) -> str:
    def interval(bounds: Any) -> str:
        return "[n/a]" if bounds is None else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"

    if cell["pearson"] is None:
        return "n/a"
    return (
        f"{cell['pearson']:.3f} {interval(cell['pearson_ci'])} / "
        f"{cell['spearman']:.3f} {interval(cell['spearman_ci'])}"
    )


def cross_ruber_columns(model: Any, judged: JudgedSet) -> dict[str, list[float | None]]:
    scores = model.scores(judged.hypotheses, judged.contexts, judged.references)
    return scores.by_metric()


def registry_columns(
    judged: JudgedSet, models: dict[str, str], names: Sequence[str]
) -> dict[str, list[float | None]]:
    """Existing metrics through the registry (``compute_metrics``), with whole contexts for MaUde."""
    from scoring.metrics.registry import compute_metrics

    if not names:
        return {}
    queries = [context[-1] for context in judged.contexts]
    found = compute_metrics(
        list(names),
        judged.hypotheses,
        judged.references,
        queries,
        "en",
        models=models,
        contexts=judged.contexts,
    )
    return {name: list(found[name]) for name in names}


def existing_metric_names(models: dict[str, str]) -> list[str]:
    names = ["bert-ruber-referenced"]
    if "ruber" in models:
        names += ["ruber-unreferenced", "ruber-gmean"]
    if "bert-ruber" in models:
        names += ["bert-ruber-unreferenced", "bert-ruber-gmean", "bert-ruber-amean"]
    if "maude" in models:
        names += ["maude"]
    return names


def zscored(columns: Mapping[str, Sequence[float | None]], names: Sequence[str]) -> np.ndarray:
    """[replies, names] each column z-normalised over the set (a missing value: the column's mean, 0)."""
    matrix = np.column_stack(
        [np.array([np.nan if v is None else float(v) for v in columns[name]]) for name in names]
    )
    mean, sd = np.nanmean(matrix, axis=0), np.nanstd(matrix, axis=0)
    z = (matrix - mean) / np.where(sd > 0, sd, 1.0)
    return np.nan_to_num(z, nan=0.0)


def ridge_weights(human: np.ndarray, z: np.ndarray, penalty: float = RIDGE_PENALTY) -> np.ndarray:
    """Ridge regression of ``human`` on ``z`` (centred: no intercept needed for a correlation),
    w = (Z'Z + penalty I)^-1 Z'(h - mean h)."""
    centred = z - z.mean(axis=0)
    gram = centred.T @ centred + penalty * np.eye(z.shape[1])
    return np.linalg.solve(gram, centred.T @ (human - human.mean()))


def combination_columns(
    sets: Sequence[JudgedSet], columns: Mapping[str, Mapping[str, Sequence[float | None]]]
) -> tuple[dict[str, dict[str, list[float]]], dict[str, dict[str, float]]]:
    """Per set: "combined, z-mean" and "combined, ridge fitted on <other>" (module docstring); and the
    weights fitted on each set, by score."""
    names = [name for name in COMBINED if all(name in columns[judged.name] for judged in sets)]
    by_name = {judged.name: judged for judged in sets}
    z = {judged.name: zscored(columns[judged.name], names) for judged in sets}
    weights = {fitted: ridge_weights(by_name[fitted].human, z[fitted]) for fitted in set(FITTED_ON.values())}
    found = {
        judged.name: {
            "combined, z-mean": z[judged.name].mean(axis=1).tolist(),
            f"combined, ridge fitted on {FITTED_ON[judged.name]}": (
                z[judged.name] @ weights[FITTED_ON[judged.name]]
            ).tolist(),
        }
        for judged in sets
    }
    shown = {
        fitted: {name: float(weight) for name, weight in zip(names, values, strict=True)}
        for fitted, values in weights.items()
    }
    return found, shown


def train_default(args: argparse.Namespace, overrides: dict[str, Any]) -> Path:
    from scoring.metrics.cross_ruber import CrossRuberConfig
    from scoring.metrics.cross_ruber.training import train_cross_ruber
    from scoring.metrics.maude.dialogs import read_dialogs

    corpus = args.data / "dailydialog"
    train = read_dialogs(corpus / "train", corpus_format="dailydialog")
    valid = read_dialogs(corpus / "validation", corpus_format="dailydialog")
    config = CrossRuberConfig(
        torch_threads=args.threads, device="cpu", corpus_description="DailyDialog train split", **overrides
    )
    artifact = train_cross_ruber(
        train, valid, config=config, output_dir=args.output_dir, cache_dir=args.cache_dir, progress=True
    )
    return artifact.path


def training_summary(path: Path) -> None:
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    timings_file = path / "timings.json"
    timings = json.loads(timings_file.read_text(encoding="utf-8")) if timings_file.is_file() else {}
    results = config["results"]
    print(f"\n## Training ({path})\n")
    print(
        f"- k = {config['frozen_layers']} frozen layers, {config['context_turns']} context turns, "
        f"interaction {config['interaction']}, negatives {', '.join(config['negatives'])}, objective "
        f"{config['objective']}, referenced {config['referenced']}; max dialogs {config['max_train_dialogs']}"
    )
    if timings:
        print(
            f"- {timings['training_examples']:,} training examples, {timings['distinct_texts']:,} distinct texts "
            f"({timings['texts_encoded']:,} encoded now in {timings['encoding_seconds']:.0f} s); epochs "
            + ", ".join(f"{seconds:.0f}" for seconds in timings["epoch_seconds"])
            + " s"
        )
        print(
            f"- total {timings['total_seconds']:.0f} s wall, {timings['cpu_seconds']:.0f} s CPU, "
            f"{timings['torch_threads']} thread(s), peak RSS {timings['peak_rss_mib']:.0f} MiB, {timings['device']}"
        )
    accuracies = ", ".join(
        f"{name.removeprefix('validation_')} {value:.4f}"
        for name, value in results.items()
        if name.startswith("validation_acc")
    )
    print(
        f"- epoch kept {results['best_epoch']} of {results['epochs_run']}: validation loss "
        f"{results['validation_loss']:.4f}; {accuracies}"
    )


def speed(model: Any, data: Path, count: int) -> None:
    from scoring.metrics.maude.dialogs import examples, read_dialogs

    found = examples(read_dialogs(data / "dailydialog" / "test", corpus_format="dailydialog"))
    rng = np.random.default_rng(0)
    picked = [found[i] for i in rng.permutation(len(found))[: min(count, len(found))]]
    while len(picked) < count:  # more replies than the test split has: other replies to the same contexts
        picked += [found[i] for i in rng.permutation(len(found))[: count - len(picked)]]
    shuffled = rng.permutation(len(picked))
    contexts = [list(e.context) for e in picked]
    hypotheses = [picked[i].reply for i in shuffled]  # replies of other contexts: realistic system outputs
    references = [[e.reply] for e in picked]
    texts = {
        *hypotheses,
        *(r for refs in references for r in refs),
        *(t for c in contexts for t in c[-model.context_turns :]),
    }
    wall, cpu = time.perf_counter(), time.process_time()
    model.scores(hypotheses, contexts, references)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"\n## Scoring speed\n\n{count:,} replies (DailyDialog test contexts, {len(texts):,} distinct texts), every "
        f"Cross-RUBER score: {wall:.1f} s wall, {cpu:.1f} s CPU, {len(hypotheses) / wall:.0f} replies/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, help="a trained Cross-RUBER artifact (else one is trained)")
    parser.add_argument("--output-dir", type=Path, default=Path("/tmp/cross-ruber-bench"))
    parser.add_argument(
        "--cache-dir", type=Path, help="the frozen layers' token-state cache (default: in output)"
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="a CrossRuberConfig field"
    )
    parser.add_argument("--bert-ruber-model")
    parser.add_argument("--maude-model")
    parser.add_argument("--ruber-model")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument(
        "--combine", action="store_true", help="also the baselines and the combinations of every score"
    )
    parser.add_argument("--speed", type=int, default=0, help="also time the scoring of this many replies")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    print(
        f"# Cross-RUBER evaluation\n\nmachine: {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"{args.threads} thread(s), CUDA {'yes' if torch.cuda.is_available() else 'no'}; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    from scoring.metrics.cross_ruber import load_cross_ruber

    path = args.model or train_default(args, config_overrides(args.set))
    training_summary(path)
    model = load_cross_ruber(path, device="cpu")
    models = {
        kind: value
        for kind, value in (
            ("bert-ruber", args.bert_ruber_model),
            ("maude", args.maude_model),
            ("ruber", args.ruber_model),
        )
        if value
    }
    print(
        "\n## Correlation with the mean human rating\n\nPearson r [95% CI] / Spearman rho [95% CI]; "
        f"{args.resamples} paired resamples per set, shared by its metrics.\n"
    )
    sets = judged_sets(args.data)
    columns: dict[str, dict[str, Sequence[float | None]]] = {}
    for judged in sets:
        columns[judged.name] = dict(cross_ruber_columns(model, judged))
        names = existing_metric_names(models) + (BASELINES if args.combine else [])
        columns[judged.name].update(registry_columns(judged, models, names))
    weights: dict[str, dict[str, float]] = {}
    if args.combine:
        combined, weights = combination_columns(sets, columns)
        for judged in sets:
            columns[judged.name].update(combined[judged.name])
    table: dict[str, dict[str, str]] = {}
    for judged in sets:
        for name, cell in correlation_cells(judged.human, columns[judged.name], args.resamples).items():
            table.setdefault(name, {})[judged.name] = cell_text(cell)
    print("| metric | " + " | ".join(s.name for s in sets) + " |")
    print("|---|" + "---|" * len(sets))
    for name, row in table.items():
        print(f"| {name} | " + " | ".join(row.get(s.name, "") for s in sets) + " |")
    for fitted, by_score in weights.items():
        shown = ", ".join(f"{name} {weight:+.3f}" for name, weight in by_score.items())
        print(f"\nridge weights fitted on {fitted} (z-normalised scores, penalty {RIDGE_PENALTY:g}): {shown}")
    if args.speed:
        speed(model, args.data, args.speed)


def config_overrides(settings: Sequence[str]) -> dict[str, Any]:
    """``NAME=VALUE`` pairs as CrossRuberConfig fields (tuples comma-separated, None as "none")."""
    from scoring.metrics.cross_ruber import CrossRuberConfig

    types = {field.name: field.type for field in fields(CrossRuberConfig)}
    found: dict[str, Any] = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        if name not in types:
            raise SystemExit(f"unknown setting {name!r}; known: {', '.join(types)}")
        kind = str(types[name])
        if value.lower() == "none":
            found[name] = None
        elif kind.startswith("tuple"):
            found[name] = tuple(part for part in value.split(",") if part)
        elif kind.startswith("int"):
            found[name] = int(value)
        elif kind.startswith("float"):
            found[name] = float(value)
        elif kind.startswith("bool"):
            found[name] = value.lower() in ("1", "true", "yes")
        else:
            found[name] = value
    return found


if __name__ == "__main__":
    main()

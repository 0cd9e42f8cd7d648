"""What each Cross-RUBER design choice buys: variants trained on one subset of DailyDialog's
train split, all else equal, each measured on DailyDialog validation and on the two shared human-judgment
sets.

Every variant trains from the same ``--dialogs`` training dialogs (seeded sample), validates on the same
fixed candidates of DailyDialog's validation split (for early stopping and the accuracies), and is scored
on GRADE DailyDialog and the multi-reference study (bench.cross_ruber_evaluation's sets). One JSON line per
variant is appended to ``--results`` as soon as it is done (a long sweep can be stopped and resumed:
variants already there are skipped); ``--table`` prints the markdown table of a results file.

    OMP_NUM_THREADS=1 .venv/bin/python -m bench.cross_ruber_ablation --dialogs 2000 --epochs 2 \\
        --results var/cross-ruber-ablation.jsonl --cache-dir var/cache/cross-ruber \\
        --variant base --variant k4:frozen_layers=4 --variant turns1:context_turns=1 ...
    .venv/bin/python -m bench.cross_ruber_ablation --results var/cross-ruber-ablation.jsonl --table
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.cross_ruber_evaluation import DEFAULT_DATA, config_overrides, correlation_cells, judged_sets


def run_variant(name: str, settings: list[str], args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from scoring.metrics.cross_ruber import CrossRuberConfig, clear_cross_ruber_cache, load_cross_ruber
    from scoring.metrics.cross_ruber.training import train_cross_ruber
    from scoring.metrics.maude.dialogs import read_dialogs

    corpus = args.data / "dailydialog"
    train = read_dialogs(corpus / "train", corpus_format="dailydialog")
    valid = read_dialogs(corpus / "validation", corpus_format="dailydialog")
    overrides = {"max_train_dialogs": args.dialogs, "epochs": args.epochs, **config_overrides(settings)}
    config = CrossRuberConfig(
        torch_threads=args.threads, device="cpu", validation_examples=args.validation, **overrides
    )
    output = args.work_dir / name
    shutil.rmtree(output, ignore_errors=True)
    started, cpu = time.perf_counter(), time.process_time()
    artifact = train_cross_ruber(
        train, valid, config=config, output_dir=output, cache_dir=args.cache_dir, progress=False
    )
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    timings = json.loads((output / "timings.json").read_text(encoding="utf-8"))
    clear_cross_ruber_cache()
    model = load_cross_ruber(output, device="cpu")
    found: dict[str, Any] = {
        "variant": name,
        "settings": settings,
        "dialogs": args.dialogs,
        "training_examples": timings["training_examples"],
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
        "encoding_seconds": timings["encoding_seconds"],
        "epoch_seconds": timings["epoch_seconds"],
        "results": artifact.config["results"],
        "curve": artifact.curve,
        "sets": {},
    }
    for judged in judged_sets(args.data):
        scores = model.scores(judged.hypotheses, judged.contexts, judged.references).by_metric()
        logits = [float(np.log(v / (1 - v))) for v in scores["cross-ruber-unreferenced"]]  # type: ignore[operator]
        columns: dict[str, Sequence[float | None]] = {**scores, "logit": logits}
        cells = correlation_cells(judged.human, columns, args.resamples)
        found["sets"][judged.name] = {
            metric: {key: cell[key] for key in ("pearson", "pearson_ci", "spearman", "spearman_ci")}
            for metric, cell in cells.items()
        }
    if not args.keep:
        shutil.rmtree(output, ignore_errors=True)
    return found


def print_table(results: Path) -> None:
    rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines() if line.strip()]
    print(
        "| variant | settings | val. acc. (all / pairwise) | acc. per negative | GRADE s_U r / rho | "
        "multiref s_U r / rho | GRADE gmean r | multiref multi gmean r | train s (epochs) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        results_row = row["results"]
        kinds = ", ".join(
            f"{name.removeprefix('validation_accuracy_')} {value:.3f}"
            for name, value in results_row.items()
            if name.startswith("validation_accuracy_")
        )
        grade, multi = row["sets"]["GRADE DailyDialog"], row["sets"]["multiref multi"]
        unreferenced = "cross-ruber-unreferenced"
        print(
            f"| {row['variant']} | {' '.join(row['settings']) or 'defaults'} | "
            f"{results_row['validation_accuracy']:.3f} / {results_row['validation_pairwise_accuracy']:.3f} | {kinds} | "
            f"{grade[unreferenced]['pearson']:.3f} / {grade[unreferenced]['spearman']:.3f} | "
            f"{multi[unreferenced]['pearson']:.3f} / {multi[unreferenced]['spearman']:.3f} | "
            f"{grade['cross-ruber-gmean']['pearson']:.3f} | {multi['cross-ruber-gmean']['pearson']:.3f} | "
            f"{row['wall_seconds']:.0f} (kept {results_row['best_epoch']} of {results_row['epochs_run']}) |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--variant", action="append", default=[], help="NAME[:FIELD=VALUE[:FIELD=VALUE...]]")
    parser.add_argument("--dialogs", type=int, default=2000, help="training dialogs (seeded sample)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--validation", type=int, default=1000, help="validation examples")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/cross-ruber-ablation"))
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/cross-ruber-cache"))
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--keep", action="store_true", help="keep each variant's artifact")
    parser.add_argument("--table", action="store_true", help="print the table of --results and stop")
    args = parser.parse_args()
    if args.table:
        print_table(args.results)
        return
    import torch

    torch.set_num_threads(args.threads)
    done = set()
    if args.results.is_file():
        done = {
            json.loads(line)["variant"]
            for line in args.results.read_text(encoding="utf-8").splitlines()
            if line
        }
    for spec in args.variant:
        name, *settings = spec.split(":")
        if name in done:
            print(f"{name}: already in {args.results}")
            continue
        print(f"{time.strftime('%H:%M:%S')} {name}: {' '.join(settings) or 'defaults'}", flush=True)
        found = run_variant(name, settings, args)
        with args.results.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(found) + "\n")
        unreferenced = {
            set_name: round(cells["cross-ruber-unreferenced"]["pearson"], 3)
            for set_name, cells in found["sets"].items()
        }
        print(
            f"{time.strftime('%H:%M:%S')} {name}: {found['results']} {unreferenced} {found['wall_seconds']} s",
            flush=True,
        )


if __name__ == "__main__":
    main()

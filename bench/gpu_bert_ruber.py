"""Benchmark: BERT-RUBER scoring and training on one device, to compare a GPU with a CPU on
the same data (target: scoring >= 20x faster on the GPU than on the project machine's CPU).

- Scoring: the unreferenced score of the default cell (bert-max-ce; Ghazarian et al. (2019), section 2.1) of the first
  ``--pairs`` (query, reply) pairs of the DailyDialog test split: MiniLM token vectors of every
  distinct text, pooling, and the scorer head, as ``BertRuberModel.unreferenced`` does it.
- Training: ``train_bert_ruber`` of the default cells (all 12, as ``manage.py train_metric bert-ruber``
  trains when no cell is named) on the first ``--train-pairs`` train pairs for ``--epochs`` epochs, with
  ``--validation-pairs`` validation pairs: word2vec, encoding, every cell's epochs and validation.

Each round times scoring, then training (wall and process CPU seconds; CUDA is synchronised before a
clock is read). On CUDA a round also scores with the encoder in float32 (no autocast), interleaved with
the bfloat16 default in alternating order, so that drift hits both alike. Untimed first: loading, one
training run (whose artifact is the model scored) and one scoring pass. On CUDA it then sweeps the
encoder's batch size, and (unless ``--no-compare-cpu``) scores the same pairs with the same artifact on
this machine's CPU in float32, to show what bfloat16 changes (max |diff|, Pearson, Spearman), and scores
the head itself under bfloat16 autocast, to show why it stays float32.

Reads ../shared/data/dailydialog (never copied into the repository); exits non-zero when it is absent.

    .venv/bin/python -m bench.gpu_bert_ruber --device cpu [--rounds 5] [--pairs N] [--json FILE]
    python -m bench.gpu_bert_ruber --device cuda --rounds 5 --json result.json
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from scoring.metrics.bert_ruber import DEFAULT_CELL, BertRuberConfig, load_bert_ruber, train_bert_ruber
from scoring.metrics.bert_ruber.cells import ALL_CELLS
from scoring.metrics.ruber.corpus import DAILYDIALOG, read_corpus

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "dailydialog"
DEFAULT_BATCH_SWEEP = "64,128,256,512,1024,2048,4096"
T = TypeVar("T")


def main(argv: Sequence[str] | None = None) -> None:
    args = _arguments(argv)
    from scoring.metrics.token_cache import TOKEN_CACHE

    # the encoder itself is timed: every call encodes (scoring/metrics/token_cache.py)
    TOKEN_CACHE.max_bytes = 0
    data: Path = args.data
    splits = {split: data / split / f"dialogues_{split}.txt" for split in ("train", "validation", "test")}
    missing = [str(path) for path in splits.values() if not path.is_file()]
    if missing:
        raise SystemExit(
            f"{', '.join(missing)} missing: this benchmark needs DailyDialog in ../shared/data/dailydialog "
            "(or --data FOLDER with train/, validation/, test/)"
        )
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda, but torch sees no CUDA device here")
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    from scoring.metrics.contextual_encoder import minilm_encoder

    test = read_corpus(splits["test"], corpus_format=DAILYDIALOG)[: args.pairs]
    train = read_corpus(splits["train"], corpus_format=DAILYDIALOG)[: args.train_pairs]
    validation = read_corpus(splits["validation"], corpus_format=DAILYDIALOG)[: args.validation_pairs]
    queries, replies = [pair.query for pair in test], [pair.reply for pair in test]
    texts = list(dict.fromkeys([*queries, *replies]))
    config = BertRuberConfig(
        cells=tuple(args.cells),
        epochs=args.epochs,
        device=args.device,
        torch_threads=args.threads,
        corpus_description=f"DailyDialog train, first {len(train)} pairs (bench.gpu_bert_ruber)",
    )
    result: dict[str, Any] = {
        "benchmark": "gpu_bert_ruber",
        "command": " ".join([Path(sys.executable).name, "-m", "bench.gpu_bert_ruber", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "environment": _environment(args.device),
        "data": {
            "scoring_pairs": len(test),
            "distinct_texts": len(texts),
            "training_pairs": len(train),
            "validation_pairs": len(validation),
            "cells": list(config.cells),
            "epochs": config.epochs,
            "cell": args.cell,
        },
    }
    print(_heading(result), flush=True)

    encoders = {"default": minilm_encoder(device=args.device)}
    if args.device == "cuda":
        encoders["fp32"] = minilm_encoder(device=args.device, autocast=False)
    labels = {name: _label(encoder) for name, encoder in encoders.items()}
    result["encoders"] = {
        labels[name]: {"batch_size": encoder.batch_size, "autocast": encoder.autocast_dtype}
        for name, encoder in encoders.items()
    }

    with tempfile.TemporaryDirectory(prefix="gpu-bert-ruber-") as scratch:
        # untimed warm-up: weights, CUDA context and kernels, gensim; its artifact is what is scored
        started = time.perf_counter()
        artifact = train_bert_ruber(
            train,
            validation,
            config=config,
            output_dir=Path(scratch) / "model",
            encoder=encoders["default"],
            progress=False,
        )
        models = {
            name: load_bert_ruber(artifact.path, device=args.device, encoder=encoder)
            for name, encoder in encoders.items()
        }
        for model in models.values():
            model.unreferenced(queries[:256], replies[:256], cell=args.cell)
        print(
            f"warm-up (loading, one training run, scoring): {time.perf_counter() - started:.1f} s", flush=True
        )

        scoring: dict[str, list[tuple[float, float]]] = {labels[name]: [] for name in models}
        scores: dict[str, list[float]] = {}
        training: list[dict[str, Any]] = []
        for round_number in range(1, args.rounds + 1):
            names = list(models) if round_number % 2 else list(reversed(models))
            for name in names:
                found, wall, cpu = _timed(
                    functools.partial(models[name].unreferenced, queries, replies, cell=args.cell)
                )
                scoring[labels[name]].append((wall, cpu))
                scores[labels[name]] = found
            if not args.no_training:
                output = Path(scratch) / f"round-{round_number}"
                _, wall, cpu = _timed(
                    functools.partial(
                        train_bert_ruber,
                        train,
                        validation,
                        config=config,
                        output_dir=output,
                        encoder=encoders["default"],
                        progress=False,
                    )
                )
                stages = json.loads((output / "timings.json").read_text(encoding="utf-8"))
                training.append({"wall_s": wall, "cpu_s": cpu, "stages": stages})
            print(
                f"round {round_number}/{args.rounds}: "
                + ", ".join(f"score {label} {times[-1][0]:.2f} s" for label, times in scoring.items())
                + (f", train {training[-1]['wall_s']:.1f} s" if training else ""),
                flush=True,
            )
        result["scoring"] = {
            label: _summary(times, per=len(test), unit="pairs_per_s") for label, times in scoring.items()
        }
        if training:
            result["training"] = _training_summary(training)
        if args.device == "cuda" and args.batch_sizes:
            result["encoder_batch_sweep"] = _batch_sweep(texts, args.device, args.batch_sizes)
        if args.device == "cuda" and not args.no_compare_cpu:
            result["agreement"] = _agreement(
                artifact.path, queries, replies, args.cell, scores, models["default"]
            )

    _print_table(result)
    text = json.dumps(result, sort_keys=True)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")
    print("JSON " + text)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", choices=("cpu", "cuda"), required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="DailyDialog folder")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (>= 5 for a reported number)")
    parser.add_argument("--pairs", type=int, default=None, help="scoring pairs (default: all test pairs)")
    parser.add_argument("--cell", default=DEFAULT_CELL, help="the cell scored")
    parser.add_argument("--train-pairs", type=int, default=4000)
    parser.add_argument("--validation-pairs", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--cells", nargs="+", default=list(ALL_CELLS), help="cells trained (default: all 12)")
    parser.add_argument("--no-training", action="store_true", help="time scoring only")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument(
        "--batch-sizes",
        type=lambda text: [int(size) for size in text.split(",") if size],
        default=[int(size) for size in DEFAULT_BATCH_SWEEP.split(",")],
        help=f"CUDA only: encoder batch sizes to sweep (default {DEFAULT_BATCH_SWEEP}; '' for none)",
    )
    parser.add_argument("--no-compare-cpu", action="store_true", help="CUDA only: skip the CPU fp32 check")
    parser.add_argument("--json", type=Path, default=None, help="also write the JSON result here")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    return args


def _timed(work: Callable[[], T]) -> tuple[T, float, float]:
    """(result, wall seconds, process CPU seconds) of ``work()``, CUDA synchronised at both ends."""
    _synchronise()
    wall, cpu = time.perf_counter(), time.process_time()
    found = work()
    _synchronise()
    return found, time.perf_counter() - wall, time.process_time() - cpu


def _synchronise() -> None:
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def _label(encoder: Any) -> str:
    dtype = encoder.autocast_dtype
    return f"{encoder.device} {'bf16' if dtype == 'bfloat16' else 'fp32'}"


def _summary(times: Sequence[tuple[float, float]], *, per: int, unit: str) -> dict[str, Any]:
    walls = [wall for wall, _ in times]
    cpus = [cpu for _, cpu in times]
    median = statistics.median(walls)
    return {
        "wall_s": [round(value, 4) for value in walls],
        "cpu_s": [round(value, 4) for value in cpus],
        "median_wall_s": round(median, 4),
        "min_wall_s": round(min(walls), 4),
        "max_wall_s": round(max(walls), 4),
        "median_cpu_s": round(statistics.median(cpus), 4),
        unit: round(per / median, 1),
    }


def _training_summary(rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    summary = _summary([(row["wall_s"], row["cpu_s"]) for row in rounds], per=1, unit="runs_per_s")
    stages: dict[str, list[float]] = {}
    for row in rounds:
        timings = row["stages"]
        stages.setdefault("word2vec_s", []).append(timings["word2vec_seconds"])
        for key in ("bert_inputs_seconds", "word2vec_inputs_seconds"):
            if key in timings:
                stages.setdefault(key.replace("_seconds", "_s"), []).append(timings[key])
        stages.setdefault("cells_s", []).append(
            sum(cell["total_seconds"] for cell in timings["cells"].values())
        )
        for name, cell in timings["cells"].items():
            stages.setdefault(f"cell {name} s", []).append(cell["total_seconds"])
    summary["median_stage_s"] = {name: round(statistics.median(values), 3) for name, values in stages.items()}
    summary["device"] = rounds[0]["stages"].get("device")
    return summary


def _batch_sweep(texts: Sequence[str], device: str, sizes: Sequence[int]) -> list[dict[str, Any]]:
    """Encoder throughput (bf16 autocast) and peak GPU memory per batch size, median of 3 passes."""
    import torch

    from scoring.metrics.contextual_encoder import minilm_encoder

    rows = []
    for size in sizes:
        encoder = minilm_encoder(device=device, batch_size=size)
        encoder.encode_tokens(list(texts[: 2 * size]))
        on_cuda = torch.cuda.is_available() and encoder.device.startswith("cuda")
        if on_cuda:
            torch.cuda.reset_peak_memory_stats()
        walls = [_timed(functools.partial(encoder.encode_tokens, texts))[1] for _ in range(3)]
        median = statistics.median(walls)
        rows.append(
            {
                "batch_size": size,
                "median_wall_s": round(median, 4),
                "sentences_per_s": round(len(texts) / median, 1),
                "peak_gpu_mib": round(torch.cuda.max_memory_allocated() / 2**20, 1) if on_cuda else None,
            }
        )
        print(f"encoder batch {size}: {rows[-1]['sentences_per_s']:.0f} sentences/s", flush=True)
    return rows


def _agreement(
    path: Path,
    queries: Sequence[str],
    replies: Sequence[str],
    cell: str,
    gpu_scores: dict[str, list[float]],
    gpu_model: Any,
) -> dict[str, Any]:
    """GPU scores (bf16 and fp32 encoder) against float32 CPU scores of the same artifact and pairs, and
    the head under bf16 autocast against the head in float32 (both on the GPU's bf16 token vectors)."""
    import torch

    from scoring.metrics.bert_ruber.cells import parse_cell
    from scoring.metrics.bert_ruber.features import encoder_table
    from scoring.metrics.bert_ruber.heads import score_rows
    from scoring.metrics.contextual_encoder import minilm_encoder

    cpu_model = load_bert_ruber(path, device="cpu", encoder=minilm_encoder(device="cpu"))
    cpu_scores, cpu_wall, _ = _timed(lambda: cpu_model.unreferenced(queries, replies, cell=cell))
    reference = np.asarray(cpu_scores, dtype=np.float64)
    found: dict[str, Any] = {
        "reference": f"cpu fp32 ({torch.get_num_threads()} threads, {cpu_wall:.1f} s on this machine's CPU)",
    }
    for label, values in gpu_scores.items():
        found[f"{label} vs cpu fp32"] = _compare(np.asarray(values, dtype=np.float64), reference)

    texts = list(dict.fromkeys([*queries, *replies]))
    row = {text: index for index, text in enumerate(texts)}
    query_rows = np.array([row[text] for text in queries], dtype=np.int64)
    reply_rows = np.array([row[text] for text in replies], dtype=np.int64)
    parsed = parse_cell(cell)
    table = encoder_table(
        texts, gpu_model.encoder, max_length=gpu_model.max_length, with_tokens=not parsed.pooled
    )
    head = gpu_model.scorers[parsed.name]
    batch = gpu_model.settings.scorer_batch_size
    heads: dict[str, list[float]] = {}
    for dtype in (None, "bfloat16"):
        score_rows(head, table, query_rows, reply_rows, device=gpu_model.device, batch_size=batch)
        values, wall, _ = _timed(
            functools.partial(
                score_rows,
                head,
                table,
                query_rows,
                reply_rows,
                device=gpu_model.device,
                batch_size=batch,
                autocast_dtype=dtype,
            )
        )
        heads[dtype or "float32"] = values
        found[f"head {dtype or 'float32'} wall_s"] = round(wall, 5)
    found["head bf16 vs head fp32"] = _compare(
        np.asarray(heads["bfloat16"], dtype=np.float64), np.asarray(heads["float32"], dtype=np.float64)
    )
    return found


def _compare(values: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    difference = np.abs(values - reference)
    return {
        "max_abs_diff": float(difference.max()),
        "mean_abs_diff": float(difference.mean()),
        "pearson": float(np.corrcoef(values, reference)[0, 1]),
        "spearman": float(np.corrcoef(_ranks(values), _ranks(reference))[0, 1]),
    }


def _ranks(values: np.ndarray) -> np.ndarray:
    return np.argsort(np.argsort(values, kind="stable"), kind="stable").astype(np.float64)


def _environment(device: str) -> dict[str, Any]:
    import torch
    import transformers

    found: dict[str, Any] = {
        "machine": platform.machine(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "device": device,
    }
    if device == "cuda":
        properties = torch.cuda.get_device_properties(0)
        found["gpu"] = properties.name
        found["gpu_memory_gib"] = round(properties.total_memory / 2**30, 1)
        found["cuda"] = torch.version.cuda
    return found


def _heading(result: dict[str, Any]) -> str:
    env, data = result["environment"], result["data"]
    where = env.get("gpu") or f"CPU, {env['torch_threads']} torch threads of {env['cpu_count']} cores"
    return (
        f"BERT-RUBER on {env['device']} ({where}), torch {env['torch']}, {env['machine']}: scoring "
        f"{data['scoring_pairs']} DailyDialog test pairs ({data['distinct_texts']} distinct texts, cell "
        f"{data['cell']}); training {len(data['cells'])} cells, {data['epochs']} epoch(s) on "
        f"{data['training_pairs']} train + {data['validation_pairs']} validation pairs"
    )


def _print_table(result: dict[str, Any]) -> None:
    print()
    print(_heading(result))
    print(f"{'what':34} {'median s':>9} {'min s':>8} {'max s':>8} {'CPU s':>8} {'rate':>14}")
    for label, row in result["scoring"].items():
        print(
            f"{'score ' + label:34} {row['median_wall_s']:9.3f} {row['min_wall_s']:8.3f} "
            f"{row['max_wall_s']:8.3f} {row['median_cpu_s']:8.3f} {row['pairs_per_s']:9.0f} pairs/s"
        )
    if "training" in result:
        row = result["training"]
        print(
            f"{'train ' + str(row['device']):34} {row['median_wall_s']:9.2f} {row['min_wall_s']:8.2f} "
            f"{row['max_wall_s']:8.2f} {row['median_cpu_s']:8.2f}"
        )
        for name, value in row["median_stage_s"].items():
            print(f"{'  ' + name:34} {value:9.3f}")
    for row in result.get("encoder_batch_sweep", []):
        print(
            f"{'encoder batch ' + str(row['batch_size']):34} {row['median_wall_s']:9.3f} "
            f"{row['sentences_per_s']:>33.0f} sent/s, peak GPU memory {row['peak_gpu_mib']} MiB"
        )
    for name, value in result.get("agreement", {}).items():
        if isinstance(value, dict):
            print(
                f"{name:34} max |diff| {value['max_abs_diff']:.2e}, mean {value['mean_abs_diff']:.2e}, "
                f"Pearson {value['pearson']:.6f}, Spearman {value['spearman']:.6f}"
            )
        else:
            print(f"{name:34} {value}")


if __name__ == "__main__":
    main()

"""Benchmark: training RUBER (word2vec, then the neural s_U; Tao et al. (2018), sections 3.2 and 4.1) on the full
DailyDialog train split, early stopping on the validation split (benchmark 3: word2vec + s_U in
under 10 minutes on CPU), and the trained s_U's ranking accuracy (true reply vs a random reply) on the
test split.

Reads ../shared/data/dailydialog (never copied into the repository). The artifact goes to --output, or to
a temporary folder that is deleted afterwards.

    .venv/bin/python -m bench.ruber_training [--corpus PATH] [--max-pairs N] [--epochs N] [--output DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import resource
import tempfile
import time
from pathlib import Path

from scoring.metrics.ruber.artifact import TIMINGS_FILE, load_ruber
from scoring.metrics.ruber.corpus import DAILYDIALOG, read_corpus
from scoring.metrics.ruber.ranking import ranking_accuracy, ranking_triples
from scoring.metrics.ruber.training import NEGATIVES, RuberConfig, train_ruber

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "dailydialog"


def main() -> None:
    defaults = RuberConfig()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--corpus", type=Path, default=DEFAULT_DATA / "train", help="DailyDialog training text"
    )
    parser.add_argument("--validation", type=Path, default=DEFAULT_DATA / "validation")
    parser.add_argument("--test", type=Path, default=DEFAULT_DATA / "test")
    parser.add_argument("--max-pairs", type=int, default=None, help="the first N training pairs only")
    parser.add_argument("--epochs", type=int, default=defaults.epochs, help="at most this many s_U epochs")
    parser.add_argument("--output", type=Path, default=None, help="keep the artifact in this folder")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--learning-rate", type=float, default=defaults.learning_rate)
    parser.add_argument("--hidden-size", type=int, default=defaults.hidden_size)
    parser.add_argument("--max-length", type=int, default=defaults.max_length)
    parser.add_argument("--patience", type=int, default=defaults.patience)
    parser.add_argument("--negatives", choices=NEGATIVES, default=defaults.negatives)
    parser.add_argument(
        "--bucket-chunk", type=int, default=defaults.bucket_chunk, help="1: no length buckets"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: every core)")
    parser.add_argument("--device", default="cpu", help="cpu (the benchmark's setting) or cuda")
    args = parser.parse_args()
    for path in (args.corpus, args.validation, args.test):
        if not path.exists():
            raise SystemExit(f"{path} is missing: this benchmark needs ../shared/data/dailydialog")

    pairs = read_corpus(args.corpus, corpus_format=DAILYDIALOG)[: args.max_pairs]
    validation = read_corpus(args.validation, corpus_format=DAILYDIALOG)
    test = read_corpus(args.test, corpus_format=DAILYDIALOG)
    config = dataclasses.replace(
        defaults,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        hidden_size=args.hidden_size,
        max_length=args.max_length,
        patience=args.patience,
        negatives=args.negatives,
        bucket_chunk=args.bucket_chunk,
        threads=args.threads,
        device=args.device,
        corpus_description=f"DailyDialog {args.corpus.name}",
    )
    with tempfile.TemporaryDirectory(prefix="ruber-bench-") as scratch:
        output = args.output or Path(scratch) / "ruber"
        started = time.perf_counter()
        artifact = train_ruber(pairs, validation, config=config, output_dir=output, progress=True)
        total = time.perf_counter() - started
        timings = json.loads((output / TIMINGS_FILE).read_text(encoding="utf-8"))
        model = load_ruber(output, device=args.device)
        test_accuracy = ranking_accuracy(model.unreferenced, ranking_triples(test, seed=0))
    peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

    import torch

    epochs, cpu = timings["epoch_seconds"], timings["epoch_cpu_seconds"]
    best = artifact.config["best_epoch"]
    print(
        f"\nRUBER training on {args.corpus}, {platform.machine()}, torch {torch.__version__}, "
        f"{timings['threads']} threads, device {timings['device']}; batch {config.batch_size}, "
        f"hidden {config.hidden_size}, lr {config.learning_rate}, max length {config.max_length}, "
        f"{config.negatives} negatives, bucket chunk {config.bucket_chunk}"
    )
    rows = [
        ("training pairs", f"{len(pairs)}"),
        ("validation pairs", f"{len(validation)}"),
        ("vocabulary", f"{artifact.config['vocabulary_size']}"),
        ("word2vec s (with tokenizing)", f"{timings['word2vec_seconds']:.1f}"),
        ("  CPU s", f"{timings['word2vec_cpu_seconds']:.1f}"),
        ("s_U s/epoch (mean, with validation)", f"{sum(epochs) / len(epochs):.1f}"),
        ("  CPU s/epoch", f"{sum(cpu) / len(cpu):.1f}"),
        ("epochs run", f"{len(epochs)}"),
        ("best epoch", f"{best}"),
        ("total training s", f"{timings['total_seconds']:.1f}"),
        ("  CPU s", f"{timings['total_cpu_seconds']:.1f}"),
        ("total s (with saving)", f"{total:.1f}"),
        ("validation ranking accuracy", f"{artifact.curve[best - 1]['validation_accuracy']:.4f}"),
        (f"test ranking accuracy ({len(test)} pairs)", f"{test_accuracy:.4f}"),
        ("peak RSS MiB", f"{peak_rss_mib:.0f}"),
    ]
    for label, value in rows:
        print(f"{label:40} {value:>12}")
    print(
        "per epoch: "
        + ", ".join(
            f"{row['validation_accuracy']:.4f} ({s:.0f} s)"
            for row, s in zip(artifact.curve, epochs, strict=True)
        )
    )


if __name__ == "__main__":
    main()

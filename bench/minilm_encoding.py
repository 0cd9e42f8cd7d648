"""Benchmark: MiniLM (all-MiniLM-L6-v2) token encoding speed on DailyDialog utterances, random order vs
length-sorted batches (benchmark 3: target >= 200 sentences/s on CPU).

    .venv/bin/python -m bench.minilm_encoding [--sentences 3000] [--batch-size 64]
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from pathlib import Path

from scoring.metrics.contextual_encoder import minilm_encoder

DEFAULT_DIALOGUES = (
    Path(__file__).resolve().parent.parent.parent
    / "shared"
    / "data"
    / "dailydialog"
    / "test"
    / "dialogues_test.txt"
)


def utterances(path: Path) -> list[str]:
    found: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        found.extend(turn.strip() for turn in line.split("__eou__") if turn.strip())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dialogues", type=Path, default=DEFAULT_DIALOGUES)
    parser.add_argument("--sentences", type=int, default=3000)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    from scoring.metrics.token_cache import TOKEN_CACHE

    # the encoder itself is timed: every call encodes (scoring/metrics/token_cache.py)
    TOKEN_CACHE.max_bytes = 0
    if not args.dialogues.is_file():
        raise SystemExit(f"{args.dialogues} is missing: this benchmark needs ../shared/data/dailydialog")
    import torch

    sentences = utterances(args.dialogues)
    random.Random(0).shuffle(sentences)
    sentences = sentences[: args.sentences]
    print(
        f"MiniLM token encoding, {len(sentences)} DailyDialog test utterances, batch {args.batch_size}, "
        f"{torch.get_num_threads()} torch threads, {platform.machine()}, torch {torch.__version__}"
    )
    print(f"{'batch order':16} {'sentences/s':>12}")
    for label, length_sorted in (("random", False), ("length-sorted", True)):
        encoder = minilm_encoder(batch_size=args.batch_size, length_sorted=length_sorted)
        encoder.encode_tokens(sentences[:64])  # load and warm up outside the timing
        started = time.perf_counter()
        encoder.encode_tokens(sentences)
        print(f"{label:16} {len(sentences) / (time.perf_counter() - started):12.0f}")


if __name__ == "__main__":
    main()

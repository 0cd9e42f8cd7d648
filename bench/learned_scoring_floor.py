"""the learned metrics' scoring cost against its floor, encoding each distinct text once.

Every learned metric that reads all-MiniLM-L6-v2 (BERT-RUBER referenced, BERT-RUBER unreferenced, MaUde)
spends most of its time in that encoder. Its floor is what the encoder alone costs: each distinct text the
metric reads encoded once (one ``encode_tokens`` call, length-sorted batches, the same encoder class and
device settings the metrics use). Each comparison pits

    project: the metric as ``manage.py score_study STUDY --metrics NAME --sync --recompute`` computes it
             (``scoring_run_create(enqueue=False)`` then ``scoring_run_execute``: planning, chunks of
             DIALEVAL_SCORING_CHUNK_SIZE replies, the metric core, every score written to the database)
    floor:   ``minilm_encoder().encode_tokens`` on the distinct texts that metric reads: replies and
             references (BERT-RUBER referenced), queries and replies (BERT-RUBER unreferenced), context turns
             and replies (MaUde)

on N replies of a study (one context per DailyDialog pair, its turn as the context, its reply as the
reference, one system replying with another pair's reply: bench.dailydialog_pairs; a seeded generated
sample, said so, without the corpus) in a temporary SQLite database.

Warm-up: one untimed call of each side (loading MiniLM and the trained models); it also counts the texts
the run put through the model (machine-independent: texts encoded / distinct texts says how much encoder
work the run repeats, e.g. a text encoded once per chunk it occurs in; the process's token cache,
scoring/metrics/token_cache.py, encodes a text once per process). The token cache is emptied before every
call of either side, so that each timing starts from nothing encoded. Then ``--rounds`` rounds
(default 5), each timing every comparison once per side, alternating which side goes first (A B, then
B A), each call measured with ``time.process_time()`` (CPU, every thread of the process) and
``time.perf_counter()`` (wall) after a ``gc.collect()`` (bench.metric_speed's ``run_rounds``). Printed per
metric: median seconds of each side, min / median / max over rounds of the ratio project / floor in CPU
and in wall time, and whether the median CPU ratio is within the issue's 1.5x.

Models: the BERT-RUBER and MaUde artifact folders given (--bert-ruber-model, --maude-model), else the newest
folder of that kind under var/models (what ``train_metric`` / ``train_default_models`` write); a metric
whose model is missing is left out with the command that trains one. BERT-RUBER referenced needs none.

    .venv/bin/python -m bench.learned_scoring_floor [--replies 5000] [--rounds 5] [--threads N]
        [--bert-ruber-model var/models/bert-ruber/<name>-<hash>] [--maude-model var/models/maude/<name>-<hash>]
        [--data ../shared/data/dailydialog] [--only bert-ruber-referenced,bert-ruber-unreferenced,maude]

Run it on a quiet machine: the load averages at the start and the end are printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.dailydialog_pairs import DEFAULT_DAILYDIALOG
from bench.metric_speed import (
    DEFAULT_ROUNDS,
    Comparison,
    Pairs,
    load_pairs,
    only_comparisons,
    run_rounds,
    spread,
)
from bench.scoring_queue import setup_django, study_from_pairs

REPO = Path(__file__).resolve().parent.parent
DEFAULT_REPLIES = 5_000
TARGET = 1.5  # project / floor CPU, at most
BERT_RUBER_UNREFERENCED = "bert-ruber-unreferenced"


@dataclass(frozen=True)
class Learned:
    """One learned metric: the model kind it needs ("" for none) and the texts its encoder reads."""

    name: str
    kind: str
    texts: Callable[[Pairs], list[str]]


LEARNED = [
    Learned(
        "bert-ruber-referenced", "", lambda p: [*p.hypotheses, *(t for refs in p.references for t in refs)]
    ),
    Learned(BERT_RUBER_UNREFERENCED, "bert-ruber", lambda p: [*p.queries, *p.hypotheses]),
    Learned("maude", "maude", lambda p: [*p.queries, *p.hypotheses]),  # the context is the query's one turn
]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rounds", type=int, default=DEFAULT_ROUNDS, help="interleaved rounds (>= 5 to report)"
    )
    parser.add_argument("--replies", type=int, default=DEFAULT_REPLIES)
    parser.add_argument("--data", type=Path, default=DEFAULT_DAILYDIALOG)
    parser.add_argument("--bert-ruber-model", type=Path, help="a BERT-RUBER artifact folder")
    parser.add_argument("--maude-model", type=Path, help="a MaUde artifact folder")
    parser.add_argument("--threads", type=int, help="torch threads (default: as score_study --sync)")
    parser.add_argument("--only", default="", help="comma-separated metric names (default: all)")
    args = parser.parse_args()
    if args.rounds < 1 or args.replies < 2:
        parser.error("--rounds must be at least 1 and --replies at least 2")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be at least 1")

    load_start = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="dialeval-learned-floor-"))
    setup_django(workdir)  # a temporary SQLite database; var/ for everything else stays in workdir
    from scoring.torch_threads import torch_threads_configure, torch_threads_default

    threads = torch_threads_configure(args.threads or torch_threads_default())
    pairs = load_pairs(args.data, args.replies)
    study = study_from_pairs(pairs.queries, pairs.references, pairs.hypotheses)
    folders = {"bert-ruber": args.bert_ruber_model, "maude": args.maude_model}
    registered, missing = register_models(folders)
    comparisons, distinct = build_comparisons(
        study, pairs, [m for m in LEARNED if m.kind in ["", *registered]]
    )
    comparisons = only_comparisons(parser, comparisons, args.only)

    print(
        f"# Learned metrics' scoring against the floor (each distinct text encoded once), {len(pairs.hypotheses):,} replies"
    )
    print(f"command: python -m bench.learned_scoring_floor {shlex.join(sys.argv[1:])}".rstrip())
    print(f"replies: {pairs.description}")
    print_machine(load_start, threads)
    for kind, path in registered.items():
        print(f"{kind} model: {path}")
    for line in missing:
        print(f"left out: {line}")
    if args.rounds < DEFAULT_ROUNDS:
        print(
            f"NOTE: {args.rounds} round(s), fewer than {DEFAULT_ROUNDS}: a sanity check, not figures to report"
        )

    encoded: dict[str, int] = {}
    for comparison in comparisons:  # warm-up: loads MiniLM and the models; counts the texts the run encodes
        with counting_encoded_texts() as count:
            comparison.run_project()
        encoded[comparison.key] = count[0]
        comparison.run_peer()
    run_rounds(comparisons, args.rounds)

    print()
    print_table(comparisons, distinct, encoded)
    end = os.getloadavg()
    print(f"\nload average at end: {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")


def default_model_folder(kind: str) -> Path | None:
    """The newest artifact folder of ``kind`` under the repository's var/models (one with its hash file)."""
    from scoring.metrics.ruber.artifact import HASH_FILE

    root = REPO / "var" / "models" / kind
    found = [path for path in root.glob("*") if (path / HASH_FILE).is_file()] if root.is_dir() else []
    return max(found, key=lambda path: path.stat().st_mtime) if found else None


def register_models(folders: dict[str, Path | None]) -> tuple[dict[str, Path], list[str]]:
    """Register each kind's artifact (given, else found under var/models) as the default model of the
    temporary database; the kinds registered, and a line per kind left out saying how to train one."""
    from scoring.metrics.bert_ruber.artifact import load_bert_ruber
    from scoring.metrics.maude import load_maude
    from scoring.trained_model_services import train_hint, trained_model_register

    loaders: dict[str, Callable[[Path], Any]] = {
        "bert-ruber": lambda path: load_bert_ruber(path, device="cpu"),
        "maude": lambda path: load_maude(path),
    }
    registered: dict[str, Path] = {}
    missing: list[str] = []
    for kind, given in folders.items():
        path = given or default_model_folder(kind)
        if path is None:
            missing.append(
                f"the {kind} metrics: no model given (--{kind}-model) or under var/models/{kind}; {train_hint(kind)}"
            )
            continue
        if not path.is_dir():
            raise SystemExit(f"--{kind}-model {path}: no such folder")
        artifact = loaders[kind](path)
        trained_model_register(
            name=f"bench-{kind}",
            kind=kind,
            path=path,
            content_hash=artifact.content_hash,
            language="en",
            corpus=str(path),
            config=artifact.config,
            curve=getattr(artifact, "curve", {}),
            make_default=True,
        )
        registered[kind] = path
    return registered, missing


def build_comparisons(
    study: Any, pairs: Pairs, metrics: Sequence[Learned]
) -> tuple[list[Comparison], dict[str, int]]:
    """One comparison per metric (the score_study --sync path against the floor), and each metric's count
    of distinct texts."""
    from scoring.metrics.contextual_encoder import minilm_encoder
    from scoring.metrics.token_cache import TOKEN_CACHE
    from scoring.services import scoring_run_create, scoring_run_execute

    encoder = minilm_encoder()
    comparisons: list[Comparison] = []
    distinct: dict[str, int] = {}
    for metric in metrics:
        texts = list(dict.fromkeys(metric.texts(pairs)))
        distinct[metric.name] = len(texts)

        def project(name: str = metric.name) -> list[tuple[float, ...]]:
            TOKEN_CACHE.clear()  # each timing starts from nothing encoded (the floor's too)
            run = scoring_run_create(
                study=study, metrics=[name], references="single", enqueue=False, recompute=True
            )
            run = scoring_run_execute(run_id=run.pk)
            if run.status != "succeeded":
                raise SystemExit(f"{name}: run {run.pk} {run.status}: {run.error}")
            return []

        def floor(texts: list[str] = texts) -> list[tuple[float, ...]]:
            TOKEN_CACHE.clear()
            encoder.encode_tokens(texts)
            return []

        comparisons.append(
            Comparison(metric.name, metric.name, "MiniLM on each distinct text once", TARGET, project, floor)
        )
    return comparisons, distinct


@contextmanager
def counting_encoded_texts() -> Iterator[list[int]]:
    """Counts the texts any ContextualEncoder runs through the model inside the block (untimed use): those
    the process's token cache (scoring/metrics/token_cache.py) did not have."""
    from scoring.metrics.contextual_encoder import ContextualEncoder

    count = [0]
    original = ContextualEncoder._encode

    def encode(self: ContextualEncoder, sentences: Sequence[str]) -> Any:
        count[0] += len(sentences)
        return original(self, sentences)

    ContextualEncoder._encode = encode  # type: ignore[method-assign]
    try:
        yield count
    finally:
        ContextualEncoder._encode = original  # type: ignore[method-assign]


def print_table(comparisons: list[Comparison], distinct: dict[str, int], encoded: dict[str, int]) -> None:
    print(
        "| metric | distinct texts | texts encoded by the run (x distinct) | run CPU s | floor CPU s "
        "| run wall s | floor wall s | run/floor CPU (min / median / max) | run/floor wall (min / median / max) "
        "| target (CPU) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|---|---|")
    for comparison in comparisons:
        cpu = [p / f for p, f in zip(comparison.cpu["project"], comparison.cpu["peer"], strict=True)]
        wall = [p / f for p, f in zip(comparison.wall["project"], comparison.wall["peer"], strict=True)]
        median = statistics.median(cpu)
        target = f"<= {TARGET}x: {'met' if median <= TARGET else 'NOT met'}"
        count, texts = encoded[comparison.key], distinct[comparison.key]
        print(
            f"| {comparison.project} | {texts:,} | {count:,} ({count / max(1, texts):.2f}x) "
            f"| {statistics.median(comparison.cpu['project']):.2f} | {statistics.median(comparison.cpu['peer']):.2f} "
            f"| {statistics.median(comparison.wall['project']):.2f} | {statistics.median(comparison.wall['peer']):.2f} "
            f"| {spread(cpu)} | {spread(wall)} | {target} |"
        )
    rounds = len(comparisons[0].cpu["project"]) if comparisons else 0
    print(
        f"\nSeconds are medians over {rounds} round(s); ratios are per round, run / floor (1.0: the run costs "
        "only its encoder's floor). The run's time includes planning, the metric's heads and the database "
        "writes; texts encoded were counted on the untimed warm-up run."
    )


def print_machine(load: tuple[float, float, float], threads: int) -> None:
    import datetime
    from importlib.metadata import version

    from django.conf import settings

    cores = len(os.sched_getaffinity(0))
    print(
        f"machine: {platform.node()}, {platform.machine()}, {cores} usable core(s); Python "
        f"{platform.python_version()}, torch {version('torch')}, transformers {version('transformers')}; "
        f"{threads} torch thread(s); chunks of {settings.DIALEVAL_SCORING_CHUNK_SIZE} replies; "
        f"{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}"
    )
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()

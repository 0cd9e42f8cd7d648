"""What the speed and memory benchmarks (benchmarks 3 and 4) score: 10,000 DailyDialog pairs,
and RUBER's referenced score s_R (Tao et al., 2018, section 3.1) with or without a trained model.

Pairs: every consecutive (turn i, turn i + 1) of each dialogue of ../shared/data/dailydialog/test, the
query being turn i and the reference turn i + 1. The test split has 6,740 such pairs, so the first
pairs of the validation split, in file order, make up the rest (``BenchPairs.description`` says how
many came from where). The hypothesis to score is the reference of another pair, drawn by a seeded
permutation without fixed points, so scores are not trivially perfect.

s_R: when no RUBER artifact is given, its word vectors come from a quick word2vec (50 dimensions, the
paper's setting) trained on the utterances of the DailyDialog train split and cached in the system's
temporary folder (derived from licensed data: never inside the repository).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoring.metrics.registry import available_metric_names, compute_metrics, metric_spec
from scoring.metrics.ruber.corpus import dailydialog_pairs, utterances
from scoring.metrics.ruber.scores import referenced_scores
from scoring.metrics.tokenize import tokenize
from scoring.metrics.word_vectors import WordVectors

DEFAULT_DAILYDIALOG = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "dailydialog"
DEFAULT_PAIRS = 10_000
SEED = 0
SR_NAME = "ruber-referenced"
# Metric names that the registry can only compute with a trained model: which model (the key of
# compute_metrics' ``models``). bert-ruber-referenced needs none (MiniLM is installed).
RUBER_MODEL = "ruber"
BERT_RUBER_MODEL = "bert-ruber"


@dataclass(frozen=True)
class BenchPairs:
    queries: list[str]
    references: list[list[str]]  # one reference per item (the single-reference setting)
    hypotheses: list[str]
    description: str

    def __len__(self) -> int:
        return len(self.hypotheses)

    def head(self, count: int) -> BenchPairs:
        return BenchPairs(
            self.queries[:count], self.references[:count], self.hypotheses[:count], f"first {count}"
        )


def require_data(data: Path) -> None:
    """Exit with a clear message when the DailyDialog folder is absent (it is never in the repository)."""
    if not (data / "test" / "dialogues_test.txt").is_file():
        raise SystemExit(f"{data} is missing: this benchmark needs ../shared/data/dailydialog")


def benchmark_pairs(
    data: Path = DEFAULT_DAILYDIALOG, *, count: int = DEFAULT_PAIRS, seed: int = SEED
) -> BenchPairs:
    """``count`` (query, reference, hypothesis) items: test pairs first, then validation pairs."""
    require_data(data)
    found: list[tuple[str, str]] = []
    taken: list[str] = []
    for split in ("test", "validation"):
        path = data / split / f"dialogues_{split}.txt"
        if len(found) >= count or not path.is_file():
            continue
        pairs = dailydialog_pairs(path.read_text(encoding="utf-8").splitlines())
        use = pairs[: count - len(found)]
        found.extend((pair.query, pair.reply) for pair in use)
        taken.append(f"{len(use)} of {len(pairs)} {split} pairs")
    if len(found) < 2:
        raise SystemExit(f"{data}: fewer than 2 DailyDialog pairs found")
    order = list(range(len(found)))
    rng = random.Random(seed)
    rng.shuffle(order)
    for i in range(len(order)):  # no item scores its own reference
        if order[i] == i:
            j = (i + 1) % len(order)
            order[i], order[j] = order[j], order[i]
    return BenchPairs(
        queries=[query for query, _ in found],
        references=[[reference] for _, reference in found],
        hypotheses=[found[order[i]][1] for i in range(len(found))],
        description=" + ".join(taken) + f" (hypothesis = another pair's reply, seed {seed})",
    )


def registry_accepts_models() -> bool:
    """Whether this version of ``compute_metrics`` takes the trained models (``models=``)."""
    return "models" in inspect.signature(compute_metrics).parameters


def required_model(name: str) -> str | None:
    """The model a registered metric needs ("ruber", "bert-ruber"), or None for the model-free ones.

    The spec's ``model_kind`` says so where the registry has it; otherwise the name does.
    """
    spec = metric_spec(name)
    if hasattr(spec, "model_kind"):
        return str(spec.model_kind) or None
    if name.startswith("bert-ruber-") and name != "bert-ruber-referenced":
        return BERT_RUBER_MODEL
    if name.startswith(("ruber-", "vector-pool-")):
        return RUBER_MODEL
    return None


def runnable_metrics(models: dict[str, Path]) -> tuple[list[str], list[str]]:
    """(registered metrics this run can compute, the others with the reason they are left out)."""
    runnable: list[str] = []
    skipped: list[str] = []
    accepts = registry_accepts_models()
    for name in available_metric_names():
        model = required_model(name)
        if model is None:
            runnable.append(name)
        elif not accepts:
            skipped.append(f"{name} (compute_metrics takes no models yet)")
        elif model not in models:
            skipped.append(f"{name} (no --{model}-model given)")
        else:
            runnable.append(name)
    return runnable, skipped


def compute(
    names: Sequence[str], pairs: BenchPairs, models: dict[str, Path]
) -> dict[str, list[float | None]]:
    """``compute_metrics`` on ``pairs`` (English), passing ``models`` only when the registry takes them."""
    call: Callable[..., dict[str, list[float | None]]] = compute_metrics
    if registry_accepts_models() and any(required_model(name) for name in names):
        folders = {kind: str(path) for kind, path in models.items()}
        return call(names, pairs.hypotheses, pairs.references, pairs.queries, "en", models=folders)
    return call(names, pairs.hypotheses, pairs.references, pairs.queries, "en")


@dataclass(frozen=True)
class ReferencedScorer:
    """s_R outside the registry (until it registers ``ruber-referenced``): a label and a batch scorer."""

    label: str
    score: Callable[[Sequence[str], Sequence[Sequence[str]]], list[float | None]]


def sr_through_registry(models: dict[str, Path]) -> bool:
    """Whether s_R is measured as the registry's ``ruber-referenced`` (needs it, ``models=`` and a model)."""
    return SR_NAME in available_metric_names() and registry_accepts_models() and RUBER_MODEL in models


def sr_scorer(*, data: Path, ruber_model: Path | None) -> ReferencedScorer:
    """s_R from the RUBER artifact ``ruber_model``, or over quick word2vec vectors (see module docstring).

    Building it is the metric's load time: loading the artifact, or training (or reading the cached)
    word2vec.
    """
    if ruber_model is not None:
        from scoring.metrics.ruber.artifact import load_ruber

        model = load_ruber(ruber_model, device="cpu")
        return ReferencedScorer(f"s_R (RUBER artifact {model.content_hash[:12]})", model.referenced)
    vectors, how = quick_word2vec(data)

    def score(replies: Sequence[str], references: Sequence[Sequence[str]]) -> list[float | None]:
        return referenced_scores(
            [tokenize(reply) for reply in replies],
            [[tokenize(text) for text in texts] for texts in references],
            vectors,
        ).values

    return ReferencedScorer(f"s_R (word2vec 50d, DD train, {how})", score)


def quick_word2vec(data: Path, *, seed: int = SEED) -> tuple[WordVectors, str]:
    """word2vec on the DailyDialog train utterances, trained once and then read from the cache.

    Returns the vectors and "trained" or "cached".
    """
    from scoring.metrics.ruber.word2vec import Word2VecConfig, train_word2vec

    train = data / "train" / "dialogues_train.txt"
    config = Word2VecConfig()
    stat = train.stat()
    key = hashlib.sha256(f"{stat.st_size} {stat.st_mtime_ns} {config} {seed}".encode()).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / "dialeval-bench" / f"word2vec-{key}"
    if (cache / "vectors.npy").is_file() and (cache / "words.json").is_file():
        words = json.loads((cache / "words.json").read_text(encoding="utf-8"))
        matrix = np.load(cache / "vectors.npy")
        return WordVectors({word: row for row, word in enumerate(words)}, matrix, name="word2vec"), "cached"
    sentences = utterances(dailydialog_pairs(train.read_text(encoding="utf-8").splitlines()))
    vectors = train_word2vec([tokenize(text) for text in sentences], config=config, seed=seed)
    cache.mkdir(parents=True, exist_ok=True)
    words = sorted(vectors.vocabulary, key=vectors.vocabulary.__getitem__)
    np.save(cache / "vectors.npy", vectors.matrix)
    (cache / "words.json").write_text(json.dumps(words, ensure_ascii=False), encoding="utf-8")
    return vectors, "trained"

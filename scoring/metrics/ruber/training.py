"""Training RUBER on query-reply pairs (Tao et al., 2018, sections 3.1-3.2 and 4.1): word2vec, then s_U.

1. word2vec (gensim) on the corpus's utterances, tokenized (section 4.1; 50 dimensions by default).
2. s_U (:mod:`.unreferenced_model`) by negative sampling (section 3.2): for every pair (q, r) of a
   shuffled epoch, the reply r- of another training pair; loss J = max(0, margin - s_U(q, r) +
   s_U(q, r-)) (eq. 3), averaged over a mini-batch; Adam over all parameters, embeddings included.
3. Early stopping on the validation pairs' ranking accuracy (fixed, seeded negatives): training stops
   after ``patience`` epochs without improvement and the best epoch's weights are kept.

Speed (benchmark 3: word2vec + s_U on DailyDialog's 76k training pairs in under 10 minutes on
2 CPU cores). The model is the paper's; only how batches are formed changes:

- Length-bucketed batches (:func:`length_bucketed_batches`): each epoch shuffles the pairs, sorts them
  by query length inside chunks of ``bucket_chunk`` batches, cuts the chunks into batches and shuffles
  the batches. The order stays random at the scale of a chunk, while a batch's GRU runs about as many
  steps as its sentences are long instead of as long as its longest sentence.
- In-batch negatives (``negatives="in-batch"``, the default): r- of the k-th pair of a batch is the
  reply of the pair ``shift`` places further on (cyclically, ``shift`` drawn in 1..B-1 per batch), so
  each reply vector is computed once and serves as a positive and as a negative; a third GRU pass per
  batch is saved. r- is still "a random reply in the training set" (section 3.2): the batch is a random
  draw, every reply is a negative exactly once per epoch, and never for its own pair. Batches are
  sorted by the *query's* length, not the reply's, so that r- is not forced to have r's length (a
  sort by reply length would hide the length cue a random negative carries). ``negatives="random"``
  draws r- from the whole training set and encodes it separately, as before (slower).
- Larger batches (512, with Adam's learning rate 2e-3) and torch using every core the process may use
  (``threads``; torch's default is the machine's physical core count). On the full DailyDialog train
  split (2 cores, quiet machine, 2026-11-22) batch 512 / lr 2e-3 ran an epoch in the same ~57 s as
  256 / 1e-3 and reached 0.867 validation ranking accuracy at epoch 8 where 256 / 1e-3 had 0.853, and
  0.870 after 10 epochs (589.6 s for word2vec + 10 epochs; docs/benchmarks.md).

Choices the paper leaves open (documented in ``config.json``): margin 0.5, GRU hidden size 128 per
direction (the paper gives none for s_U), MLP hidden 128, Adam learning rate 2e-3, batch 512, sentences
truncated to 40 tokens (97% of DailyDialog training replies are shorter: 95th percentile 34 tokens).
The paper trains on 1.4M Douban pairs.

Determinism: fixed seeds (Python, torch, gensim with one worker); timings.json records the thread
count. On CUDA, GRU kernels may differ in the last bits between runs.

The seeds, the thread setting, early stopping and the artifact's files are BERT-RUBER's and MaUde's too
(:mod:`scoring.metrics.training_loop`, :mod:`scoring.metrics.artifacts`); the loop itself is RUBER's own
(embeddings fine-tuned, a batch's mean loss averaged per batch, reports without a cell).

``on_progress`` (:mod:`scoring.metrics.training_progress`) hears of each word2vec epoch, each batch and
each epoch's validation figures; raising ``TrainingCancelled`` from it stops the training.
"""

from __future__ import annotations

import dataclasses
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.metrics.artifacts import model_device, write_hash, write_shared_files
from scoring.metrics.ruber.artifact import WEIGHTS_FILE, RuberArtifact, artifact_hash
from scoring.metrics.ruber.corpus import CorpusError, QueryReplyPair, training_provenance, utterances
from scoring.metrics.ruber.ranking import negative_indices
from scoring.metrics.ruber.word2vec import Word2VecConfig, train_word2vec
from scoring.metrics.tokenize import tokenize, tokenizer_name
from scoring.metrics.training_loop import EarlyStopping, seconds_since, seed_generators, training_threads
from scoring.metrics.training_progress import (
    BATCH_STAGE,
    EPOCH_STAGE,
    ProgressCallback,
    TrainingReport,
    report_progress,
    word2vec_progress,
)
from scoring.metrics.word_vectors import WordVectors

ARTIFACT_FORMAT = 1
IN_BATCH = "in-batch"
RANDOM = "random"
NEGATIVES = (IN_BATCH, RANDOM)


@dataclass(frozen=True)
class RuberConfig:
    word2vec: Word2VecConfig = field(default_factory=Word2VecConfig)
    hidden_size: int = 128
    mlp_hidden: int = 128
    margin: float = 0.5  # Δ of eq. 3; the paper does not give its value
    learning_rate: float = 2e-3
    batch_size: int = 512
    max_length: int = 40
    epochs: int = 10
    patience: int = 2
    seed: int = 0
    language: str = "en"
    negatives: str = IN_BATCH  # IN_BATCH or RANDOM (see the module docstring)
    bucket_chunk: int = 50  # batches per length-sorted chunk; 1: no length bucketing
    device: str | None = None  # None: CUDA when available, else CPU
    threads: int | None = None  # CPU threads for torch; None: every core this process may use
    corpus_description: str = ""


def length_bucketed_batches(
    lengths: Sequence[int], *, batch_size: int, chunk_batches: int, generator: random.Random
) -> list[list[int]]:
    """One epoch's batches of indices: a random order, sorted by length inside chunks of
    ``chunk_batches`` batches, cut into batches, the batches shuffled. No batch has a single item when
    there are at least 2 and ``batch_size`` >= 2 (in-batch negatives need another pair): a lone last item
    joins the batch before.
    """
    order = list(range(len(lengths)))
    generator.shuffle(order)
    chunk = batch_size * max(1, chunk_batches)
    batches: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda index: lengths[index])
        batches.extend(part[i : i + batch_size] for i in range(0, len(part), batch_size))
    if len(batches) > 1 and len(batches[-1]) == 1:
        batches[-2].extend(batches.pop())
    generator.shuffle(batches)
    return batches


def train_ruber(
    pairs: Sequence[QueryReplyPair],
    validation_pairs: Sequence[QueryReplyPair],
    *,
    config: RuberConfig,
    output_dir: Path,
    progress: bool = True,
    on_progress: ProgressCallback | None = None,
) -> RuberArtifact:
    """Train word2vec and s_U on ``pairs``, stop early on ``validation_pairs``, save to ``output_dir``;
    ``on_progress`` gets a report per word2vec epoch, batch and epoch (and may raise to stop)."""
    if config.negatives not in NEGATIVES:
        raise ValueError(f"unknown negatives {config.negatives!r}; known: {', '.join(NEGATIVES)}")
    if config.negatives == IN_BATCH and config.batch_size < 2:
        raise ValueError(f"batch_size {config.batch_size}: in-batch negatives need batches of at least 2")
    if len(pairs) < 2:
        raise CorpusError(f"{len(pairs)} training pairs; training needs at least 2")
    if len(validation_pairs) < 2:
        raise CorpusError(f"{len(validation_pairs)} validation pairs; early stopping needs at least 2")
    device = model_device(config.device)
    # torch's default is the physical core count of the machine, not the cores this process may use
    threads = (config.threads or len(os.sched_getaffinity(0))) if device.type == "cpu" else None
    with training_threads(threads):
        return _train(
            pairs,
            validation_pairs,
            config=config,
            output_dir=Path(output_dir),
            device=device,
            progress=progress,
            on_progress=on_progress,
        )


@dataclass(frozen=True)
class _Encoded:
    """The pairs as token ids: the training pairs' queries and replies padded (with their lengths), the
    batches' sort key, and the validation pairs' queries, replies and fixed negatives."""

    queries: tuple[Any, Any]
    replies: tuple[Any, Any]
    bucket_lengths: list[int]  # the query's length (see the module docstring for why not the reply's)
    valid_queries: list[list[int]]
    valid_replies: list[list[int]]
    valid_negatives: list[list[int]]


def _train(
    pairs: Sequence[QueryReplyPair],
    validation_pairs: Sequence[QueryReplyPair],
    *,
    config: RuberConfig,
    output_dir: Path,
    device: Any,
    progress: bool,
    on_progress: ProgressCallback | None = None,
) -> RuberArtifact:
    import torch

    output_dir.mkdir(parents=True, exist_ok=True)
    timings: dict[str, Any] = {"threads": torch.get_num_threads()}
    seed_generators(config.seed)
    torch.manual_seed(config.seed)

    started, cpu_started = time.perf_counter(), time.process_time()
    tokenized = _cached_tokenizer(config.language)
    vectors = _trained_vectors(pairs, tokenized, config, timings, on_progress)
    data = _encoded(pairs, validation_pairs, tokenized, vectors, config)

    model = _scorer(vectors, config, device)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    shuffler = random.Random(config.seed)
    generator = torch.Generator().manual_seed(config.seed)

    curve: list[dict[str, float]] = []
    epoch_seconds: list[float] = []
    epoch_cpu_seconds: list[float] = []  # CPU time of this process: less noisy on a shared machine
    stopping = EarlyStopping(patience=config.patience, higher_is_better=True)
    for epoch in range(1, config.epochs + 1):
        epoch_started, epoch_cpu_started = time.perf_counter(), time.process_time()
        train_loss, steps = _train_epoch(
            model,
            optimiser,
            data,
            config,
            epoch=epoch,
            random_draws=(shuffler, generator),
            device=device,
            progress=progress,
            on_progress=on_progress,
        )
        accuracy, valid_loss = _validate(model, data, config, device)
        curve.append(_curve_row(epoch, train_loss, accuracy, valid_loss))
        epoch_seconds.append(seconds_since(epoch_started))
        epoch_cpu_seconds.append(round(time.process_time() - epoch_cpu_started, 3))
        report = TrainingReport(
            EPOCH_STAGE,
            epoch=epoch,
            epochs=config.epochs,
            step=steps,
            steps=steps,
            loss=train_loss,
            validation_accuracy=accuracy,
            validation_loss=valid_loss,
        )
        _report_epoch(report, epoch_seconds[-1], progress=progress, on_progress=on_progress)
        if stopping.should_stop(accuracy, model):
            break
    timings.update(
        epoch_seconds=epoch_seconds,
        epoch_cpu_seconds=epoch_cpu_seconds,
        total_seconds=seconds_since(started),
        total_cpu_seconds=round(time.process_time() - cpu_started, 3),
        device=str(device),
    )

    settings = _config_json(config, pairs, validation_pairs, vocabulary_size=len(vectors))
    settings["best_epoch"] = max(curve, key=lambda row: row["validation_accuracy"])["epoch"]
    write_shared_files(output_dir, config=settings, vectors=vectors, curve=curve, timings=timings)
    torch.save(stopping.state, output_dir / WEIGHTS_FILE)
    content_hash = write_hash(output_dir, artifact_hash)
    return RuberArtifact(path=output_dir, content_hash=content_hash, config=settings, curve=curve)


def _scorer(vectors: WordVectors, config: RuberConfig, device: Any) -> Any:
    """s_U with its embeddings initialised from word2vec (drawn from torch's seeded global generator)."""
    from scoring.metrics.ruber.unreferenced_model import UnreferencedScorer

    model = UnreferencedScorer(
        vocabulary_size=len(vectors),
        embedding_dim=vectors.dimension,
        hidden_size=config.hidden_size,
        mlp_hidden=config.mlp_hidden,
    )
    model.initialise_embeddings(vectors.matrix)
    model.to(device)
    return model


def _curve_row(epoch: int, train_loss: float, accuracy: float, valid_loss: float) -> dict[str, float]:
    """An epoch's row of the curve, rounded to 6 decimals (early stopping compares the unrounded figures)."""
    return {
        "epoch": epoch,
        "train_loss": round(train_loss, 6),
        "validation_accuracy": round(accuracy, 6),
        "validation_loss": round(valid_loss, 6),
    }


def _report_epoch(
    report: TrainingReport, seconds: float, *, progress: bool, on_progress: ProgressCallback | None
) -> None:
    """An epoch's figures to ``on_progress`` and, with ``progress``, under the tqdm bars."""
    from tqdm import tqdm

    report_progress(on_progress, report)
    if progress:
        tqdm.write(
            f"epoch {report.epoch}: train loss {report.loss:.4f}, validation accuracy "
            f"{report.validation_accuracy:.4f} ({seconds:.0f} s)"
        )


def _cached_tokenizer(language: str) -> Callable[[str], list[str]]:
    """``tokenize`` in ``language``, each distinct text tokenized once (DailyDialog turns repeat)."""
    tokens: dict[str, list[str]] = {}

    def tokenized(text: str) -> list[str]:
        found = tokens.get(text)
        if found is None:
            found = tokens[text] = tokenize(text, language)
        return found

    return tokenized


def _trained_vectors(
    pairs: Sequence[QueryReplyPair],
    tokenized: Callable[[str], list[str]],
    config: RuberConfig,
    timings: dict[str, Any],
    on_progress: ProgressCallback | None,
) -> WordVectors:
    """word2vec on the corpus's tokenized utterances (section 4.1), with the seconds each stage took."""
    started, cpu_started = time.perf_counter(), time.process_time()
    sentences = [tokenized(text) for text in utterances(pairs)]
    timings["tokenize_seconds"] = seconds_since(started)
    vectors = train_word2vec(
        sentences,
        config=config.word2vec,
        seed=config.seed,
        on_epoch=word2vec_progress(on_progress, epochs=config.epochs, cells=0),
    )
    if len(vectors) == 0:
        raise CorpusError(
            f"no word occurs {config.word2vec.min_count} times in the corpus; word2vec is empty"
        )
    timings["word2vec_seconds"] = seconds_since(started)
    timings["word2vec_cpu_seconds"] = round(time.process_time() - cpu_started, 3)
    return vectors


def _encoded(
    pairs: Sequence[QueryReplyPair],
    validation_pairs: Sequence[QueryReplyPair],
    tokenized: Callable[[str], list[str]],
    vectors: WordVectors,
    config: RuberConfig,
) -> _Encoded:
    from scoring.metrics.ruber.unreferenced_model import pad_all, token_ids

    def encode(texts: Sequence[str]) -> list[list[int]]:
        return [
            token_ids(tokenized(text), vectors.vocabulary, max_length=config.max_length) for text in texts
        ]

    train_queries = encode([pair.query for pair in pairs])
    queries = pad_all(train_queries)
    replies = pad_all(encode([pair.reply for pair in pairs]))
    valid_queries = encode([pair.query for pair in validation_pairs])
    valid_replies = encode([pair.reply for pair in validation_pairs])
    valid_negatives = [valid_replies[j] for j in negative_indices(len(validation_pairs), seed=config.seed)]
    return _Encoded(
        queries=queries,
        replies=replies,
        bucket_lengths=[len(query) for query in train_queries],
        valid_queries=valid_queries,
        valid_replies=valid_replies,
        valid_negatives=valid_negatives,
    )


def _train_epoch(
    model: Any,
    optimiser: Any,
    data: _Encoded,
    config: RuberConfig,
    *,
    epoch: int,
    random_draws: tuple[random.Random, Any],
    device: Any,
    progress: bool,
    on_progress: ProgressCallback | None,
) -> tuple[float, int]:
    """One epoch of s_U by negative sampling (eq. 3) on length-bucketed batches; the mean of the batches'
    losses and the number of batches. ``random_draws``: the batches' shuffler and torch's generator of
    the negatives."""
    import torch
    from tqdm import tqdm

    from scoring.metrics.ruber.unreferenced_model import take

    shuffler, generator = random_draws
    (q_padded, q_lengths), (r_padded, r_lengths) = data.queries, data.replies
    count = len(data.bucket_lengths)
    model.train()
    batches = length_bucketed_batches(
        data.bucket_lengths,
        batch_size=config.batch_size,
        chunk_batches=config.bucket_chunk,
        generator=shuffler,
    )
    total = 0.0
    bar = tqdm(batches, desc=f"s_U epoch {epoch}", disable=not progress, leave=False)
    for number, batch in enumerate(bar, start=1):
        rows = torch.tensor(batch, dtype=torch.long)
        query = model.encode_query(*take(q_padded, q_lengths, rows, device))
        replies = model.encode_reply(*take(r_padded, r_lengths, rows, device))
        positive = model.match(query, replies)
        if config.negatives == IN_BATCH:
            # r-: the reply of the pair `shift` places further on in the batch, never the pair's own
            shift = int(torch.randint(1, len(batch), (1,), generator=generator))
            negative = model.match(query, replies.roll(shift, dims=0))
        else:
            # r-: the reply of a random other training pair (offset 1..n-1), encoded separately
            offsets = torch.randint(1, count, (len(batch),), generator=generator)
            others = (rows + offsets) % count
            negative = model.match(query, model.encode_reply(*take(r_padded, r_lengths, others, device)))
        loss = torch.clamp(config.margin - positive + negative, min=0.0).mean()  # eq. 3
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        total += float(loss.item())
        if number % 20 == 0:
            bar.set_postfix(loss=f"{total / number:.4f}", refresh=False)
        report_progress(
            on_progress,
            TrainingReport(
                BATCH_STAGE,
                epoch=epoch,
                epochs=config.epochs,
                step=number,
                steps=len(batches),
                loss=total / number,
            ),
        )
    bar.close()
    return total / len(batches), len(batches)


def _validate(model: Any, data: _Encoded, config: RuberConfig, device: Any) -> tuple[float, float]:
    """The validation pairs' ranking accuracy (the true reply above its fixed negative) and hinge loss."""
    from scoring.metrics.ruber.unreferenced_model import score_pairs

    true_scores = score_pairs(model, data.valid_queries, data.valid_replies, device=device)
    false_scores = score_pairs(model, data.valid_queries, data.valid_negatives, device=device)
    accuracy = sum(t > f for t, f in zip(true_scores, false_scores, strict=True)) / len(true_scores)
    valid_loss = sum(
        max(0.0, config.margin - t + f) for t, f in zip(true_scores, false_scores, strict=True)
    ) / len(true_scores)
    return accuracy, valid_loss


def _config_json(
    config: RuberConfig,
    pairs: Sequence[QueryReplyPair],
    validation_pairs: Sequence[QueryReplyPair],
    *,
    vocabulary_size: int,
) -> dict[str, Any]:

    settings = dataclasses.asdict(config)
    # where and on how many threads it ran are in timings.json; they do not change what the model is
    settings.pop("device")
    settings.pop("threads")
    settings.update(
        {
            "format": ARTIFACT_FORMAT,
            "metric": "ruber",
            "paper": "Tao et al. 2018, RUBER, sections 3.1-3.3",
            "tokenizer": tokenizer_name(config.language),
            "vocabulary_size": vocabulary_size,
            **training_provenance(config.corpus_description, pairs, validation_pairs),
        }
    )
    return settings

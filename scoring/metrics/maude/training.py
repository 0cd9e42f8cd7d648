"""Training MaUde and its baselines by noise contrastive estimation (seed 004, sections 3-4, eq. 2).

1. Examples: every reply of every training dialog with its context (:func:`.dialogs.examples`; the whole
   history by default, ``context_turns`` to cut it).
2. Negatives, fixed once (:mod:`.negatives`): one syntactic corruption per reply (its kind drawn at
   random among ``negatives``' order / drop / repeat), so that the encoder reads each text once; the
   random utterance of another dialog is drawn anew every epoch (free: it is another example's reply).
3. Inputs, once (:mod:`.inputs`): the encoder's pooled vector of every distinct text (all turns and
   all corrupted replies), and word2vec (trained on the corpus, as RUBER) token sequences for the
   InferSent and RUBER baselines.
4. Each variant (:mod:`.scorers`) from the same seed, Adam, mini-batches of examples; the loss of eq. 2
   with one positive and the negatives of each example: -log s(c, r) - mean_k log(1 - s(c, r_k^-)).
   Validation: the same loss and the ranking accuracy (true reply scored above each negative) on the
   validation dialogs with fixed negatives; the best epoch by validation loss is kept, training stops
   after ``patience`` epochs without a better one (the paper: "early stopping till validation loss
   doesn't improve").

Deviations from the paper, recorded in ``config.json``: the encoder is frozen (the paper fine-tunes
DistilBERT end to end: not affordable on a CPU; BERT-RUBER freezes its encoder too); all-MiniLM-L6-v2
instead of DistilBERT; learning rate 1e-3 instead of 1e-4 (frozen inputs, few epochs); no
back-translation and no seq2seq negatives (no such model offline, docs/metrics.md).

``on_progress`` (:mod:`scoring.metrics.training_progress`) hears of word2vec's epochs, the encoding of the
texts, each batch and each epoch of each variant; raising ``TrainingCancelled`` from it stops the training.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.metrics.bert_ruber.artifact import CELLS_FOLDER, cell_weights_file
from scoring.metrics.bert_ruber.features import word2vec_table
from scoring.metrics.contextual_encoder import TokenEncoder, device_settings
from scoring.metrics.maude.artifact import HASH_FILE, MaudeArtifact, maude_artifact_hash
from scoring.metrics.maude.dialogs import ContextReply, Dialog, examples
from scoring.metrics.maude.inputs import TextIndex, context_texts, encoder_vectors, example_arrays
from scoring.metrics.maude.negatives import (
    DEFAULT_DROP_FRACTION,
    SYNTACTIC_KINDS,
    random_other_indices,
    syntactic_negative,
)
from scoring.metrics.maude.variants import DEFAULT_VARIANTS, ENCODER_VARIANTS, INFERSENT, parse_variants
from scoring.metrics.ruber.artifact import write_shared_files
from scoring.metrics.ruber.corpus import CorpusError, training_provenance
from scoring.metrics.ruber.word2vec import Word2VecConfig, train_word2vec
from scoring.metrics.tokenize import tokenize, tokenizer_name
from scoring.metrics.training_progress import (
    BATCH_STAGE,
    ENCODING_STAGE,
    EPOCH_STAGE,
    ProgressCallback,
    TrainingReport,
    report_progress,
    word2vec_progress,
)

ARTIFACT_FORMAT = 1
RANDOM_UTTERANCE = "utterance"
NEGATIVE_KINDS = (RANDOM_UTTERANCE, *SYNTACTIC_KINDS)


@dataclass(frozen=True)
class MaudeConfig:
    variants: tuple[str, ...] = DEFAULT_VARIANTS
    context_turns: int | None = None  # None: the whole history (the paper's setting)
    pooling: str = "mean"  # of the encoder's token vectors: mean | max | mean-max
    negatives: tuple[str, ...] = NEGATIVE_KINDS
    drop_fraction: float = DEFAULT_DROP_FRACTION
    dim: int = 300  # the paper's downsampled size (appendix)
    rnn_hidden: int = 150  # per direction: the BiLSTM states are 300-dimensional
    mlp_hidden: int = 200  # appendix: two-layer MLP, hidden 200, dropout 0.2
    dropout: float = 0.2
    learning_rate: float = 1e-3  # paper 1e-4 (end-to-end fine-tuning)
    batch_size: int = 64
    epochs: int = 10
    patience: int = 2
    max_length: int = 40  # word2vec tokens per utterance (InferSent, RUBER)
    max_context_tokens: int = 100  # InferSent's joined context, its last tokens
    word2vec: Word2VecConfig = field(default_factory=Word2VecConfig)
    seed: int = 0
    language: str = "en"
    device: str | None = None
    torch_threads: int | None = None
    corpus_description: str = ""


@dataclass(frozen=True)
class _Prepared:
    index: TextIndex
    train: Any  # ExampleArrays
    valid: Any
    train_dialogs: NDArray[np.int64]
    valid_dialogs: NDArray[np.int64]
    train_syntactic: NDArray[np.int64] | None
    valid_syntactic: NDArray[np.int64] | None
    valid_utterance: NDArray[np.int64] | None


def train_maude(
    dialogs: Sequence[Dialog],
    validation_dialogs: Sequence[Dialog],
    *,
    config: MaudeConfig,
    output_dir: Path,
    encoder: TokenEncoder | None = None,
    progress: bool = True,
    on_progress: ProgressCallback | None = None,
) -> MaudeArtifact:
    """Train ``config.variants`` on ``dialogs``, stop early on ``validation_dialogs``, save to ``output_dir``;
    ``on_progress`` gets the reports of :mod:`scoring.metrics.training_progress` (and may raise to stop)."""
    import torch

    threads = torch.get_num_threads()
    if config.torch_threads is not None:
        torch.set_num_threads(config.torch_threads)
    try:
        return _train(dialogs, validation_dialogs, config, Path(output_dir), encoder, progress, on_progress)
    finally:
        torch.set_num_threads(threads)


def _train(
    dialogs: Sequence[Dialog],
    validation_dialogs: Sequence[Dialog],
    config: MaudeConfig,
    output_dir: Path,
    encoder: TokenEncoder | None,
    progress: bool,
    on_progress: ProgressCallback | None = None,
) -> MaudeArtifact:
    import torch
    from tqdm import tqdm

    from scoring.metrics.maude.feeds import Feed

    variants = parse_variants(config.variants)
    unknown = [kind for kind in config.negatives if kind not in NEGATIVE_KINDS]
    if unknown or not config.negatives:
        raise ValueError(
            f"negatives {', '.join(unknown) or '(none)'}: choose among {', '.join(NEGATIVE_KINDS)}"
        )
    if config.context_turns is not None and config.context_turns < 1:
        raise ValueError(f"context_turns must be at least 1 (or None for all), got {config.context_turns}")
    train_examples = examples(dialogs, context_turns=config.context_turns)
    valid_examples = examples(validation_dialogs, context_turns=config.context_turns)
    for name, found, source in (
        ("training", train_examples, dialogs),
        ("validation", valid_examples, validation_dialogs),
    ):
        if len({example.dialog for example in found}) < 2:
            raise CorpusError(f"{len(source)} {name} dialog(s) with a reply; MaUde needs at least 2")
    if any(variant in ENCODER_VARIANTS for variant in variants):
        encoder = _checked_encoder(encoder, config)
    (output_dir / CELLS_FOLDER).mkdir(parents=True, exist_ok=True)
    random.seed(config.seed)
    np.random.seed(config.seed)
    device = torch.device(config.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    timings: dict[str, Any] = {}
    started = time.perf_counter()

    sentences = [tokenize(turn, config.language) for dialog in dialogs for turn in dialog]
    vectors = train_word2vec(
        sentences,
        config=config.word2vec,
        seed=config.seed,
        on_epoch=word2vec_progress(on_progress, epochs=config.epochs, cells=len(variants)),
    )
    timings["word2vec_seconds"] = _since(started)

    stage = time.perf_counter()
    prepared = _prepare(train_examples, valid_examples, config)
    timings["negatives_seconds"] = _since(stage)
    timings["distinct_texts"] = len(prepared.index.texts)
    timings["training_examples"] = len(train_examples)

    encoded = None
    if any(variant in ENCODER_VARIANTS for variant in variants):
        assert encoder is not None
        stage = time.perf_counter()
        bar = tqdm(total=len(prepared.index.texts), desc="encoding texts", unit="text", disable=not progress)
        done = 0

        def encoded_chunk(count: int) -> None:
            nonlocal done
            done += count
            bar.update(count)
            report_progress(
                on_progress,
                TrainingReport(
                    ENCODING_STAGE,
                    epochs=config.epochs,
                    step=done,
                    steps=len(prepared.index.texts),
                    cells=len(variants),
                ),
            )

        encoded = encoder_vectors(
            prepared.index.texts, encoder, pooling=config.pooling, on_chunk=encoded_chunk
        )
        bar.close()
        timings["encoder_seconds"] = _since(stage)
    utterance_table = None
    context_tables: dict[str, Any] = {}
    if any(variant not in ENCODER_VARIANTS for variant in variants):
        stage = time.perf_counter()
        utterance_table = word2vec_table(
            prepared.index.texts,
            vectors,
            language=config.language,
            max_length=config.max_length,
            with_tokens=True,
        )
        if INFERSENT in variants:
            for name, arrays in (("train", prepared.train), ("valid", prepared.valid)):
                context_tables[name] = word2vec_table(
                    context_texts(
                        arrays,
                        prepared.index.texts,
                        language=config.language,
                        max_tokens=config.max_context_tokens,
                    ),
                    vectors,
                    language=config.language,
                    max_length=config.max_context_tokens,
                    with_tokens=True,
                )
        timings["word2vec_inputs_seconds"] = _since(stage)

    settings = _config_json(
        config, variants, dialogs, validation_dialogs, vectors_size=len(vectors), encoder=encoder
    )
    curves: dict[str, list[dict[str, float]]] = {}
    results: dict[str, dict[str, float]] = {}
    timings["variants"] = {}
    for variant_index, variant in enumerate(variants, start=1):
        stage = time.perf_counter()

        def variant_progress(report: TrainingReport, index: int = variant_index) -> None:
            report_progress(on_progress, dataclasses.replace(report, cell_index=index, cells=len(variants)))

        def feed(arrays: Any, part: str, variant: str = variant) -> Feed:
            return Feed(
                variant=variant,
                arrays=arrays,
                device=device,
                vectors=encoded if variant in ENCODER_VARIANTS else None,
                utterances=None if variant in ENCODER_VARIANTS else utterance_table,
                contexts=context_tables.get(part) if variant == INFERSENT else None,
            )

        state, curve, epoch_seconds = _train_variant(
            variant,
            feed(prepared.train, "train"),
            feed(prepared.valid, "valid"),
            prepared,
            settings,
            config,
            device,
            progress,
            variant_progress if on_progress is not None else None,
        )
        torch.save(state, output_dir / cell_weights_file(variant))
        best = min(curve, key=lambda row: row["validation_loss"])
        curves[variant] = curve
        results[variant] = {
            "best_epoch": best["epoch"],
            "validation_loss": best["validation_loss"],
            "validation_accuracy": best["validation_accuracy"],
        }
        timings["variants"][variant] = {"epoch_seconds": epoch_seconds, "total_seconds": _since(stage)}
    timings["total_seconds"] = _since(started)
    timings["device"] = str(device)
    timings["torch_threads"] = torch.get_num_threads()
    settings["results"] = results
    write_shared_files(output_dir, config=settings, vectors=vectors, curve=curves, timings=timings)
    content_hash = maude_artifact_hash(output_dir)
    (output_dir / HASH_FILE).write_text(content_hash + "\n", encoding="utf-8")
    return MaudeArtifact(path=output_dir, content_hash=content_hash, config=settings, curve=curves)


def _prepare(
    train_examples: Sequence[ContextReply], valid_examples: Sequence[ContextReply], config: MaudeConfig
) -> _Prepared:
    """Text rows of every example, its fixed syntactic negative, and validation's fixed random utterance."""
    index = TextIndex()
    train = example_arrays(
        [e.context for e in train_examples], [e.reply for e in train_examples], index, turns=None
    )
    valid = example_arrays(
        [e.context for e in valid_examples], [e.reply for e in valid_examples], index, turns=None
    )
    kinds = [kind for kind in SYNTACTIC_KINDS if kind in config.negatives]
    rng = random.Random(config.seed)

    def corrupted(found: Sequence[ContextReply]) -> NDArray[np.int64] | None:
        if not kinds:
            return None
        return np.array(
            [
                index.row(
                    syntactic_negative(e.reply, rng.choice(kinds), rng, drop_fraction=config.drop_fraction)
                )
                for e in found
            ],
            dtype=np.int64,
        )

    train_syntactic = corrupted(train_examples)
    valid_syntactic = corrupted(valid_examples)
    valid_dialogs = np.array([e.dialog for e in valid_examples], dtype=np.int64)
    valid_utterance = None
    if RANDOM_UTTERANCE in config.negatives:
        chosen = random_other_indices(
            valid_dialogs, valid.reply_rows, np.arange(len(valid)), np.random.default_rng(config.seed)
        )
        valid_utterance = valid.reply_rows[chosen]
    return _Prepared(
        index=index,
        train=train,
        valid=valid,
        train_dialogs=np.array([e.dialog for e in train_examples], dtype=np.int64),
        valid_dialogs=valid_dialogs,
        train_syntactic=train_syntactic,
        valid_syntactic=valid_syntactic,
        valid_utterance=valid_utterance,
    )


def _train_variant(
    variant: str,
    train_feed: Any,
    valid_feed: Any,
    prepared: _Prepared,
    settings: dict[str, Any],
    config: MaudeConfig,
    device: Any,
    progress: bool,
    on_progress: ProgressCallback | None = None,
) -> tuple[dict[str, Any], list[dict[str, float]], list[float]]:
    """(best epoch's state dict, curve rows, seconds per epoch) of one variant."""
    import torch
    import torch.nn.functional as functional
    from tqdm import tqdm

    from scoring.metrics.maude.feeds import score_examples
    from scoring.metrics.maude.scorers import build_scorer

    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    scorer = build_scorer(variant, input_dim=train_feed.input_dim, settings=settings)
    train = prepared.train
    text_rows = np.unique(np.concatenate([train.context_rows, train.reply_rows]))
    scorer.set_input_statistics(*train_feed.statistics(text_rows))
    scorer.to(device)
    optimiser = torch.optim.Adam(scorer.parameters(), lr=config.learning_rate)
    batch_size = device_settings(str(device)).scorer_batch_size
    valid_examples = np.arange(len(prepared.valid), dtype=np.int64)
    valid_negatives = [
        rows for rows in (prepared.valid_utterance, prepared.valid_syntactic) if rows is not None
    ]
    all_examples = np.arange(len(train), dtype=np.int64)
    curve: list[dict[str, float]] = []
    epoch_seconds: list[float] = []
    best_loss, best_state, stale = float("inf"), {}, 0
    for epoch in range(1, config.epochs + 1):
        epoch_started = time.perf_counter()
        scorer.train()
        utterance = None
        if RANDOM_UTTERANCE in config.negatives:
            utterance = train.reply_rows[
                random_other_indices(prepared.train_dialogs, train.reply_rows, all_examples, rng)
            ]
        order = torch.randperm(len(train), generator=generator).numpy()
        summed, count = 0.0, 0
        starts = range(0, len(order), config.batch_size)
        bar = tqdm(
            starts,
            desc=f"{variant} epoch {epoch}",
            disable=not progress,
            leave=False,
        )
        for step, start in enumerate(bar, start=1):
            batch = order[start : start + config.batch_size]
            context = scorer.encode_context(train_feed.context(batch))
            positive = scorer.logits(context, scorer.encode_reply(train_feed.reply(train.reply_rows[batch])))
            negative_rows = [
                rows[batch] for rows in (utterance, prepared.train_syntactic) if rows is not None
            ]
            negatives = [
                scorer.logits(context, scorer.encode_reply(train_feed.reply(rows))) for rows in negative_rows
            ]
            loss = (
                functional.binary_cross_entropy_with_logits(positive, torch.ones_like(positive))
                + torch.stack(
                    [
                        functional.binary_cross_entropy_with_logits(value, torch.zeros_like(value))
                        for value in negatives
                    ]
                ).mean()
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            summed += float(loss.detach()) * len(batch)
            count += len(batch)
            if progress and step % 50 == 0:
                bar.set_postfix(loss=f"{summed / count:.4f}")
            report_progress(
                on_progress,
                TrainingReport(
                    BATCH_STAGE,
                    epoch=epoch,
                    epochs=config.epochs,
                    step=step,
                    steps=len(starts),
                    loss=summed / count,
                    cell=variant,
                ),
            )
        bar.close()
        scores = score_examples(
            scorer,
            valid_feed,
            valid_examples,
            [prepared.valid.reply_rows, *valid_negatives],
            batch_size=batch_size,
        )
        true_scores, negative_scores = scores[0], scores[1:]
        validation_loss = _nce_loss(true_scores, negative_scores)
        row: dict[str, float] = {
            "epoch": epoch,
            "train_loss": round(summed / count, 6),
            "validation_loss": round(validation_loss, 6),
            "validation_accuracy": round(
                float(np.mean([np.mean(true_scores > neg) for neg in negative_scores])), 6
            ),
        }
        names = [
            name
            for name, rows in (
                ("utterance", prepared.valid_utterance),
                ("syntactic", prepared.valid_syntactic),
            )
            if rows is not None
        ]
        for name, neg in zip(names, negative_scores, strict=True):
            row[f"validation_accuracy_{name}"] = round(float(np.mean(true_scores > neg)), 6)
        curve.append(row)
        epoch_seconds.append(_since(epoch_started))
        report_progress(
            on_progress,
            TrainingReport(
                EPOCH_STAGE,
                epoch=epoch,
                epochs=config.epochs,
                step=len(starts),
                steps=len(starts),
                loss=row["train_loss"],
                validation_accuracy=row["validation_accuracy"],
                validation_loss=row["validation_loss"],
                cell=variant,
            ),
        )
        if progress:
            tqdm.write(
                f"{variant} epoch {epoch}: train loss {row['train_loss']:.4f}, validation loss "
                f"{validation_loss:.4f}, accuracy {row['validation_accuracy']:.4f}"
            )
        if validation_loss < best_loss:
            best_loss, stale = validation_loss, 0
            best_state = {name: tensor.detach().cpu().clone() for name, tensor in scorer.state_dict().items()}
        else:
            stale += 1
            if stale >= config.patience:
                break
    return best_state, curve, epoch_seconds


def _nce_loss(true_scores: NDArray[np.float64], negative_scores: Sequence[NDArray[np.float64]]) -> float:
    """Eq. 2 on scores: -log s(c, r) - mean_k log(1 - s(c, r_k^-)), averaged over examples."""
    tiny = 1e-7
    positive = -np.log(np.clip(true_scores, tiny, 1.0))
    negative = np.mean([-np.log(np.clip(1.0 - scores, tiny, 1.0)) for scores in negative_scores], axis=0)
    return float(np.mean(positive + negative))


def _checked_encoder(encoder: TokenEncoder | None, config: MaudeConfig) -> TokenEncoder:
    if config.language != "en":
        raise ValueError(
            f"MaUde's encoder (all-MiniLM-L6-v2) covers English only, and the corpus language is "
            f"{config.language!r}; train only the infersent and ruber variants for it"
        )
    if encoder is None:
        from scoring.metrics.contextual_encoder import minilm_encoder

        encoder = minilm_encoder(device=config.device)
    return encoder


def _config_json(
    config: MaudeConfig,
    variants: Sequence[str],
    dialogs: Sequence[Dialog],
    validation_dialogs: Sequence[Dialog],
    *,
    vectors_size: int,
    encoder: TokenEncoder | None,
) -> dict[str, Any]:
    from scoring.metrics.ruber.corpus import QueryReplyPair

    settings = dataclasses.asdict(config)
    settings.pop("device")
    settings.pop("torch_threads")
    settings.update(
        {
            "cells": list(variants),  # the artifact layout of BERT-RUBER: one weights file per trained scorer
            "variants": list(variants),
            "format": ARTIFACT_FORMAT,
            "metric": "maude",
            "paper": "Sinha et al. 2020, MaUde, sections 3-4, eqs. 1-4",
            "negatives_policy": "per reply one fixed syntactic corruption (kind at random) and a random "
            "utterance of another dialog drawn every epoch",
            "encoder_frozen": True,
            "tokenizer": tokenizer_name(config.language),
            "vocabulary_size": vectors_size,
            "encoder": None
            if encoder is None
            else {
                "name": encoder.name,
                "content_hash": encoder.content_hash,
                "dimension": encoder.dimension,
                "language": encoder.language,
            },
            **training_provenance(
                config.corpus_description,
                [QueryReplyPair(" __eot__ ".join(d[:-1]), d[-1]) for d in dialogs],
                [QueryReplyPair(" __eot__ ".join(d[:-1]), d[-1]) for d in validation_dialogs],
            ),
        }
    )
    corpus = settings["corpus"]
    corpus.pop("training_pairs")
    corpus.pop("validation_pairs")
    corpus["training_dialogs"] = len(dialogs)
    corpus["validation_dialogs"] = len(validation_dialogs)
    return settings


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 3)

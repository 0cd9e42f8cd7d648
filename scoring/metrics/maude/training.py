"""Training MaUde and its baselines by noise contrastive estimation (Sinha et al., 2020, sections 3-4, eq. 2).

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

The loop over epochs, batches, validation, early stopping and reports is BERT-RUBER's too
(:mod:`scoring.metrics.training_loop`); what is MaUde's own is passed in (:class:`_VariantScorer`: the
feeds, the negatives and the loss of eq. 2), as is the monitored figure (validation loss).

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
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from scoring.metrics.artifacts import CELLS_FOLDER, encoder_record, model_device
from scoring.metrics.bert_ruber.features import word2vec_table
from scoring.metrics.contextual_encoder import TokenEncoder, device_settings
from scoring.metrics.maude.artifact import MaudeArtifact, maude_artifact_hash
from scoring.metrics.maude.dialogs import ContextReply, Dialog, dialogs_provenance, examples
from scoring.metrics.maude.inputs import TextIndex, context_texts, encoder_vectors, example_arrays
from scoring.metrics.maude.negatives import (
    DEFAULT_DROP_FRACTION,
    NEGATIVE_KINDS,
    RANDOM_UTTERANCE,
    SYNTACTIC_KINDS,
    random_other_indices,
    syntactic_negative,
)
from scoring.metrics.maude.variants import DEFAULT_VARIANTS, ENCODER_VARIANTS, INFERSENT, parse_variants
from scoring.metrics.ruber.corpus import CorpusError
from scoring.metrics.ruber.word2vec import Word2VecConfig, train_word2vec
from scoring.metrics.tokenize import tokenize, tokenizer_name
from scoring.metrics.training_loop import (
    LOWEST_LOSS,
    LoopSettings,
    Validation,
    save_cells_artifact,
    seconds_since,
    seed_generators,
    train_cells,
    training_threads,
)
from scoring.metrics.training_progress import ProgressCallback, encoding_progress, word2vec_progress
from scoring.metrics.word_vectors import WordVectors

if TYPE_CHECKING:
    import torch

    from scoring.metrics.maude.feeds import Feed
    from scoring.metrics.maude.scorers import Scorer

ARTIFACT_FORMAT = 1


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
    with training_threads(config.torch_threads):
        return _train(dialogs, validation_dialogs, config, Path(output_dir), encoder, progress, on_progress)


def _train(
    dialogs: Sequence[Dialog],
    validation_dialogs: Sequence[Dialog],
    config: MaudeConfig,
    output_dir: Path,
    encoder: TokenEncoder | None,
    progress: bool,
    on_progress: ProgressCallback | None = None,
) -> MaudeArtifact:
    variants = parse_variants(config.variants)
    train_examples, valid_examples = _checked_examples(dialogs, validation_dialogs, config)
    if any(variant in ENCODER_VARIANTS for variant in variants):
        encoder = _checked_encoder(encoder, config)
    (output_dir / CELLS_FOLDER).mkdir(parents=True, exist_ok=True)
    seed_generators(config.seed)
    device = model_device(config.device)
    timings: dict[str, Any] = {}
    started = time.perf_counter()

    sentences = [tokenize(turn, config.language) for dialog in dialogs for turn in dialog]
    progress_of_word2vec = word2vec_progress(on_progress, epochs=config.epochs, cells=len(variants))
    vectors = train_word2vec(
        sentences, config=config.word2vec, seed=config.seed, on_epoch=progress_of_word2vec
    )
    timings["word2vec_seconds"] = seconds_since(started)

    stage = time.perf_counter()
    prepared = _prepare(train_examples, valid_examples, config)
    timings["negatives_seconds"] = seconds_since(stage)
    timings["distinct_texts"] = len(prepared.index.texts)
    timings["training_examples"] = len(train_examples)

    encoded = _encoder_inputs(prepared, encoder, config, variants, timings, progress, on_progress)
    utterance_table, context_tables = _word2vec_inputs(prepared, vectors, config, variants, timings)

    settings = _config_json(
        config, variants, dialogs, validation_dialogs, vectors_size=len(vectors), encoder=encoder
    )

    def build(variant: str, generator: torch.Generator) -> _VariantScorer:
        from scoring.metrics.maude.feeds import Feed

        def feed(arrays: Any, part: str) -> Feed:
            return Feed(
                variant=variant,
                arrays=arrays,
                device=device,
                vectors=encoded if variant in ENCODER_VARIANTS else None,
                utterances=None if variant in ENCODER_VARIANTS else utterance_table,
                contexts=context_tables.get(part) if variant == INFERSENT else None,
            )

        train_feed, valid_feed = feed(prepared.train, "train"), feed(prepared.valid, "valid")
        return _VariantScorer(variant, train_feed, valid_feed, prepared, settings, config, device, generator)

    trained = train_cells(
        variants,
        build,
        settings=_loop_settings(config),
        result_columns=("validation_loss", "validation_accuracy"),
        device=device,
        output_dir=output_dir,
        progress=progress,
        on_progress=on_progress,
    )
    timings["variants"] = trained.timings
    timings["total_seconds"] = seconds_since(started)
    return save_cells_artifact(
        output_dir,
        MaudeArtifact,
        config=settings,
        vectors=vectors,
        cells=trained,
        timings=timings,
        device=device,
        content_hash=maude_artifact_hash,
    )


def _loop_settings(config: MaudeConfig) -> LoopSettings:
    """The shared loop as MaUde runs it: the lowest validation loss kept, a constant learning rate."""
    return LoopSettings(
        epochs=config.epochs,
        patience=config.patience,
        seed=config.seed,
        learning_rate=config.learning_rate,
        monitor=LOWEST_LOSS,
    )


def _checked_examples(
    dialogs: Sequence[Dialog], validation_dialogs: Sequence[Dialog], config: MaudeConfig
) -> tuple[list[ContextReply], list[ContextReply]]:
    """The training and validation examples, once the options and both sets are known to be usable."""
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
    return train_examples, valid_examples


def _encoder_inputs(
    prepared: _Prepared,
    encoder: TokenEncoder | None,
    config: MaudeConfig,
    variants: Sequence[str],
    timings: dict[str, Any],
    progress: bool,
    on_progress: ProgressCallback | None,
) -> Any:
    """The frozen encoder's vectors of every text, where a variant reads them (else None)."""
    encoded = None
    if any(variant in ENCODER_VARIANTS for variant in variants):
        assert encoder is not None
        stage = time.perf_counter()
        with encoding_progress(
            on_progress,
            texts=len(prepared.index.texts),
            epochs=config.epochs,
            cells=len(variants),
            desc="encoding texts",
            progress=progress,
        ) as encoded_chunk:
            encoded = encoder_vectors(
                prepared.index.texts, encoder, pooling=config.pooling, on_chunk=encoded_chunk
            )
        timings["encoder_seconds"] = seconds_since(stage)
    return encoded


def _word2vec_inputs(
    prepared: _Prepared,
    vectors: WordVectors,
    config: MaudeConfig,
    variants: Sequence[str],
    timings: dict[str, Any],
) -> tuple[Any, dict[str, Any]]:
    """word2vec's tables of every text and, for InferSent, of the contexts, where a variant reads them."""
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
        timings["word2vec_inputs_seconds"] = seconds_since(stage)
    return utterance_table, context_tables


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


_VariantBatch = tuple[NDArray[np.int64], list[NDArray[np.int64]]]  # examples, each negative's reply rows


@dataclass(eq=False)
class _VariantScorer:
    """One variant for the shared loop: its scorer over its feed, the negatives of each example (a random
    utterance of another dialog drawn anew every epoch, the fixed syntactic corruption) and eq. 2."""

    variant: str
    train_feed: Feed
    valid_feed: Feed
    prepared: _Prepared
    settings: dict[str, Any]
    config: MaudeConfig
    device: torch.device
    generator: torch.Generator
    module: Scorer = field(init=False)
    rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        from scoring.metrics.maude.scorers import build_scorer

        self.rng = np.random.default_rng(self.config.seed)
        self.module = build_scorer(self.variant, input_dim=self.train_feed.input_dim, settings=self.settings)
        train = self.prepared.train
        texts = np.unique(np.concatenate([train.context_rows, train.reply_rows]))
        self.module.set_input_statistics(*self.train_feed.statistics(texts))
        self.module.to(self.device)

    def epoch_batches(self) -> list[_VariantBatch]:
        import torch

        train = self.prepared.train
        utterance = None
        if RANDOM_UTTERANCE in self.config.negatives:
            every_example = np.arange(len(train), dtype=np.int64)
            utterance = train.reply_rows[
                random_other_indices(self.prepared.train_dialogs, train.reply_rows, every_example, self.rng)
            ]
        order = torch.randperm(len(train), generator=self.generator).numpy()
        size = self.config.batch_size
        batches = [order[start : start + size] for start in range(0, len(order), size)]
        return [
            (batch, [rows[batch] for rows in (utterance, self.prepared.train_syntactic) if rows is not None])
            for batch in batches
        ]

    def batch_loss(self, batch: _VariantBatch) -> tuple[torch.Tensor, int]:
        import torch
        import torch.nn.functional as functional

        rows, negative_rows = batch
        scorer, feed = self.module, self.train_feed
        context = scorer.encode_context(feed.context(rows))
        positive = scorer.logits(
            context, scorer.encode_reply(feed.reply(self.prepared.train.reply_rows[rows]))
        )
        negatives = [
            scorer.logits(context, scorer.encode_reply(feed.reply(found))) for found in negative_rows
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
        return loss, len(rows)

    def validate(self) -> Validation:
        from scoring.metrics.maude.feeds import score_examples

        prepared = self.prepared
        negatives = [
            (name, rows)
            for name, rows in (
                ("utterance", prepared.valid_utterance),
                ("syntactic", prepared.valid_syntactic),
            )
            if rows is not None
        ]
        scores = score_examples(
            self.module,
            self.valid_feed,
            np.arange(len(prepared.valid), dtype=np.int64),
            [prepared.valid.reply_rows, *(rows for _, rows in negatives)],
            batch_size=device_settings(str(self.device)).scorer_batch_size,
        )
        true_scores, negative_scores = scores[0], scores[1:]
        loss = _nce_loss(true_scores, negative_scores)
        # reported as in the curve, rounded (early stopping reads the loss)
        accuracy = round(float(np.mean([np.mean(true_scores > neg) for neg in negative_scores])), 6)
        columns = {"validation_loss": round(loss, 6), "validation_accuracy": accuracy}
        for (name, _), neg in zip(negatives, negative_scores, strict=True):
            columns[f"validation_accuracy_{name}"] = round(float(np.mean(true_scores > neg)), 6)
        return Validation(accuracy=accuracy, loss=loss, columns=columns)


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
            "encoder": encoder_record(encoder),
            **dialogs_provenance(config.corpus_description, dialogs, validation_dialogs),
        }
    )
    return settings

"""Training BERT-RUBER's unreferenced scorers, any cells of the factorial (Ghazarian et al., 2019, sections 2.1 and 4.3).

1. word2vec (gensim) on the corpus's utterances, as RUBER (``ruber.word2vec``; 50 dimensions by default).
   It is trained even when only BERT cells are asked for: it is cheap, and every artifact then has
   the same files and a ``.vectors``.
2. The frozen inputs of every distinct utterance of the training and validation pairs, once
   (:mod:`.features`): word2vec and/or contextual token vectors, pooled, and token sequences where an
   RNN cell needs them.
3. Each cell (:mod:`.heads`) by negative sampling: for each pair (q, r) of a mini-batch, the reply r- of
   another pair of the same mini-batch (chosen at random per pair). Batches of the pooling cells are
   uniformly shuffled, so r- is a uniformly random other reply, as in RUBER; batches of the RNN cells
   are bucketed by length (shuffled, then sorted by query and reply length within windows of 50
   batches) so that the GRU runs few padded steps, which makes r- a random reply of similar length.
   Objective ``ranking``: max(0, margin - s(q, r) + s(q, r-)) (RUBER eq. 3); ``ce``: cross entropy of
   the 2-way softmax, label 1 for (q, r) and 0 for (q, r-) (section 2.1.3).
4. Adam; the learning rate is multiplied by ``lr_decay`` after ``lr_patience`` epochs without a better
   validation ranking accuracy, and training stops after ``patience`` such epochs, keeping the best
   epoch's weights (section 4.3, with smaller numbers, see below). Each cell starts from the same seed,
   so a cell's weights do not depend on which other cells are trained with it.

Deviations from section 4.3, documented in ``config.json``: Adam learning rate 1e-3 instead of 1e-4,
decay after 1 stale epoch (paper: 5), stop after 2 (paper: 20), at most 10 epochs, so that a cell
converges in a few epochs on a CPU (the paper trained on 22k pairs on an unknown machine); embeddings
frozen (see :mod:`.features`); all-MiniLM-L6-v2 (384 dimensions) instead of BERT-base (768).
Margin 0.5 and sentences cut to 40 tokens for the GRU are RUBER's choices here
(``ruber.training``).

Determinism: fixed seeds (Python, torch, gensim with one worker); on CUDA, GRU kernels may differ in the
last bits between runs.

Devices: ``config.device`` (default CUDA when torch sees it). On CUDA the encoder runs under
bfloat16 autocast with large batches (``contextual_encoder.device_settings``), validation is scored in
large batches, Adam is the fused CUDA kernel, and the epoch's loss is summed on the device (float64,
read once per epoch rather than once per step); the heads, losses and optimiser stay float32. On the
CPU every step is computed as before, and artifacts are bit-identical to those of earlier versions.

The loop over epochs, batches, validation, early stopping and reports is MaUde's too
(:mod:`scoring.metrics.training_loop`); what is BERT-RUBER's own is passed in (:class:`_CellScorer`: the
batches, the in-batch negatives and the two objectives), as are the monitored figure (validation ranking
accuracy), the plateau decay and the fused Adam kernel on CUDA.

``on_progress`` (:mod:`scoring.metrics.training_progress`) hears of word2vec's epochs, the encoding of the
utterances, each batch (the running loss every ``PROGRESS_EVERY`` batches) and each epoch of each cell;
raising ``TrainingCancelled`` from it stops the training.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from scoring.metrics.artifacts import CELLS_FOLDER, encoder_record, model_device
from scoring.metrics.bert_ruber.artifact import BertRuberArtifact, bert_ruber_artifact_hash
from scoring.metrics.bert_ruber.cells import ALL_CELLS, BERT, RANKING, WORD2VEC, Cell, parse_cells
from scoring.metrics.bert_ruber.features import (
    SentenceTable,
    encoder_table,
    input_statistics,
    word2vec_table,
)
from scoring.metrics.contextual_encoder import TokenEncoder, device_settings
from scoring.metrics.ruber.corpus import CorpusError, QueryReplyPair, training_provenance, utterances
from scoring.metrics.ruber.ranking import negative_indices
from scoring.metrics.ruber.word2vec import Word2VecConfig, train_word2vec
from scoring.metrics.tokenize import tokenize, tokenizer_name
from scoring.metrics.training_loop import (
    BEST_ACCURACY,
    LoopSettings,
    Plateau,
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

    from scoring.metrics.bert_ruber.heads import UnreferencedHead

ARTIFACT_FORMAT = 1
BUCKET_WINDOW = 50  # batches per length-sorted window of the RNN cells
PROGRESS_EVERY = 20  # batches between reads of the running loss for the progress reports (each reads the GPU)


@dataclass(frozen=True)
class BertRuberConfig:
    cells: tuple[str, ...] = ALL_CELLS
    word2vec: Word2VecConfig = field(default_factory=Word2VecConfig)
    rnn_hidden: int = 128  # section 4.3
    rnn_layers: int = 2  # section 4.3
    mlp_hidden: tuple[int, ...] = (256, 512, 128)  # section 4.3
    margin: float = 0.5  # ranking objective only
    learning_rate: float = 1e-3  # paper 1e-4
    lr_decay: float = 0.5  # factor on a plateau (the paper does not give it)
    lr_patience: int = 1  # stale epochs before a decay (paper 5)
    batch_size: int = 128
    max_length: int = 40  # tokens per sentence fed to the GRU
    epochs: int = 10
    patience: int = 2  # stale epochs before stopping (paper 20)
    seed: int = 0
    language: str = "en"
    device: str | None = None  # None: CUDA when available, else CPU
    # torch's intra-op threads while training (None: leave torch's setting). On a CPU shared with other
    # work, 1 thread ran the GRU ~5x faster than 2 (threads spin-waiting for a busy core).
    torch_threads: int | None = None
    corpus_description: str = ""


def train_bert_ruber(
    pairs: Sequence[QueryReplyPair],
    validation_pairs: Sequence[QueryReplyPair],
    *,
    config: BertRuberConfig,
    output_dir: Path,
    encoder: TokenEncoder | None = None,
    progress: bool = True,
    on_progress: ProgressCallback | None = None,
) -> BertRuberArtifact:
    """Train word2vec and ``config.cells`` on ``pairs``, stop early on ``validation_pairs``, save to
    ``output_dir``. BERT cells use ``encoder`` (default all-MiniLM-L6-v2, English only). ``on_progress``
    gets the reports of :mod:`scoring.metrics.training_progress` (and may raise to stop)."""
    with training_threads(config.torch_threads):
        return _train(
            pairs,
            validation_pairs,
            config=config,
            output_dir=output_dir,
            encoder=encoder,
            progress=progress,
            on_progress=on_progress,
        )


def _train(
    pairs: Sequence[QueryReplyPair],
    validation_pairs: Sequence[QueryReplyPair],
    *,
    config: BertRuberConfig,
    output_dir: Path,
    encoder: TokenEncoder | None,
    progress: bool,
    on_progress: ProgressCallback | None = None,
) -> BertRuberArtifact:
    cells = parse_cells(config.cells)
    if len(pairs) < 2:
        raise CorpusError(f"{len(pairs)} training pairs; training needs at least 2")
    if len(validation_pairs) < 2:
        raise CorpusError(f"{len(validation_pairs)} validation pairs; early stopping needs at least 2")
    bert_cells = [cell.name for cell in cells if cell.embedding == BERT]
    if bert_cells:
        encoder = _checked_encoder(encoder, config, bert_cells)
    output_dir = Path(output_dir)
    (output_dir / CELLS_FOLDER).mkdir(parents=True, exist_ok=True)
    timings: dict[str, Any] = {}
    seed_generators(config.seed)
    device = model_device(config.device)

    started = time.perf_counter()
    vectors = _trained_vectors(pairs, config, cells=len(cells), on_progress=on_progress)
    timings["word2vec_seconds"] = seconds_since(started)

    texts, rows = _pair_rows(pairs, validation_pairs, seed=config.seed)
    timings["distinct_texts"] = len(texts)
    tables = _input_tables(
        cells,
        texts,
        vectors,
        encoder,
        config=config,
        timings=timings,
        progress=progress,
        on_progress=on_progress,
    )

    by_name = {cell.name: cell for cell in cells}

    def build(name: str, generator: torch.Generator) -> _CellScorer:
        cell = by_name[name]
        return _CellScorer(cell, tables[cell.embedding], rows, config, device, generator)

    trained = train_cells(
        [cell.name for cell in cells],
        build,
        settings=_loop_settings(config),
        result_columns=("validation_accuracy",),
        device=device,
        output_dir=output_dir,
        progress=progress,
        on_progress=on_progress,
    )
    timings["cells"] = trained.timings
    timings["total_seconds"] = seconds_since(started)
    settings = _config_json(
        config, cells, pairs, validation_pairs, vectors_size=len(vectors), encoder=encoder
    )
    return save_cells_artifact(
        output_dir,
        BertRuberArtifact,
        config=settings,
        vectors=vectors,
        cells=trained,
        timings=timings,
        device=device,
        content_hash=bert_ruber_artifact_hash,
    )


def _trained_vectors(
    pairs: Sequence[QueryReplyPair],
    config: BertRuberConfig,
    *,
    cells: int,
    on_progress: ProgressCallback | None,
) -> WordVectors:
    """word2vec on the corpus's tokenized utterances, for the word2vec cells' inputs."""
    sentences = [tokenize(text, config.language) for text in utterances(pairs)]
    vectors = train_word2vec(
        sentences,
        config=config.word2vec,
        seed=config.seed,
        on_epoch=word2vec_progress(on_progress, epochs=config.epochs, cells=cells),
    )
    if len(vectors) == 0:
        raise CorpusError(
            f"no word occurs {config.word2vec.min_count} times in the corpus; word2vec is empty"
        )
    return vectors


def _loop_settings(config: BertRuberConfig) -> LoopSettings:
    """The shared loop as BERT-RUBER runs it: the best validation accuracy kept, the learning rate decayed
    on its plateau, Adam fused on CUDA."""
    return LoopSettings(
        epochs=config.epochs,
        patience=config.patience,
        seed=config.seed,
        learning_rate=config.learning_rate,
        monitor=BEST_ACCURACY,
        plateau=Plateau(factor=config.lr_decay, patience=config.lr_patience),
        fused_on_cuda=True,
        loss_every=PROGRESS_EVERY,
    )


def _pair_rows(
    pairs: Sequence[QueryReplyPair], validation_pairs: Sequence[QueryReplyPair], *, seed: int
) -> tuple[list[str], _PairRows]:
    """Every distinct text of the pairs (in order of appearance), and each pair's rows in that list."""
    texts = list(
        dict.fromkeys(text for pair in (*pairs, *validation_pairs) for text in (pair.query, pair.reply))
    )
    row = {text: index for index, text in enumerate(texts)}
    valid_r = np.array([row[pair.reply] for pair in validation_pairs], dtype=np.int64)
    rows = _PairRows(
        train_q=np.array([row[pair.query] for pair in pairs], dtype=np.int64),
        train_r=np.array([row[pair.reply] for pair in pairs], dtype=np.int64),
        valid_q=np.array([row[pair.query] for pair in validation_pairs], dtype=np.int64),
        valid_r=valid_r,
        valid_n=valid_r[negative_indices(len(validation_pairs), seed=seed)],
    )
    return texts, rows


def _input_tables(
    cells: Sequence[Cell],
    texts: list[str],
    vectors: WordVectors,
    encoder: TokenEncoder | None,
    *,
    config: BertRuberConfig,
    timings: dict[str, Any],
    progress: bool,
    on_progress: ProgressCallback | None,
) -> dict[str, SentenceTable]:
    """The frozen inputs of the cells, by embedding: word2vec's and the encoder's tables of ``texts``
    (tokens only where a cell reads them), with the seconds each took."""
    tables: dict[str, SentenceTable] = {}
    for embedding in (WORD2VEC, BERT):
        wanted = [cell for cell in cells if cell.embedding == embedding]
        if not wanted:
            continue
        with_tokens = any(not cell.pooled for cell in wanted)
        stage = time.perf_counter()
        if embedding == WORD2VEC:
            tables[embedding] = word2vec_table(
                texts,
                vectors,
                language=config.language,
                max_length=config.max_length,
                with_tokens=with_tokens,
            )
        else:
            assert encoder is not None
            with encoding_progress(
                on_progress,
                texts=len(texts),
                epochs=config.epochs,
                cells=len(cells),
                desc="encoding utterances",
                progress=progress,
            ) as encoded_chunk:
                tables[embedding] = encoder_table(
                    texts,
                    encoder,
                    max_length=config.max_length,
                    with_tokens=with_tokens,
                    on_chunk=encoded_chunk,
                )
        timings[f"{embedding}_inputs_seconds"] = seconds_since(stage)
    return tables


@dataclass(frozen=True)
class _PairRows:
    """Text rows of the training pairs, and of the validation pairs with their fixed negatives."""

    train_q: NDArray[np.int64]
    train_r: NDArray[np.int64]
    valid_q: NDArray[np.int64]
    valid_r: NDArray[np.int64]
    valid_n: NDArray[np.int64]


@dataclass(eq=False)
class _CellScorer:
    """One cell for the shared loop: its head over the frozen inputs, the epoch's batches, in-batch
    negatives, and the ranking or cross-entropy objective (module docstring, steps 3-4)."""

    cell: Cell
    table: SentenceTable
    rows: _PairRows
    config: BertRuberConfig
    device: torch.device
    generator: torch.Generator
    module: UnreferencedHead = field(init=False)

    def __post_init__(self) -> None:
        from scoring.metrics.bert_ruber.heads import UnreferencedHead

        self.module = UnreferencedHead(
            self.cell,
            input_dim=self.table.dimension,
            rnn_hidden=self.config.rnn_hidden,
            rnn_layers=self.config.rnn_layers,
            mlp_hidden=self.config.mlp_hidden,
        )
        texts = np.unique(np.concatenate((self.rows.train_q, self.rows.train_r)))
        self.module.set_input_statistics(*input_statistics(self.table, self.cell, texts))
        self.module.to(self.device)

    def epoch_batches(self) -> list[NDArray[np.int64]]:
        return _epoch_batches(
            self.cell,
            self.table,
            self.rows.train_q,
            self.rows.train_r,
            self.config.batch_size,
            self.generator,
        )

    def batch_loss(self, batch: NDArray[np.int64]) -> tuple[torch.Tensor, int]:
        import torch

        from scoring.metrics.bert_ruber.heads import sentence_inputs

        size = len(batch)
        query = self.module.encode_query(
            sentence_inputs(self.table, self.rows.train_q[batch], self.cell, self.device)
        )
        reply = self.module.encode_reply(
            sentence_inputs(self.table, self.rows.train_r[batch], self.cell, self.device)
        )
        # r-: another pair's reply of the same batch (offset 1..size-1, so never the pair's own)
        negatives = (torch.arange(size) + torch.randint(1, size, (size,), generator=self.generator)) % size
        return _loss(self.module, query, reply, reply[negatives.to(self.device)], self.config.margin), size

    def validate(self) -> Validation:
        from scoring.metrics.bert_ruber.heads import score_rows

        def scores(replies: NDArray[np.int64]) -> NDArray[np.float64]:
            batch_size = device_settings(str(self.device)).scorer_batch_size
            found = score_rows(
                self.module, self.table, self.rows.valid_q, replies, device=self.device, batch_size=batch_size
            )
            return np.array(found)

        true_scores, false_scores = scores(self.rows.valid_r), scores(self.rows.valid_n)
        accuracy = float(np.mean(true_scores > false_scores))  # ties count as failures
        loss = _validation_loss(self.cell, true_scores, false_scores, self.config.margin)
        return Validation(
            accuracy=accuracy,
            loss=loss,
            columns={"validation_accuracy": round(accuracy, 6), "validation_loss": round(loss, 6)},
        )


def _loss(
    head: UnreferencedHead, query: torch.Tensor, reply: torch.Tensor, negative: torch.Tensor, margin: float
) -> torch.Tensor:
    import torch
    import torch.nn.functional as functional

    if head.cell.objective == RANKING:
        # eq. 3 of RUBER on the sigmoid scores
        return torch.clamp(margin - head.score(query, reply) + head.score(query, negative), min=0.0).mean()
    logits = torch.cat([head.logits(query, reply), head.logits(query, negative)])
    labels = torch.cat(
        [torch.ones(len(query), dtype=torch.long), torch.zeros(len(query), dtype=torch.long)]
    ).to(logits.device)
    return functional.cross_entropy(logits, labels)


def _validation_loss(
    cell: Cell, true_scores: NDArray[Any], false_scores: NDArray[Any], margin: float
) -> float:
    """The cell's own objective on the validation pairs and their fixed negatives."""
    if cell.objective == RANKING:
        return float(np.mean(np.maximum(0.0, margin - true_scores + false_scores)))
    tiny = 1e-7
    true_part = -np.log(np.clip(true_scores, tiny, 1.0))
    false_part = -np.log(np.clip(1.0 - false_scores, tiny, 1.0))
    return float(np.mean(np.concatenate([true_part, false_part])))


def _epoch_batches(
    cell: Cell,
    table: SentenceTable,
    queries: NDArray[np.int64],
    replies: NDArray[np.int64],
    batch_size: int,
    generator: torch.Generator,
) -> list[NDArray[np.int64]]:
    """One epoch's mini-batches of pair indices (every batch has at least 2 pairs, for the negatives)."""
    import torch

    order = torch.randperm(len(queries), generator=generator).numpy()
    if cell.pooled:
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    else:
        batches = []
        window = batch_size * BUCKET_WINDOW
        for start in range(0, len(order), window):
            chunk = order[start : start + window]
            # np.lexsort sorts by its last key first: query length, then reply length
            chunk = chunk[np.lexsort((table.lengths[replies[chunk]], table.lengths[queries[chunk]]))]
            batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
        shuffled = torch.randperm(len(batches), generator=generator).tolist()
        batches = [batches[i] for i in shuffled]
    small = [i for i, batch in enumerate(batches) if len(batch) < 2]
    for i in reversed(small):  # a lone pair has no in-batch negative: it joins another batch
        lone = batches.pop(i)
        if batches:
            batches[i % len(batches)] = np.concatenate([batches[i % len(batches)], lone])
    return [np.asarray(batch, dtype=np.int64) for batch in batches]


def _checked_encoder(
    encoder: TokenEncoder | None, config: BertRuberConfig, bert_cells: Sequence[str]
) -> TokenEncoder:
    if config.language != "en":
        raise ValueError(
            f"the BERT cells ({', '.join(bert_cells)}) need an English corpus: their encoder "
            f"(all-MiniLM-L6-v2) covers English only, and the corpus language is {config.language!r}; "
            "train only word2vec cells for it"
        )
    if encoder is None:
        from scoring.metrics.contextual_encoder import minilm_encoder

        encoder = minilm_encoder(device=config.device)
    if encoder.language != config.language:
        raise ValueError(
            f"the encoder {encoder.name!r} is for {encoder.language!r}, the corpus is {config.language!r}"
        )
    return encoder


def _config_json(
    config: BertRuberConfig,
    cells: Sequence[Cell],
    pairs: Sequence[QueryReplyPair],
    validation_pairs: Sequence[QueryReplyPair],
    *,
    vectors_size: int,
    encoder: TokenEncoder | None,
) -> dict[str, Any]:

    settings = dataclasses.asdict(config)
    # where and how it ran is in timings.json; it does not change what the model is
    settings.pop("device")
    settings.pop("torch_threads")
    settings.update(
        {
            "cells": [cell.name for cell in cells],
            "format": ARTIFACT_FORMAT,
            "metric": "bert-ruber-unreferenced",
            "paper": "Ghazarian et al. 2019, BERT-RUBER, sections 2.1.1-2.1.3 and 4.3",
            "negatives": "another pair's reply of the same mini-batch (length-bucketed batches for rnn cells)",
            "embeddings": "frozen (word2vec and encoder token vectors are inputs, not trained)",
            "tokenizer": tokenizer_name(config.language),
            "vocabulary_size": vectors_size,
            "encoder": encoder_record(encoder),
            **training_provenance(config.corpus_description, pairs, validation_pairs),
        }
    )
    return settings

"""Training BERT-RUBER's unreferenced scorers, any cells of the factorial (seed 001, sections 2.1 and 4.3).

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

Devices (issue 11): ``config.device`` (default CUDA when torch sees it). On CUDA the encoder runs under
bfloat16 autocast with large batches (``contextual_encoder.device_settings``), validation is scored in
large batches, Adam is the fused CUDA kernel, and the epoch's loss is summed on the device (float64,
read once per epoch rather than once per step); the heads, losses and optimiser stay float32. On the
CPU every step is computed as before, and artifacts are bit-identical to those of earlier versions.

``on_progress`` (:mod:`scoring.metrics.training_progress`) hears of word2vec's epochs, the encoding of the
utterances, each batch (the running loss every ``PROGRESS_EVERY`` batches) and each epoch of each cell;
raising ``TrainingCancelled`` from it stops the training.
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

from scoring.metrics.bert_ruber.artifact import (
    CELLS_FOLDER,
    HASH_FILE,
    BertRuberArtifact,
    bert_ruber_artifact_hash,
    cell_weights_file,
)
from scoring.metrics.bert_ruber.cells import ALL_CELLS, BERT, RANKING, WORD2VEC, Cell, parse_cells
from scoring.metrics.bert_ruber.features import SentenceTable, encoder_table, word2vec_table
from scoring.metrics.contextual_encoder import TokenEncoder, device_settings
from scoring.metrics.ruber.artifact import write_shared_files
from scoring.metrics.ruber.corpus import CorpusError, QueryReplyPair, training_provenance, utterances
from scoring.metrics.ruber.ranking import negative_indices
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

if TYPE_CHECKING:
    import torch

    from scoring.metrics.bert_ruber.heads import UnreferencedHead

ARTIFACT_FORMAT = 1
BUCKET_WINDOW = 50  # batches per length-sorted window of the RNN cells
PROGRESS_EVERY = 20  # batches between updates of the progress bar's running loss (each reads the GPU)


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
    import torch

    threads = torch.get_num_threads()
    if config.torch_threads is not None:
        torch.set_num_threads(config.torch_threads)
    try:
        return _train(
            pairs,
            validation_pairs,
            config=config,
            output_dir=output_dir,
            encoder=encoder,
            progress=progress,
            on_progress=on_progress,
        )
    finally:
        torch.set_num_threads(threads)


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
    import torch
    from tqdm import tqdm

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
    random.seed(config.seed)
    np.random.seed(config.seed)
    device = torch.device(config.device or ("cuda" if torch.cuda.is_available() else "cpu"))

    started = time.perf_counter()
    sentences = [tokenize(text, config.language) for text in utterances(pairs)]
    vectors = train_word2vec(
        sentences,
        config=config.word2vec,
        seed=config.seed,
        on_epoch=word2vec_progress(on_progress, epochs=config.epochs, cells=len(cells)),
    )
    if len(vectors) == 0:
        raise CorpusError(
            f"no word occurs {config.word2vec.min_count} times in the corpus; word2vec is empty"
        )
    timings["word2vec_seconds"] = _since(started)

    texts = list(
        dict.fromkeys(text for pair in (*pairs, *validation_pairs) for text in (pair.query, pair.reply))
    )
    row = {text: index for index, text in enumerate(texts)}
    train_q = np.array([row[pair.query] for pair in pairs], dtype=np.int64)
    train_r = np.array([row[pair.reply] for pair in pairs], dtype=np.int64)
    valid_q = np.array([row[pair.query] for pair in validation_pairs], dtype=np.int64)
    valid_r = np.array([row[pair.reply] for pair in validation_pairs], dtype=np.int64)
    valid_n = valid_r[negative_indices(len(validation_pairs), seed=config.seed)]
    timings["distinct_texts"] = len(texts)

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
            bar = tqdm(total=len(texts), desc="encoding utterances", unit="text", disable=not progress)
            encoded = 0

            def encoded_chunk(count: int, bar: Any = bar) -> None:
                nonlocal encoded
                encoded += count
                bar.update(count)
                report_progress(
                    on_progress,
                    TrainingReport(
                        ENCODING_STAGE,
                        epochs=config.epochs,
                        step=encoded,
                        steps=len(texts),
                        cells=len(cells),
                    ),
                )

            tables[embedding] = encoder_table(
                texts, encoder, max_length=config.max_length, with_tokens=with_tokens, on_chunk=encoded_chunk
            )
            bar.close()
        timings[f"{embedding}_inputs_seconds"] = _since(stage)

    curves: dict[str, list[dict[str, float]]] = {}
    results: dict[str, dict[str, float]] = {}
    timings["cells"] = {}
    for cell_index, cell in enumerate(cells, start=1):
        stage = time.perf_counter()

        def cell_progress(report: TrainingReport, index: int = cell_index) -> None:
            report_progress(
                on_progress,
                dataclasses.replace(report, cell_index=index, cells=len(cells)),
            )

        state, curve, epoch_seconds = _train_cell(
            cell,
            tables[cell.embedding],
            (train_q, train_r),
            (valid_q, valid_r, valid_n),
            config=config,
            device=device,
            progress=progress,
            on_progress=cell_progress if on_progress is not None else None,
        )
        torch.save(state, output_dir / cell_weights_file(cell.name))
        best = max(curve, key=lambda epoch_row: epoch_row["validation_accuracy"])
        curves[cell.name] = curve
        results[cell.name] = {"best_epoch": best["epoch"], "validation_accuracy": best["validation_accuracy"]}
        timings["cells"][cell.name] = {"epoch_seconds": epoch_seconds, "total_seconds": _since(stage)}
    timings["total_seconds"] = _since(started)
    timings["device"] = str(device)
    timings["torch_threads"] = torch.get_num_threads()

    settings = _config_json(
        config, cells, pairs, validation_pairs, vectors_size=len(vectors), encoder=encoder
    )
    settings["results"] = results
    write_shared_files(output_dir, config=settings, vectors=vectors, curve=curves, timings=timings)
    content_hash = bert_ruber_artifact_hash(output_dir)
    (output_dir / HASH_FILE).write_text(content_hash + "\n", encoding="utf-8")
    return BertRuberArtifact(path=output_dir, content_hash=content_hash, config=settings, curve=curves)


def _train_cell(
    cell: Cell,
    table: SentenceTable,
    train: tuple[NDArray[np.int64], NDArray[np.int64]],
    validation: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]],
    *,
    config: BertRuberConfig,
    device: torch.device,
    progress: bool,
    on_progress: ProgressCallback | None = None,
) -> tuple[dict[str, Any], list[dict[str, float]], list[float]]:
    """(best epoch's state dict, curve rows, seconds per epoch) of one cell."""
    import torch
    from tqdm import tqdm

    from scoring.metrics.bert_ruber.heads import UnreferencedHead, score_rows, sentence_inputs

    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    head = UnreferencedHead(
        cell,
        input_dim=table.dimension,
        rnn_hidden=config.rnn_hidden,
        rnn_layers=config.rnn_layers,
        mlp_hidden=config.mlp_hidden,
    )
    head.set_input_statistics(*input_statistics(table, cell, np.unique(np.concatenate(train))))
    head.to(device)
    settings = device_settings(str(device))
    # the fused kernel does Adam's update of every parameter in one launch; the CPU keeps its default
    fused: dict[str, Any] = {"fused": True} if settings.is_cuda else {}
    optimiser = torch.optim.Adam(head.parameters(), lr=config.learning_rate, **fused)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimiser, mode="max", factor=config.lr_decay, patience=config.lr_patience
    )
    train_q, train_r = train
    valid_q, valid_r, valid_n = validation
    curve: list[dict[str, float]] = []
    epoch_seconds: list[float] = []
    best_accuracy, best_state, stale = -1.0, {}, 0
    for epoch in range(1, config.epochs + 1):
        epoch_started = time.perf_counter()
        head.train()
        batches = _epoch_batches(cell, table, train_q, train_r, config.batch_size, generator)
        # sum of loss x batch size, in float64 on the device: the same IEEE operations as summing
        # float(loss.item()) * size in Python, without waiting for the GPU at every step
        summed = torch.zeros((), dtype=torch.float64, device=device)
        count = 0
        bar = tqdm(batches, desc=f"{cell.name} epoch {epoch}", disable=not progress, leave=False)
        for step, batch in enumerate(bar, start=1):
            size = len(batch)
            query = head.encode_query(sentence_inputs(table, train_q[batch], cell, device))
            reply = head.encode_reply(sentence_inputs(table, train_r[batch], cell, device))
            # r-: another pair's reply of the same batch (offset 1..size-1, so never the pair's own)
            negatives = (torch.arange(size) + torch.randint(1, size, (size,), generator=generator)) % size
            loss = _loss(head, query, reply, reply[negatives.to(device)], config.margin)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            summed += loss.detach().double() * size
            count += size
            read_loss = step % PROGRESS_EVERY == 0 or step == len(batches)
            if progress and read_loss:
                bar.set_postfix(loss=f"{float(summed) / count:.4f}")
            if on_progress is not None:
                report_progress(
                    on_progress,
                    TrainingReport(
                        BATCH_STAGE,
                        epoch=epoch,
                        epochs=config.epochs,
                        step=step,
                        steps=len(batches),
                        # reading the sum waits for the device: only every PROGRESS_EVERY batches
                        loss=float(summed) / count if read_loss else None,
                        cell=cell.name,
                    ),
                )
        bar.close()
        total = float(summed)
        true_scores = np.array(
            score_rows(head, table, valid_q, valid_r, device=device, batch_size=settings.scorer_batch_size)
        )
        false_scores = np.array(
            score_rows(head, table, valid_q, valid_n, device=device, batch_size=settings.scorer_batch_size)
        )
        accuracy = float(np.mean(true_scores > false_scores))  # ties count as failures
        curve.append(
            {
                "epoch": epoch,
                "train_loss": round(total / count, 6),
                "validation_accuracy": round(accuracy, 6),
                "validation_loss": round(_validation_loss(cell, true_scores, false_scores, config.margin), 6),
                "learning_rate": optimiser.param_groups[0]["lr"],
            }
        )
        epoch_seconds.append(_since(epoch_started))
        report_progress(
            on_progress,
            TrainingReport(
                EPOCH_STAGE,
                epoch=epoch,
                epochs=config.epochs,
                step=len(batches),
                steps=len(batches),
                loss=curve[-1]["train_loss"],
                validation_accuracy=accuracy,
                validation_loss=curve[-1]["validation_loss"],
                cell=cell.name,
            ),
        )
        if progress:
            tqdm.write(
                f"{cell.name} epoch {epoch}: train loss {total / count:.4f}, validation accuracy {accuracy:.4f}"
            )
        scheduler.step(accuracy)
        if accuracy > best_accuracy:
            best_accuracy, stale = accuracy, 0
            best_state = {name: tensor.detach().cpu().clone() for name, tensor in head.state_dict().items()}
        else:
            stale += 1
            if stale >= config.patience:
                break
    return best_state, curve, epoch_seconds


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


def input_statistics(
    table: SentenceTable, cell: Cell, rows: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-dimension mean and standard deviation of the cell's inputs over the texts ``rows``: pooled
    vectors, or every token vector (summed in chunks: the token array can hold millions of rows)."""
    if cell.pooled:
        values = table.pooled[cell.representation][rows].astype(np.float64)
        return values.mean(axis=0), values.std(axis=0)
    assert table.tokens is not None
    total = np.zeros(table.dimension)
    squares = np.zeros(table.dimension)
    count = 0
    for start in range(0, len(rows), 4096):
        chunk = rows[start : start + 4096]
        starts, lengths = table.offsets[chunk], table.lengths[chunk]
        gathered = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths, strict=True)])
        values = table.tokens[gathered].astype(np.float64)
        total += values.sum(axis=0)
        squares += (values**2).sum(axis=0)
        count += len(values)
    mean = total / count
    return mean, np.sqrt(np.maximum(squares / count - mean**2, 0.0))


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
            "encoder": None
            if encoder is None
            else {
                "name": encoder.name,
                "content_hash": encoder.content_hash,
                "dimension": encoder.dimension,
                "language": encoder.language,
            },
            **training_provenance(config.corpus_description, pairs, validation_pairs),
        }
    )
    return settings


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 3)

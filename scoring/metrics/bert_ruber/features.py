"""Frozen sentence inputs of BERT-RUBER's unreferenced scorers (Ghazarian et al., 2019, sections 2.1.1-2.1.2).

Both embeddings are inputs, not parameters, in every cell:

- ``bert``: contextual token vectors from a :class:`~scoring.metrics.contextual_encoder.TokenEncoder`
  (all-MiniLM-L6-v2 by default; the paper's BERT-base is not installable offline here), frozen as in
  the paper, which feeds BERT's vectors to the scorer.
- ``word2vec``: the corpus's word2vec vectors of the tokens of ``scoring.metrics.tokenize`` (unknown
  words skipped). RUBER fine-tunes its embeddings (Tao et al., 2018, section 3.2); here they stay frozen, which
  keeps the word2vec and BERT cells comparable and lets the inputs be computed once per training run.

Every distinct text is turned into vectors once, into a :class:`SentenceTable`: max- and mean-pooled
sentence vectors (float32) for the pooling cells, and, when an RNN cell needs them, the token vectors
of the first ``max_length`` tokens, concatenated into one flat array (float16 for BERT: halves the
memory of ~90k DailyDialog utterances; the GRU computes in float32). A text with no vector (no known
word, or an empty string) gets one zero vector, so every cell scores every pair.

Only numpy here; torch is imported where the scorers are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scoring.metrics.bert_ruber.cells import Cell
from scoring.metrics.contextual_encoder import TokenEncoder
from scoring.metrics.tokenize import tokenize
from scoring.metrics.word_vectors import WordVectors

ENCODE_CHUNK = 2048  # texts per encode_tokens call: bounds the float32 vectors alive at once


@dataclass(frozen=True)
class SentenceTable:
    """Vectors of ``len(lengths)`` texts, row i for text i.

    ``pooled`` maps "max" and "mean" to ``[U, D]`` float32 arrays; ``tokens`` is the ``[N, D]`` flat token
    array (``None`` when no RNN cell needs it), text i's rows being ``offsets[i]:offsets[i] + lengths[i]``.
    """

    pooled: dict[str, NDArray[np.float32]]
    tokens: NDArray[np.floating] | None
    offsets: NDArray[np.int64]
    lengths: NDArray[np.int64]
    dimension: int

    def __len__(self) -> int:
        return len(self.lengths)


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


def word2vec_table(
    texts: Sequence[str],
    vectors: WordVectors,
    *,
    language: str,
    max_length: int,
    with_tokens: bool,
) -> SentenceTable:
    """The table of ``texts`` over word2vec ``vectors`` (tokenized for ``language``)."""
    return _table(
        (vectors.lookup(tokenize(text, language)) for text in texts),
        count=len(texts),
        dimension=vectors.dimension,
        max_length=max_length,
        with_tokens=with_tokens,
        token_dtype=np.float32,
    )


def encoder_table(
    texts: Sequence[str],
    encoder: TokenEncoder,
    *,
    max_length: int,
    with_tokens: bool,
    on_chunk: Callable[[int], None] | None = None,
) -> SentenceTable:
    """The table of ``texts`` over ``encoder``'s token vectors, encoded in chunks of similar length.

    ``on_chunk(n)`` is called after each chunk of ``n`` texts (a progress bar's update).
    """
    # Sorting by character length before chunking keeps the encoder's own length-sorted batches
    # homogeneous across the whole corpus, not only inside a chunk.
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))

    def vectors_in_order() -> list[NDArray[np.float32]]:
        found: list[NDArray[np.float32] | None] = [None] * len(texts)
        for start in range(0, len(order), ENCODE_CHUNK):
            chunk = order[start : start + ENCODE_CHUNK]
            encoded = encoder.encode_tokens([texts[i] for i in chunk])
            for index, matrix in zip(chunk, encoded, strict=True):
                # keep what the table needs; the float32 token matrix itself is dropped right away
                found[index] = _reduced(matrix, max_length=max_length, with_tokens=with_tokens)
            if on_chunk is not None:
                on_chunk(len(chunk))
        return [matrix for matrix in found if matrix is not None]

    return _table(
        vectors_in_order(),
        count=len(texts),
        dimension=encoder.dimension,
        max_length=max_length,
        with_tokens=with_tokens,
        token_dtype=np.float16,
        prepooled=True,
    )


def _reduced(matrix: NDArray[np.float32], *, max_length: int, with_tokens: bool) -> NDArray[np.float32]:
    """Rows [max, mean, token_1 .. token_k] of one text (k <= max_length, 0 without tokens)."""
    if matrix.shape[0] == 0:
        matrix = np.zeros((1, matrix.shape[1]), dtype=np.float32)
    pooled = np.stack([matrix.max(axis=0), matrix.mean(axis=0)])
    if not with_tokens:
        return pooled.astype(np.float32)
    return np.concatenate([pooled, matrix[:max_length]]).astype(np.float32)


def _table(
    matrices: Iterable[NDArray[np.float32]],
    *,
    count: int,
    dimension: int,
    max_length: int,
    with_tokens: bool,
    token_dtype: type[np.floating],
    prepooled: bool = False,
) -> SentenceTable:
    pooled_max = np.zeros((count, dimension), dtype=np.float32)
    pooled_mean = np.zeros((count, dimension), dtype=np.float32)
    lengths = np.zeros(count, dtype=np.int64)
    pieces: list[NDArray[np.floating]] = []
    for row, matrix in enumerate(matrices):
        if prepooled:
            pooled_max[row], pooled_mean[row] = matrix[0], matrix[1]
            tokens = matrix[2:]
        else:
            tokens = matrix if matrix.shape[0] else np.zeros((1, dimension), dtype=np.float32)
            pooled_max[row], pooled_mean[row] = tokens.max(axis=0), tokens.mean(axis=0)
            tokens = tokens[:max_length]
        if with_tokens:
            lengths[row] = tokens.shape[0]
            pieces.append(tokens.astype(token_dtype))
    offsets = np.zeros(count, dtype=np.int64)
    if count > 1:
        offsets[1:] = np.cumsum(lengths)[:-1]
    flat = np.concatenate(pieces) if with_tokens and pieces else None
    return SentenceTable(
        pooled={"max": pooled_max, "mean": pooled_mean},
        tokens=flat,
        offsets=offsets,
        lengths=lengths,
        dimension=dimension,
    )

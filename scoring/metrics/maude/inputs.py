"""The frozen inputs of MaUde's scorers, computed once per text (the encoding cache of BERT-RUBER,
``bert_ruber.features``, reused): numpy only, torch is imported where the scorers are.

Every distinct text (context turns, replies, negative replies) gets one row of a :class:`TextIndex`.
:class:`ExampleArrays` holds the examples as row indices: each example's context is a ragged run of
utterance rows (oldest first), its reply one row. The variants read:

- ``maude`` / ``bert-nli``: the encoder's pooled vector of every text (``pooling``: "mean", "max" or
  "mean-max", the two concatenated), :func:`encoder_vectors`;
- ``infersent`` / ``ruber``: word2vec token sequences of every text, and for infersent also one sequence per
  example for its concatenated context (the last ``max_context_tokens`` tokens), :func:`context_texts`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from scoring.metrics.bert_ruber.features import encoder_table
from scoring.metrics.contextual_encoder import TokenEncoder
from scoring.metrics.tokenize import tokenize

POOLINGS = ("mean", "max", "mean-max")


@dataclass
class TextIndex:
    """Distinct texts in first-seen order, and each one's row."""

    texts: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)

    def row(self, text: str) -> int:
        found = self.rows.get(text)
        if found is None:
            found = self.rows[text] = len(self.texts)
            self.texts.append(text)
        return found


@dataclass(frozen=True)
class ExampleArrays:
    """E examples as rows of a :class:`TextIndex`: example i's context is
    ``context_rows[context_offsets[i] : context_offsets[i] + context_lengths[i]]``."""

    context_offsets: NDArray[np.int64]
    context_lengths: NDArray[np.int64]
    context_rows: NDArray[np.int64]
    reply_rows: NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.reply_rows)

    def last_turn_rows(self, examples: NDArray[np.int64]) -> NDArray[np.int64]:
        """The row of each example's last context turn (RUBER's query)."""
        return self.context_rows[self.context_offsets[examples] + self.context_lengths[examples] - 1]

    def padded_context(self, examples: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """([B, T] context rows padded with row 0, [B] lengths) of ``examples``."""
        lengths = self.context_lengths[examples]
        padded = np.zeros((len(examples), int(lengths.max())), dtype=np.int64)
        for position, example in enumerate(examples):
            start = self.context_offsets[example]
            padded[position, : lengths[position]] = self.context_rows[start : start + lengths[position]]
        return padded, lengths


def example_arrays(
    contexts: Sequence[Sequence[str]], replies: Sequence[str], index: TextIndex, *, turns: int | None
) -> ExampleArrays:
    """The examples (context, reply) as rows of ``index`` (texts added as needed); each context is cut to
    its last ``turns`` turns (None: all), and an empty context stands as one empty turn."""
    if len(contexts) != len(replies):
        raise ValueError(f"{len(contexts)} contexts but {len(replies)} replies")
    if turns is not None and turns < 1:
        raise ValueError(f"turns must be at least 1, got {turns}")
    lengths: list[int] = []
    rows: list[int] = []
    for context in contexts:
        kept = list(context)[-turns:] if turns is not None else list(context)
        kept = kept or [""]
        lengths.append(len(kept))
        rows.extend(index.row(turn) for turn in kept)
    lengths_array = np.array(lengths, dtype=np.int64)
    offsets = np.zeros(len(lengths), dtype=np.int64)
    if len(lengths) > 1:
        offsets[1:] = np.cumsum(lengths_array)[:-1]
    return ExampleArrays(
        context_offsets=offsets,
        context_lengths=lengths_array,
        context_rows=np.array(rows, dtype=np.int64),
        reply_rows=np.array([index.row(reply) for reply in replies], dtype=np.int64),
    )


def encoder_vectors(
    texts: Sequence[str],
    encoder: TokenEncoder,
    *,
    pooling: str,
    on_chunk: Callable[[int], None] | None = None,
) -> NDArray[np.float32]:
    """[U, D] (or [U, 2D] for "mean-max") pooled encoder vectors of ``texts``."""
    if pooling not in POOLINGS:
        raise ValueError(f"unknown pooling {pooling!r}; known: {', '.join(POOLINGS)}")
    table = encoder_table(texts, encoder, max_length=0, with_tokens=False, on_chunk=on_chunk)
    if pooling == "mean-max":
        return np.concatenate([table.pooled["mean"], table.pooled["max"]], axis=1)
    return table.pooled[pooling]


def context_texts(
    arrays: ExampleArrays, texts: Sequence[str], *, language: str, max_tokens: int
) -> list[str]:
    """Each example's context as one text: its turns' tokens concatenated, the last ``max_tokens`` kept
    (InferSent reads the context as one sentence; the end of a long context is the part a reply answers)."""
    tokens: dict[int, list[str]] = {}
    joined = []
    for example in range(len(arrays)):
        start = arrays.context_offsets[example]
        words: list[str] = []
        for row in arrays.context_rows[start : start + arrays.context_lengths[example]]:
            if int(row) not in tokens:
                tokens[int(row)] = tokenize(texts[row], language)
            words.extend(tokens[int(row)])
        joined.append(" ".join(words[-max_tokens:]))
    return joined

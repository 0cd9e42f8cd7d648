"""From example and text rows to a variant's torch inputs, and batched scoring without gradients.

A :class:`Feed` holds what a variant reads (:mod:`.inputs`): the encoder's pooled vectors of every text
(MaUde, BERT-NLI), or word2vec token sequences of every text and of every example's joined context
(InferSent), or of every text only (RUBER, whose query is the last context turn).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from scoring.metrics.bert_ruber.features import SentenceTable, input_statistics
from scoring.metrics.bert_ruber.heads import sentence_inputs
from scoring.metrics.maude.inputs import ExampleArrays
from scoring.metrics.maude.scorers import RUBER_CELL, Scorer
from scoring.metrics.maude.variants import ENCODER_VARIANTS, INFERSENT


@dataclass(frozen=True)
class Feed:
    variant: str
    arrays: ExampleArrays
    device: torch.device
    vectors: NDArray[np.float32] | None = None  # [U, D] encoder vectors (MaUde, BERT-NLI)
    utterances: SentenceTable | None = None  # word2vec tokens of every text (InferSent, RUBER)
    contexts: SentenceTable | None = None  # word2vec tokens of each example's joined context (InferSent)

    @property
    def input_dim(self) -> int:
        if self.vectors is not None:
            return int(self.vectors.shape[1])
        assert self.utterances is not None
        return self.utterances.dimension

    def context(self, examples: NDArray[np.int64]) -> Any:
        if self.variant in ENCODER_VARIANTS:
            assert self.vectors is not None
            rows, lengths = self.arrays.padded_context(examples)
            return torch.from_numpy(self.vectors[rows]).to(self.device), torch.from_numpy(lengths)
        if self.variant == INFERSENT:
            assert self.contexts is not None
            return sentence_inputs(self.contexts, examples, RUBER_CELL, self.device)
        assert self.utterances is not None
        return sentence_inputs(self.utterances, self.arrays.last_turn_rows(examples), RUBER_CELL, self.device)

    def reply(self, rows: NDArray[np.int64]) -> Any:
        if self.variant in ENCODER_VARIANTS:
            assert self.vectors is not None
            return torch.from_numpy(self.vectors[rows]).to(self.device)
        assert self.utterances is not None
        return sentence_inputs(self.utterances, rows, RUBER_CELL, self.device)

    def statistics(self, rows: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per-dimension mean and standard deviation of the inputs of the texts ``rows``."""
        if self.vectors is not None:
            values = self.vectors[rows].astype(np.float64)
            return values.mean(axis=0), values.std(axis=0)
        assert self.utterances is not None
        return input_statistics(self.utterances, RUBER_CELL, rows)


def score_examples(
    scorer: Scorer,
    feed: Feed,
    examples: NDArray[np.int64],
    reply_rows: Sequence[NDArray[np.int64]],
    *,
    batch_size: int,
) -> list[NDArray[np.float64]]:
    """Scores in (0, 1) of each example's context against each array of ``reply_rows`` (one row per
    example: the true reply, a negative, ...); the context is encoded once per batch."""
    scorer.eval()
    found: list[list[float]] = [[] for _ in reply_rows]
    with torch.no_grad():
        for start in range(0, len(examples), batch_size):
            batch = examples[start : start + batch_size]
            context = scorer.encode_context(feed.context(batch))
            for position, rows in enumerate(reply_rows):
                reply = scorer.encode_reply(feed.reply(rows[start : start + batch_size]))
                found[position].extend(torch.sigmoid(scorer.logits(context, reply)).float().cpu().tolist())
    return [np.array(values, dtype=np.float64) for values in found]

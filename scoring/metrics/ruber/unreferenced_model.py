"""RUBER's neural unreferenced scorer s_U(q, r) (seed 000, section 3.2, Figure 3), in torch.

Word embeddings (initialised from the trained word2vec and fine-tuned: "All parameters are trained by
Adam") feed one bidirectional GRU for the query and another for the reply; a sentence vector is the
last hidden states of both directions, concatenated (q and r, each 2H). The features are
[q ; q^T M r ; r] with M a trained 2H x 2H matrix (the "quadratic feature"); an MLP with one tanh
hidden layer and a sigmoid output gives s_U in (0, 1).

Token ids: 0 is padding, 1 an unknown word, word2vec row i is id i + 2. A sentence with no token is
scored as the single token <unk> (a GRU needs one step), so s_U is always defined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

PAD_ID = 0
UNK_ID = 1
FIRST_WORD_ID = 2


def token_ids(tokens: Sequence[str], vocabulary: Mapping[str, int], *, max_length: int) -> list[int]:
    """Ids of the first ``max_length`` tokens (unknown words -> <unk>); [<unk>] for an empty sentence."""
    ids = [vocabulary[token] + FIRST_WORD_ID if token in vocabulary else UNK_ID for token in tokens]
    return ids[:max_length] or [UNK_ID]


def pad_batch(sequences: Sequence[Sequence[int]], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """A [B, T] padded id tensor on ``device`` and the [B] lengths (on the CPU, as packing wants)."""
    lengths = torch.tensor([len(sequence) for sequence in sequences], dtype=torch.long)
    padded = torch.full((len(sequences), int(lengths.max())), PAD_ID, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        padded[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
    return padded.to(device), lengths


class UnreferencedScorer(nn.Module):
    """s_U: Bi-GRU sentence vectors, [q ; q^T M r ; r], MLP (tanh hidden, sigmoid output)."""

    def __init__(
        self, *, vocabulary_size: int, embedding_dim: int, hidden_size: int, mlp_hidden: int
    ) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocabulary_size + FIRST_WORD_ID, embedding_dim, padding_idx=PAD_ID)
        self.query_gru = nn.GRU(embedding_dim, hidden_size, batch_first=True, bidirectional=True)
        self.reply_gru = nn.GRU(embedding_dim, hidden_size, batch_first=True, bidirectional=True)
        sentence = 2 * hidden_size
        self.quadratic = nn.Parameter(torch.empty(sentence, sentence))
        nn.init.xavier_uniform_(self.quadratic)
        self.mlp = nn.Sequential(nn.Linear(2 * sentence + 1, mlp_hidden), nn.Tanh(), nn.Linear(mlp_hidden, 1))

    def initialise_embeddings(self, word_vectors: np.ndarray) -> None:
        """Rows 2.. from word2vec ([V, D]); <pad> and <unk> start at zero."""
        with torch.no_grad():
            self.embedding.weight.zero_()
            self.embedding.weight[FIRST_WORD_ID:] = torch.from_numpy(
                np.array(word_vectors, dtype=np.float32)  # a writable copy
            )

    def encode_query(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self._encode(self.query_gru, ids, lengths)

    def encode_reply(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self._encode(self.reply_gru, ids, lengths)

    def match(self, query: torch.Tensor, reply: torch.Tensor) -> torch.Tensor:
        """s_U for [B, 2H] query and reply vectors: a [B] tensor in (0, 1)."""
        quadratic = ((query @ self.quadratic) * reply).sum(dim=1, keepdim=True)  # q^T M r
        features = torch.cat([query, quadratic, reply], dim=1)
        return torch.sigmoid(self.mlp(features)).squeeze(1)

    def forward(
        self,
        query_ids: torch.Tensor,
        query_lengths: torch.Tensor,
        reply_ids: torch.Tensor,
        reply_lengths: torch.Tensor,
    ) -> torch.Tensor:
        return self.match(
            self.encode_query(query_ids, query_lengths), self.encode_reply(reply_ids, reply_lengths)
        )

    def _encode(self, gru: nn.GRU, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = pack_padded_sequence(self.embedding(ids), lengths, batch_first=True, enforce_sorted=False)
        _, last = gru(packed)  # [2, B, H], in the batch's own order (packing un-sorts it)
        return torch.cat([last[0], last[1]], dim=1)


def score_pairs(
    model: UnreferencedScorer,
    queries: Sequence[Sequence[int]],
    replies: Sequence[Sequence[int]],
    *,
    device: torch.device,
    batch_size: int = 256,
) -> list[float]:
    """s_U of id sequences, in batches, without gradients (the model is put in eval mode)."""
    model.eval()
    scores: list[float] = []
    with torch.no_grad():
        for start in range(0, len(queries), batch_size):
            q_ids, q_lengths = pad_batch(queries[start : start + batch_size], device)
            r_ids, r_lengths = pad_batch(replies[start : start + batch_size], device)
            scores.extend(model(q_ids, q_lengths, r_ids, r_lengths).cpu().tolist())
    return scores

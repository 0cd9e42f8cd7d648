"""RUBER's neural unreferenced scorer s_U(q, r) (Tao et al., 2018, section 3.2, Figure 3), in torch.

Word embeddings (initialised from the trained word2vec and fine-tuned: "All parameters are trained by
Adam") feed one bidirectional GRU for the query and another for the reply; a sentence vector is the
last hidden states of both directions, concatenated (q and r, each 2H). The features are
[q ; q^T M r ; r] with M a trained 2H x 2H matrix (the "quadratic feature"); an MLP with one tanh
hidden layer and a sigmoid output gives s_U in (0, 1).

Token ids: 0 is padding, 1 an unknown word, word2vec row i is id i + 2. A sentence with no token is
scored as the single token <unk> (a GRU needs one step), so s_U is always defined.

Speed (benchmark 3): on the CPU the Bi-GRU runs on padded groups of similar length, one
direction at a time, with the same weights and the same result as the packed Bi-GRU (see
:meth:`UnreferencedScorer._grouped_last_states`). Sequences are padded once into one [N, T] tensor
(:func:`pad_all`) and a batch is a row selection trimmed to its longest member (:func:`take`), instead
of building tensors from Python lists for every batch; :func:`score_pairs` batches items of similar
length together and returns the scores in the caller's order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from torch import nn
from torch.func import functional_call
from torch.nn.utils.rnn import pack_padded_sequence

GROUP_ROWS = 64  # rows per padded group in the CPU Bi-GRU (see UnreferencedScorer._grouped_last_states)
GRU_WEIGHTS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
PAD_ID = 0
UNK_ID = 1
FIRST_WORD_ID = 2


def token_ids(tokens: Sequence[str], vocabulary: Mapping[str, int], *, max_length: int) -> list[int]:
    """Ids of the first ``max_length`` tokens (unknown words -> <unk>); [<unk>] for an empty sentence."""
    ids = [vocabulary[token] + FIRST_WORD_ID if token in vocabulary else UNK_ID for token in tokens]
    return ids[:max_length] or [UNK_ID]


class UnreferencedScorer(nn.Module):
    """s_U: Bi-GRU sentence vectors, [q ; q^T M r ; r], MLP (tanh hidden, sigmoid output)."""

    _one_way_gru: nn.GRU

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
        # a one-way GRU that only lends its code to `_one_way` (its own weights are never used): kept
        # out of the state dict and the parameters, created without drawing from torch's random stream
        with torch.random.fork_rng(devices=[]):
            object.__setattr__(self, "_one_way_gru", nn.GRU(embedding_dim, hidden_size, batch_first=True))

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
        embedded = self.embedding(ids)
        if embedded.device.type != "cpu":  # cuDNN runs packed sequences well
            packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
            _, last = gru(packed)  # [2, B, H], in the batch's own order (packing un-sorts it)
            return torch.cat([last[0], last[1]], dim=1)
        return self._grouped_last_states(gru, embedded, lengths.to(embedded.device))

    def _grouped_last_states(
        self, gru: nn.GRU, embedded: torch.Tensor, lengths: torch.Tensor
    ) -> torch.Tensor:
        """The packed Bi-GRU's last states, computed on padded groups of similar length (CPU).

        torch's CPU backward through a packed GRU is 1.5-2x slower than through a padded one, so each
        direction runs as a one-way GRU (this module's weights for that direction) over a padded tensor:
        forwards over the sentences as they are, its state after the last token taken; backwards over
        each sentence reversed within its own length, so that the padding comes after the first token
        too. Padding after the state that is taken cannot change it: the result is the packed one's.
        Rows are sorted by length and padded per group of GROUP_ROWS, so little padding is run.
        """
        order = torch.argsort(lengths, stable=True)
        pieces = []
        for start in range(0, len(order), GROUP_ROWS):
            rows = order[start : start + GROUP_ROWS]
            group_lengths = lengths[rows]
            steps = int(group_lengths.max())
            inputs = embedded[rows, :steps]
            last = (group_lengths - 1).unsqueeze(1)  # [G, 1]
            reverse = (last - torch.arange(steps, device=inputs.device).unsqueeze(0)).clamp(min=0)
            backwards = inputs.gather(1, reverse.unsqueeze(2).expand(-1, -1, inputs.shape[2]))
            pieces.append(
                torch.cat(
                    [
                        self._one_way(gru, "", inputs, last),
                        self._one_way(gru, "_reverse", backwards, last),
                    ],
                    dim=1,
                )
            )
        return torch.cat(pieces)[torch.argsort(order)]  # back to the batch's order

    def _one_way(self, gru: nn.GRU, suffix: str, inputs: torch.Tensor, last: torch.Tensor) -> torch.Tensor:
        """[G, H]: one direction of ``gru`` over ``inputs`` [G, T, D], the state at step ``last`` [G, 1]."""
        weights = {f"{name}_l0": getattr(gru, f"{name}_l0{suffix}") for name in GRU_WEIGHTS}
        outputs, _ = functional_call(self._one_way_gru, weights, (inputs,))
        return outputs.gather(1, last.unsqueeze(2).expand(-1, 1, outputs.shape[2])).squeeze(1)


def pad_all(sequences: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Every sequence in one [N, T] padded id tensor (T: the longest) and the [N] lengths, on the CPU."""
    lengths = torch.tensor([len(sequence) for sequence in sequences], dtype=torch.long)
    padded = torch.full(
        (len(sequences), int(lengths.max()) if len(sequences) else 0), PAD_ID, dtype=torch.long
    )
    for row, sequence in enumerate(sequences):
        padded[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
    return padded, lengths


def take(
    padded: torch.Tensor, lengths: torch.Tensor, rows: torch.Tensor, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """The batch ``rows`` of :func:`pad_all`'s tensors: ids trimmed to the batch's longest, on ``device``."""
    batch_lengths = lengths[rows]
    return padded[rows, : int(batch_lengths.max())].to(device), batch_lengths


def score_pairs(
    model: UnreferencedScorer,
    queries: Sequence[Sequence[int]],
    replies: Sequence[Sequence[int]],
    *,
    device: torch.device,
    batch_size: int = 256,
) -> list[float]:
    """s_U of id sequences, in batches of similar length, without gradients (the model is put in eval
    mode); the scores are in the order of ``queries``."""
    if not queries:
        return []
    model.eval()
    q_padded, q_lengths = pad_all(queries)
    r_padded, r_lengths = pad_all(replies)
    order = torch.argsort(q_lengths + r_lengths, stable=True)
    scores = torch.empty(len(queries))
    with torch.no_grad():
        for start in range(0, len(queries), batch_size):
            rows = order[start : start + batch_size]
            q_ids, q_batch_lengths = take(q_padded, q_lengths, rows, device)
            r_ids, r_batch_lengths = take(r_padded, r_lengths, rows, device)
            scores[rows] = model(q_ids, q_batch_lengths, r_ids, r_batch_lengths).float().cpu()
    return scores.tolist()

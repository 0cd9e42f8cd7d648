"""BERT-RUBER's unreferenced scorer for one factorial cell (Ghazarian et al., 2019, sections 2.1.2-2.1.3 and 4.3), in torch.

- Sentence representation: for ``rnn`` a 2-layer bidirectional GRU with 128 hidden units (section 4.3),
  one for the query and one for the reply as in RUBER (Tao et al., 2018, section 3.2); the sentence vector is
  the last states of both directions of the top layer. For ``max`` / ``mean`` the pooled token vectors
  are the sentence vectors as they are (no trainable encoder, section 2.1.2).
- Features [q ; q^T M r ; r] with a trained matrix M (RUBER's quadratic feature), then an MLP with
  three tanh hidden layers of 256, 512 and 128 units (section 4.3).

Two choices of scale the papers leave open, both needed for the 384-dimensional max-pooled MiniLM
vectors (norm ~13, per-dimension means ~0.5): with them as they are, a learning rate of 1e-3 drove the
first tanh layer into saturation and training collapsed to a constant score.

- The frozen inputs are standardised per dimension with the training texts' mean and standard deviation
  (buffers of the module, so saved with the weights and hashed).
- The quadratic feature is computed as q^T M r / S (S the sentence vector's size): the same family of
  functions (M/S is just another matrix), but Adam's per-entry steps on M move it S times less.
- Output: ``ranking`` -> one unit and a sigmoid, the score in (0, 1), trained with the hinge loss
  (section 2.1.3; RUBER eq. 3); ``ce`` -> two units and a softmax, the score is P(label 1 = true pair).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence

from scoring.metrics.bert_ruber.cells import RANKING, Cell
from scoring.metrics.bert_ruber.features import SentenceTable
from scoring.metrics.contextual_encoder import CPU_SCORER_BATCH_SIZE, autocast

SentenceInput = torch.Tensor | PackedSequence


class UnreferencedHead(nn.Module):
    """The scorer of one cell over frozen inputs of dimension ``input_dim``."""

    input_mean: torch.Tensor
    input_std: torch.Tensor

    def __init__(
        self,
        cell: Cell,
        *,
        input_dim: int,
        rnn_hidden: int,
        rnn_layers: int,
        mlp_hidden: Sequence[int],
    ) -> None:
        super().__init__()
        self.cell = cell
        self.query_rnn: nn.GRU | None = None
        self.reply_rnn: nn.GRU | None = None
        sentence_dim = input_dim
        if not cell.pooled:
            self.query_rnn = nn.GRU(
                input_dim, rnn_hidden, num_layers=rnn_layers, batch_first=True, bidirectional=True
            )
            self.reply_rnn = nn.GRU(
                input_dim, rnn_hidden, num_layers=rnn_layers, batch_first=True, bidirectional=True
            )
            sentence_dim = 2 * rnn_hidden
        self.register_buffer("input_mean", torch.zeros(input_dim))
        self.register_buffer("input_std", torch.ones(input_dim))
        self.quadratic = nn.Parameter(torch.empty(sentence_dim, sentence_dim))
        nn.init.xavier_uniform_(self.quadratic)
        layers: list[nn.Module] = []
        width = 2 * sentence_dim + 1
        for hidden in mlp_hidden:
            layers += [nn.Linear(width, hidden), nn.Tanh()]
            width = hidden
        layers.append(nn.Linear(width, 1 if cell.objective == RANKING else 2))
        self.mlp = nn.Sequential(*layers)

    def encode_query(self, inputs: SentenceInput) -> torch.Tensor:
        return self._encode(self.query_rnn, inputs)

    def encode_reply(self, inputs: SentenceInput) -> torch.Tensor:
        return self._encode(self.reply_rnn, inputs)

    def logits(self, query: torch.Tensor, reply: torch.Tensor) -> torch.Tensor:
        """[B, 1] (ranking) or [B, 2] (ce) logits for [B, S] query and reply sentence vectors."""
        scale = 1.0 / self.quadratic.shape[0]
        quadratic = ((query @ self.quadratic) * reply).sum(dim=1, keepdim=True) * scale  # q^T M r / S
        result: torch.Tensor = self.mlp(torch.cat([query, quadratic, reply], dim=1))
        return result

    def score(self, query: torch.Tensor, reply: torch.Tensor) -> torch.Tensor:
        """The unreferenced score in (0, 1), a [B] tensor: sigmoid (ranking) or P(true pair) (ce)."""
        logits = self.logits(query, reply)
        if self.cell.objective == RANKING:
            return torch.sigmoid(logits).squeeze(1)
        return torch.softmax(logits, dim=1)[:, 1]

    def set_input_statistics(self, mean: NDArray[np.floating], std: NDArray[np.floating]) -> None:
        """The per-dimension mean and standard deviation the inputs are standardised with."""
        with torch.no_grad():
            self.input_mean.copy_(torch.from_numpy(np.asarray(mean, dtype=np.float32)))
            self.input_std.copy_(torch.from_numpy(np.maximum(np.asarray(std, dtype=np.float32), 1e-6)))

    def _standardised(self, values: torch.Tensor) -> torch.Tensor:
        return (values - self.input_mean) / self.input_std

    def _encode(self, rnn: nn.GRU | None, inputs: SentenceInput) -> torch.Tensor:
        if rnn is None:
            assert isinstance(inputs, torch.Tensor)
            return self._standardised(inputs)
        assert isinstance(inputs, PackedSequence)
        _, last = rnn(
            inputs._replace(data=self._standardised(inputs.data))
        )  # [layers * 2, B, H], in the batch's own order (packing un-sorts it)
        return torch.cat([last[-2], last[-1]], dim=1)  # the top layer's forward and backward states


def sentence_inputs(
    table: SentenceTable, rows: NDArray[np.int64], cell: Cell, device: torch.device
) -> SentenceInput:
    """The inputs of the texts ``rows`` of ``table`` for ``cell``: [B, D] pooled vectors, or a packed batch
    of token sequences for the GRU (float32 on ``device``)."""
    if cell.pooled:
        return torch.from_numpy(table.pooled[cell.representation][rows]).to(device)
    assert table.tokens is not None, "an RNN cell needs a table built with tokens"
    lengths = table.lengths[rows]
    starts = table.offsets[rows]
    gathered = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths, strict=True)])
    # Padded on the host and copied once: on CUDA, padding a list of B tensors (pack_sequence) is B
    # small copies on the device. The packed data is the same values either way.
    padded = np.zeros((len(rows), int(lengths.max()), table.dimension), dtype=np.float32)
    ends = np.cumsum(lengths)
    positions = np.arange(len(gathered)) - np.repeat(ends - lengths, lengths)
    padded[np.repeat(np.arange(len(rows)), lengths), positions] = table.tokens[gathered]
    return pack_padded_sequence(
        torch.from_numpy(padded).to(device),
        torch.from_numpy(lengths),
        batch_first=True,
        enforce_sorted=False,
    )


def score_rows(
    head: UnreferencedHead,
    table: SentenceTable,
    query_rows: NDArray[np.int64],
    reply_rows: NDArray[np.int64],
    *,
    device: torch.device,
    batch_size: int = CPU_SCORER_BATCH_SIZE,
    autocast_dtype: str | None = None,
) -> list[float]:
    """Scores of (query_rows[i], reply_rows[i]) pairs of ``table``, batched, without gradients.

    ``autocast_dtype`` ("bfloat16") runs the head under ``torch.autocast`` on ``device``; scores are
    returned as float32 values either way. :class:`~scoring.metrics.contextual_encoder.DeviceSettings`
    chooses both per device (float32 everywhere, larger batches on CUDA).
    """
    head.eval()
    scores: list[float] = []
    with torch.no_grad(), autocast(device.type, autocast_dtype):
        for start in range(0, len(query_rows), batch_size):
            query = head.encode_query(
                sentence_inputs(table, query_rows[start : start + batch_size], head.cell, device)
            )
            reply = head.encode_reply(
                sentence_inputs(table, reply_rows[start : start + batch_size], head.cell, device)
            )
            scores.extend(head.score(query, reply).float().cpu().tolist())
    return scores

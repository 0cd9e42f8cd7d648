"""MaUde's scorer modules in torch (Sinha et al., 2020, eq. 1 and eq. 4; :mod:`.variants` names them).

:class:`DialogScorer` is MaUde, BERT-NLI and InferSent: ``encode_context`` gives c, ``encode_reply`` h_r,
and ``logits`` the pre-sigmoid score of f_t([h_r, c, h_r * c, h_r - c]) (eq. 4). RUBER's baseline is
BERT-RUBER's :class:`~scoring.metrics.bert_ruber.heads.UnreferencedHead` behind the same three methods
(:class:`RuberScorer`). The score is ``sigmoid(logits)`` in (0, 1) for every variant.

Inputs are standardised per dimension with the training texts' mean and standard deviation (buffers,
saved and hashed with the weights), as BERT-RUBER's heads are: raw MiniLM vectors drove the first layers
into saturation there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from scoring.metrics.bert_ruber.cells import parse_cell
from scoring.metrics.bert_ruber.heads import UnreferencedHead
from scoring.metrics.maude.variants import INFERSENT, MAUDE, RUBER

RUBER_CELL = parse_cell("word2vec-rnn-ranking")  # one sigmoid output: NCE trains it like the others


class DialogScorer(nn.Module):
    """MaUde (``maude``), BERT-NLI (``bert-nli``) or InferSent (``infersent``) over ``input_dim`` inputs."""

    input_mean: torch.Tensor
    input_std: torch.Tensor

    def __init__(
        self,
        variant: str,
        *,
        input_dim: int,
        dim: int = 300,
        rnn_hidden: int = 150,
        mlp_hidden: int = 200,
        dropout: float = 0.2,
    ) -> None:
        super().__init__()
        self.variant = variant
        self.register_buffer("input_mean", torch.zeros(input_dim))
        self.register_buffer("input_std", torch.ones(input_dim))
        self.word_rnn: nn.LSTM | None = None
        self.down: nn.Linear | None = None
        self.dialog_rnn: nn.LSTM | None = None
        if variant == INFERSENT:
            self.word_rnn = nn.LSTM(input_dim, rnn_hidden, batch_first=True, bidirectional=True)
            dim = 2 * rnn_hidden
            self.to_reply = nn.Linear(dim, dim)
        else:
            self.down = nn.Linear(input_dim, dim)  # D_g
            if variant == MAUDE:
                self.dialog_rnn = nn.LSTM(dim, rnn_hidden, batch_first=True, bidirectional=True)  # f_R
                self.to_reply = nn.Linear(2 * rnn_hidden, dim)  # W
            else:
                self.to_reply = nn.Linear(dim, dim)
        self.decoder = nn.Sequential(  # f_t
            nn.Linear(4 * dim, mlp_hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(mlp_hidden, 1)
        )

    def set_input_statistics(self, mean: NDArray[np.floating], std: NDArray[np.floating]) -> None:
        with torch.no_grad():
            self.input_mean.copy_(torch.from_numpy(np.asarray(mean, dtype=np.float32)))
            self.input_std.copy_(torch.from_numpy(np.maximum(np.asarray(std, dtype=np.float32), 1e-6)))

    def encode_context(self, inputs: Any) -> torch.Tensor:
        """c: from (padded [B, T, D] utterance vectors, [B] lengths), or a packed token sequence (InferSent)."""
        if self.word_rnn is not None:
            return self.to_reply(self._bilstm_max(self.word_rnn, self._standardised_packed(inputs)))
        padded, lengths = inputs
        assert self.down is not None
        states = self.down(self._standardised(padded))  # h_u = D_g f_e(u), [B, T, d]
        if self.dialog_rnn is not None:
            packed = pack_padded_sequence(states, lengths, batch_first=True, enforce_sorted=False)
            return self.to_reply(self._bilstm_max(self.dialog_rnn, packed))  # c = W pool(h')
        mask = (
            torch.arange(states.shape[1], device=states.device)[None, :] < lengths.to(states.device)[:, None]
        )
        summed = (states * mask.unsqueeze(2)).sum(dim=1)
        return self.to_reply(summed / lengths.to(states.device).unsqueeze(1))  # BERT-NLI: the mean, then W

    def encode_reply(self, inputs: Any) -> torch.Tensor:
        """h_r: from [B, D] reply vectors, or a packed token sequence (InferSent)."""
        if self.word_rnn is not None:
            return self._bilstm_max(self.word_rnn, self._standardised_packed(inputs))
        assert self.down is not None
        return self.down(self._standardised(inputs))

    def logits(self, context: torch.Tensor, reply: torch.Tensor) -> torch.Tensor:
        """[B] pre-sigmoid scores of f_t([h_r, c, h_r * c, h_r - c]) (eq. 4, Conneau et al.'s f_comb)."""
        features = torch.cat([reply, context, reply * context, reply - context], dim=1)
        result: torch.Tensor = self.decoder(features).squeeze(1)
        return result

    def _standardised(self, values: torch.Tensor) -> torch.Tensor:
        return (values - self.input_mean) / self.input_std

    def _standardised_packed(self, inputs: PackedSequence) -> PackedSequence:
        return inputs._replace(data=self._standardised(inputs.data))

    @staticmethod
    def _bilstm_max(rnn: nn.LSTM, packed: PackedSequence) -> torch.Tensor:
        """Max over time of a BiLSTM's states (valid steps only), [B, 2H] in the batch's order."""
        outputs, _ = rnn(packed)
        padded, _ = pad_packed_sequence(outputs, batch_first=True, padding_value=float("-inf"))
        return padded.max(dim=1).values


class RuberScorer(nn.Module):
    """RUBER's unreferenced scorer (BERT-RUBER's word2vec-rnn-ranking head) over the last context turn."""

    def __init__(self, *, input_dim: int, rnn_hidden: int = 128, rnn_layers: int = 2) -> None:
        super().__init__()
        self.variant = RUBER
        self.head = UnreferencedHead(
            RUBER_CELL,
            input_dim=input_dim,
            rnn_hidden=rnn_hidden,
            rnn_layers=rnn_layers,
            mlp_hidden=(256, 512, 128),
        )

    def set_input_statistics(self, mean: NDArray[np.floating], std: NDArray[np.floating]) -> None:
        self.head.set_input_statistics(mean, std)

    def encode_context(self, inputs: Any) -> torch.Tensor:
        return self.head.encode_query(inputs)

    def encode_reply(self, inputs: Any) -> torch.Tensor:
        return self.head.encode_reply(inputs)

    def logits(self, context: torch.Tensor, reply: torch.Tensor) -> torch.Tensor:
        return self.head.logits(context, reply).squeeze(1)


Scorer = DialogScorer | RuberScorer


def build_scorer(variant: str, *, input_dim: int, settings: dict[str, Any]) -> Scorer:
    """The untrained scorer of ``variant`` with the artifact's hyper-parameters ``settings``."""
    if variant == RUBER:
        return RuberScorer(input_dim=input_dim)
    return DialogScorer(
        variant,
        input_dim=input_dim,
        dim=int(settings["dim"]),
        rnn_hidden=int(settings["rnn_hidden"]),
        mlp_hidden=int(settings["mlp_hidden"]),
        dropout=float(settings["dropout"]),
    )

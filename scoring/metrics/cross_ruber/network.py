"""Cross-RUBER's torch module: MiniLM split at layer k, turn embeddings, and the interaction head.

- ``lower_states``: word pieces of ONE utterance -> MiniLM's embeddings and its lower k layers (frozen
  for k > 0, so computed once per utterance and cached: :mod:`.token_cache`). Each utterance keeps its
  own [CLS]/[SEP] and its own absolute positions 0..n-1, as MiniLM saw sentences in pre-training.
- ``logits``: the top 6 - k layers over the context's and the reply's lower states put side by side.
  Absolute positions already sit inside the lower states, so the top layers can tell words apart within
  an utterance but not which utterance a word is in; a learned *turn embedding* (0 = the reply, 1 = the
  newest context turn, 2 = the one before ...) is added to every token's state first. It starts at zero,
  so the pre-trained top layers first see exactly the states they were trained on (BERT's segment
  embeddings, Devlin et al. 2019, play the same role between two sentences).
  The interaction is the top layers' self-attention: ``reply-reads-context`` lets every reply token
  attend to the context's tokens and the reply's (context tokens attend to the context only), so one
  context pass serves all of its candidate replies; ``joint`` is the plain cross-encoder, full
  self-attention over [context; reply], one pass per (context, reply); ``separate`` reads the two
  apart (a fine-tuned bi-encoder: what the token-level interaction buys, measured against it).
- The head reads the mean-pooled reply states h_r and context states c (MiniLM's own pooling) through
  MaUde's combination [h_r, c, h_r * c, h_r - c] (Sinha et al., 2020, eq. 4) and an MLP to one logit.

Every layer runs through :func:`layer_forward`, which calls the Hugging Face ``BertLayer``'s own
sub-modules (projections, output LayerNorms, feed-forward), so loading MiniLM's weights gives MiniLM's
function: evaluated, it reproduces ``BertModel``'s last hidden state exactly (tested). In training the
hidden-state dropout (MiniLM's 0.1) stays and the dropout on attention probabilities is left out: on the
CPU it made each trained layer's step ~1.5x slower (torch's fused attention has no dropout there).

Replies come in groups of similar length (:class:`ReplyBatch` each), so that a short reply is not padded
to the longest of the batch: the context's keys and values of every top layer are computed once and each
group reads them (``reply-reads-context``), or is joined to its contexts (``joint``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as functional
from torch import nn

from scoring.metrics.cross_ruber.config import GATED, INTERACTIONS, JOINT, SEPARATE


@dataclass(frozen=True)
class ContextBatch:
    """B contexts as padded token states: ``states`` [B, L, D], ``turns`` [B, L] (1 = newest turn),
    ``mask`` [B, L] (True where a token is)."""

    states: torch.Tensor
    turns: torch.Tensor
    mask: torch.Tensor


@dataclass(frozen=True)
class ReplyBatch:
    """A group of N replies: ``states`` [N, L, D], ``mask`` [N, L]; ``owner`` [N]: the context (row of
    the :class:`ContextBatch`) each reply is scored against."""

    states: torch.Tensor
    mask: torch.Tensor
    owner: torch.Tensor


def layer_forward(
    layer: Any,
    states: torch.Tensor,
    mask: torch.Tensor,
    *,
    memory: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
    gate: torch.Tensor | None = None,
    return_keys: bool = False,
) -> Any:
    """One BERT layer over ``states`` [N, L, D] (``mask`` [N, L]).

    ``memory`` = (keys, values [N, H, M, d], mask [N, M]) of other tokens (a context): without ``gate``
    they are put before the states' own keys, one softmax over both; with ``gate`` ([H], per head) the
    states attend to themselves as pre-trained and, in a second softmax, to the memory, added as
    tanh(gate) x that attention (Flamingo's gated cross-attention, Alayrac et al. 2022: a gate at 0 is
    the pre-trained layer). With ``return_keys`` also returns this layer's keys and values of ``states``."""
    attention = layer.attention.self
    count, length, _ = states.shape
    heads, size = attention.num_attention_heads, attention.attention_head_size

    def split(values: torch.Tensor) -> torch.Tensor:
        return values.view(count, length, heads, size).transpose(1, 2)

    query, key, value = (
        split(attention.query(states)),
        split(attention.key(states)),
        split(attention.value(states)),
    )
    keys, values, key_mask = key, value, mask
    if memory is not None and gate is None:
        keys = torch.cat([memory[0], key], dim=2)
        values = torch.cat([memory[1], value], dim=2)
        key_mask = torch.cat([memory[2], mask], dim=1)
    # no dropout on attention probabilities (module docstring)
    attended = functional.scaled_dot_product_attention(
        query, keys, values, attn_mask=key_mask[:, None, None, :], scale=attention.scaling
    )
    if memory is not None and gate is not None:
        crossed = functional.scaled_dot_product_attention(
            query, memory[0], memory[1], attn_mask=memory[2][:, None, None, :], scale=attention.scaling
        )
        attended = attended + torch.tanh(gate)[None, :, None, None] * crossed
    attended = attended.transpose(1, 2).reshape(count, length, heads * size)
    attended = layer.attention.output(attended, states)
    output = layer.output(layer.intermediate(attended), attended)
    if return_keys:
        return output, key, value
    return output


def masked_mean(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``states`` [N, L, D] over the positions where ``mask`` [N, L] is True."""
    weights = mask.to(states.dtype).unsqueeze(-1)
    return (states * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)


class CrossRuberNet(nn.Module):
    """MiniLM (a Hugging Face ``BertModel``) cut at ``frozen_layers``, with turn embeddings and the head."""

    def __init__(
        self,
        bert: Any,
        *,
        frozen_layers: int,
        max_turns: int,
        head_hidden: int,
        dropout: float,
        interaction: str,
    ) -> None:
        super().__init__()
        if interaction not in INTERACTIONS:
            raise ValueError(f"unknown interaction {interaction!r}")
        layers = list(bert.encoder.layer)
        if not 0 <= frozen_layers < len(layers):
            raise ValueError(f"frozen_layers must be 0..{len(layers) - 1}, got {frozen_layers}")
        dimension = int(bert.config.hidden_size)
        self.frozen_layers = frozen_layers
        self.interaction = interaction
        self.dimension = dimension
        self.embeddings = bert.embeddings
        self.lower = nn.ModuleList(layers[:frozen_layers])
        self.upper = nn.ModuleList(layers[frozen_layers:])
        self.turn_embeddings = nn.Embedding(max_turns + 1, dimension)
        nn.init.zeros_(self.turn_embeddings.weight)
        heads = int(bert.config.num_attention_heads)
        # one gate per trained layer and head, at 0: the reply first reads as MiniLM reads it alone
        self.gates = nn.Parameter(torch.zeros(len(self.upper), heads)) if interaction == GATED else None
        self.head = nn.Sequential(
            nn.Linear(4 * dimension, head_hidden),
            nn.Tanh(),
            nn.Dropout(dropout),
            nn.Linear(head_hidden, 1),
        )
        if frozen_layers > 0:
            for parameter in [*self.embeddings.parameters(), *self.lower.parameters()]:
                parameter.requires_grad_(False)
        # The encoder's own top layers, untouched: the referenced score's sentence vectors
        # (config "frozen-cosine") are MiniLM's, whatever the training does to ``upper``.
        self.pretrained_upper = copy.deepcopy(self.upper)
        for parameter in self.pretrained_upper.parameters():
            parameter.requires_grad_(False)

    @property
    def trained_prefixes(self) -> tuple[str, ...]:
        """The parameter names a saved artifact holds: the trained ones (all of MiniLM when k = 0)."""
        found = ("upper.", "turn_embeddings.", "head.", "gates")
        return found if self.frozen_layers > 0 else ("embeddings.", *found)

    def trained_state(self) -> dict[str, torch.Tensor]:
        return {
            name: tensor.detach().cpu().clone()
            for name, tensor in self.state_dict().items()
            if name.startswith(self.trained_prefixes)
        }

    def load_trained_state(self, state: dict[str, torch.Tensor]) -> None:
        expected = set(self.trained_state())
        if set(state) != expected:
            missing, extra = sorted(expected - set(state)), sorted(set(state) - expected)
            raise ValueError(
                f"weights do not fit this network: missing {missing[:3]}, unexpected {extra[:3]}"
            )
        self.load_state_dict(state, strict=False)

    def train(self, mode: bool = True) -> CrossRuberNet:
        super().train(mode)
        if self.frozen_layers > 0:  # frozen parts never apply dropout: their states are cached
            self.embeddings.eval()
            self.lower.eval()
        self.pretrained_upper.eval()
        return self

    def lower_states(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """[N, L, D] states after the embeddings and the lower k layers of N utterances' word pieces."""
        states = self.embeddings(input_ids=ids)
        for layer in self.lower:
            states = layer_forward(layer, states, mask)
        return states

    def logits(self, contexts: ContextBatch, groups: Sequence[ReplyBatch]) -> list[torch.Tensor]:
        """Per group of replies, [n] logits: each reply against its context (``owner``)."""
        context = contexts.states + self.turn_embeddings(contexts.turns)
        if self.interaction == JOINT:
            return [self._joint_logits(context, contexts.mask, group) for group in groups]
        memories = []
        for layer in self.upper:
            next_context, keys, values = layer_forward(layer, context, contexts.mask, return_keys=True)
            memories.append((keys, values))
            context = next_context
        context_vectors = masked_mean(context, contexts.mask)
        found = []
        for group in groups:
            reply, owner = group.states + self.turn_embeddings.weight[0], group.owner
            for number, (layer, (keys, values)) in enumerate(zip(self.upper, memories, strict=True)):
                memory = (
                    None
                    if self.interaction == SEPARATE
                    else (keys[owner], values[owner], contexts.mask[owner])
                )
                gate = None if self.gates is None else self.gates[number]
                reply = layer_forward(layer, reply, group.mask, memory=memory, gate=gate)
            found.append(self._head(masked_mean(reply, group.mask), context_vectors[owner]))
        return found

    def _joint_logits(
        self, context: torch.Tensor, context_mask: torch.Tensor, group: ReplyBatch
    ) -> torch.Tensor:
        owner, width = group.owner, context.shape[1]
        joined = torch.cat([context[owner], group.states + self.turn_embeddings.weight[0]], dim=1)
        joined_mask = torch.cat([context_mask[owner], group.mask], dim=1)
        for layer in self.upper:
            joined = layer_forward(layer, joined, joined_mask)
        return self._head(
            masked_mean(joined[:, width:], group.mask), masked_mean(joined[:, :width], context_mask[owner])
        )

    def _head(self, reply: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """MaUde's f_comb [h_r, c, h_r * c, h_r - c] (Sinha et al., 2020, eq. 4) -> MLP -> one logit per reply."""
        return self.head(torch.cat([reply, context, reply * context, reply - context], dim=-1)).squeeze(-1)

    def sentence_vectors(self, states: torch.Tensor, mask: torch.Tensor, *, pretrained: bool) -> torch.Tensor:
        """[N, D] mean-pooled top-layer states of N utterances read alone: MiniLM's own sentence vectors
        (``pretrained``) or the fine-tuned layers' (as a reply, turn 0, with no context)."""
        if not pretrained:
            states = states + self.turn_embeddings.weight[0]
        for layer in self.pretrained_upper if pretrained else self.upper:
            states = layer_forward(layer, states, mask)
        return masked_mean(states, mask)


def load_bert(model_path: str) -> Any:
    """A fresh copy of the Hugging Face model in ``model_path`` (its own weights: training changes them)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import AutoModel

    return AutoModel.from_pretrained(model_path, local_files_only=True).eval()


def load_tokenizer(model_path: str) -> Any:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path, local_files_only=True)

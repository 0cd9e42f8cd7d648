"""From text rows to the network's padded inputs (:class:`~.network.ContextBatch`, ``ReplyBatch``).

A context is the rows of its turns, oldest first. Its sequence holds the newest turns that fit in
``max_tokens`` word pieces, each turn with its own [CLS]/[SEP] and turn number (1 = the newest); the
newest turn is always kept, cut to ``max_tokens`` if it is longer (the reply answers the end of a
dialog, so older turns go first). A reply is one row.

Where states come from (:class:`StateSource`): a :class:`~.token_states.StateTable` of cached lower-layer
states (frozen k > 0), or the network's own embeddings and lower layers run on the word pieces of the
batch's texts (``LiveSource``: k = 0, the whole encoder fine-tuned, e.g. on CUDA).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from scoring.metrics.cross_ruber.token_states import StateTable, TokenIds


@dataclass(frozen=True)
class Layout:
    """Where each cell of an [n, L] grid takes its state from: token ``positions`` of text ``rows``
    (only where ``mask``), and each cell's ``turns`` number (0 for replies)."""

    rows: NDArray[np.int64]
    positions: NDArray[np.int64]
    turns: NDArray[np.int64]
    mask: NDArray[np.bool_]


def context_layout(
    contexts: Sequence[Sequence[int]], lengths: NDArray[np.int64], *, max_tokens: int
) -> Layout:
    """The :class:`Layout` of contexts (rows of their turns, oldest first; ``lengths`` per row)."""
    pieces: list[list[tuple[int, int, int]]] = []  # per context: (row, tokens kept, turn number)
    for turns in contexts:
        budget, kept = max_tokens, []
        for number, row in enumerate(reversed(list(turns)), start=1):
            size = int(lengths[row])
            if size > budget:
                if number == 1:
                    kept.append((int(row), budget, number))
                break
            kept.append((int(row), size, number))
            budget -= size
        pieces.append(kept[::-1])
    width = max((sum(size for _, size, _ in kept) for kept in pieces), default=0)
    rows = np.zeros((len(pieces), width), dtype=np.int64)
    positions = np.zeros_like(rows)
    numbers = np.zeros_like(rows)
    mask = np.zeros(rows.shape, dtype=bool)
    for index, kept in enumerate(pieces):
        column = 0
        for row, size, number in kept:
            rows[index, column : column + size] = row
            positions[index, column : column + size] = np.arange(size)
            numbers[index, column : column + size] = number
            mask[index, column : column + size] = True
            column += size
    return Layout(rows=rows, positions=positions, turns=numbers, mask=mask)


def reply_layout(replies: Sequence[int] | NDArray[np.int64], lengths: NDArray[np.int64]) -> Layout:
    """The :class:`Layout` of single-utterance rows (replies, or texts read alone)."""
    replies = np.asarray(replies, dtype=np.int64)
    sizes = lengths[replies]
    width = int(sizes.max()) if len(replies) else 0
    positions = np.broadcast_to(np.arange(width), (len(replies), width)).copy()
    mask = positions < sizes[:, None]
    rows = np.broadcast_to(replies[:, None], (len(replies), width)).copy()
    return Layout(rows=rows, positions=positions, turns=np.zeros_like(rows), mask=mask)


class StateSource(Protocol):
    """Gives the lower-layer states of :class:`Layout` grids as torch tensors."""

    def states(self, layouts: Sequence[Layout], device: Any) -> list[Any]:
        """One [n, L, D] float32 tensor per layout (zeros outside its mask)."""
        ...


@dataclass(frozen=True)
class TableSource:
    """States read from a :class:`StateTable` (cached, frozen lower layers)."""

    table: StateTable

    def states(self, layouts: Sequence[Layout], device: Any) -> list[Any]:
        import torch

        return [
            torch.from_numpy(
                self.table.padded(layout.rows[layout.mask], layout.positions[layout.mask], layout.mask)
            ).to(device)
            for layout in layouts
        ]


@dataclass(frozen=True)
class LiveSource:
    """States computed by ``net.lower_states`` on the word pieces of the layouts' texts, each distinct
    text once per call; with gradients when the network's embeddings train (k = 0)."""

    net: Any
    tokens: TokenIds

    def states(self, layouts: Sequence[Layout], device: Any) -> list[Any]:
        import torch

        distinct, inverse = np.unique(
            np.concatenate([layout.rows[layout.mask] for layout in layouts]), return_inverse=True
        )
        ids, mask = self.tokens.padded(distinct)
        computed = self.net.lower_states(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device))
        found, start = [], 0
        for layout in layouts:
            count = int(layout.mask.sum())
            local = torch.from_numpy(inverse[start : start + count]).to(device)
            positions = torch.from_numpy(layout.positions[layout.mask]).to(device)
            grid = computed.new_zeros((*layout.mask.shape, computed.shape[-1]))
            grid[torch.from_numpy(layout.mask).to(device)] = computed[local, positions]
            found.append(grid)
            start += count
        return found


def network_inputs(
    source: StateSource,
    contexts: Layout,
    replies: Layout,
    owner: NDArray[np.int64],
    device: Any,
    *,
    group_tokens: int = 1024,
) -> tuple[Any, list[Any], NDArray[np.int64]]:
    """(ContextBatch, reply groups, order) on ``device``: reply j is scored against context ``owner[j]``.

    Replies are sorted by length and cut into groups of at most ``group_tokens`` padded word pieces;
    ``order`` lists the replies group after group, so ``logits[order] = torch.cat(net.logits(...))``."""
    import torch

    from scoring.metrics.cross_ruber.network import ContextBatch, ReplyBatch

    sizes = replies.mask.sum(axis=1)
    order = np.argsort(sizes, kind="stable")
    groups: list[NDArray[np.int64]] = []
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and (end + 1 - start) * int(sizes[order[end]]) <= group_tokens:
            end += 1
        groups.append(order[start:end])
        start = end
    layouts = [_rows_of(replies, group) for group in groups]
    context_states, *reply_states = source.states([contexts, *layouts], device)
    owner = np.asarray(owner, dtype=np.int64)
    return (
        ContextBatch(
            states=context_states,
            turns=torch.from_numpy(contexts.turns).to(device),
            mask=torch.from_numpy(contexts.mask).to(device),
        ),
        [
            ReplyBatch(
                states=states,
                mask=torch.from_numpy(layout.mask).to(device),
                owner=torch.from_numpy(owner[group]).to(device),
            )
            for states, layout, group in zip(reply_states, layouts, groups, strict=True)
        ],
        order,
    )


def _rows_of(layout: Layout, rows: NDArray[np.int64]) -> Layout:
    """The rows ``rows`` of a reply layout, cut to their own longest reply."""
    width = max(1, int(layout.mask[rows].sum(axis=1).max()))
    return Layout(
        rows=layout.rows[rows, :width],
        positions=layout.positions[rows, :width],
        turns=layout.turns[rows, :width],
        mask=layout.mask[rows, :width],
    )


def reply_logits(
    net: Any, source: StateSource, contexts: Layout, replies: Layout, owner: NDArray[np.int64], device: Any
) -> Any:
    """[N] float32 logits of every reply of ``replies`` against its context ``owner[j]``, in order."""
    import torch

    context_batch, groups, order = network_inputs(source, contexts, replies, owner, device)
    found = torch.cat(net.logits(context_batch, groups)).float()
    logits = torch.empty_like(found)
    logits[torch.from_numpy(order).to(found.device)] = found
    return logits

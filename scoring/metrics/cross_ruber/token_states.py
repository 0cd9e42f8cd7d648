"""Word pieces and frozen lower-layer token states of utterances, computed once per distinct text.

With MiniLM's lower k layers frozen, an utterance's states after layer k do not depend on anything the
training changes, nor on the context it appears in (each utterance is encoded alone): they are computed
once per distinct text, length-sorted in batches, and stored as float16.

- :class:`TokenIds`: the word pieces of each text, [CLS] and [SEP] included, cut to ``max_tokens``.
- :class:`StateTable`: the flat ``[tokens, D]`` float16 states of texts (an array in memory, or a view
  of the cache's memory-mapped file) and each text's offset and length in it.
- :func:`encode_states`: the in-memory table of a batch of texts (scoring).
- :class:`LowerStateCache`: the states on disk, memory-mapped, keyed by encoder content hash, k and
  ``max_tokens``; texts already there are not encoded again (a second training reuses the first's), and a
  training cancelled half-way keeps what it had encoded.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

ENCODE_BATCH = 64  # utterances per forward pass on the CPU (contextual_encoder's DEFAULT_BATCH_SIZE)
FLUSH_EVERY = 16384  # texts between two writes of the cache's index
STATES_FILE = "states.f16"
INDEX_FILE = "index.json"
LOCK_FILE = "lock"


@dataclass(frozen=True)
class TokenIds:
    """Word-piece ids of texts: text i is ``ids[offsets[i] : offsets[i] + lengths[i]]``."""

    ids: NDArray[np.int64]
    offsets: NDArray[np.int64]
    lengths: NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.lengths)

    def padded(self, rows: Sequence[int] | NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        """([n, L] ids padded with 0, [n, L] mask) of ``rows``."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths = self.lengths[rows]
        width = int(lengths.max()) if len(rows) else 0
        mask = np.arange(width)[None, :] < lengths[:, None]
        ids = np.zeros((len(rows), width), dtype=np.int64)
        starts = self.offsets[rows]
        ids[mask] = self.ids[(starts[:, None] + np.arange(width)[None, :])[mask]]
        return ids, mask


def tokenize_texts(tokenizer: Any, texts: Sequence[str], *, max_tokens: int) -> TokenIds:
    """Each text's word pieces ([CLS] ... [SEP], at most ``max_tokens``) with a fast tokenizer."""
    lists: list[list[int]] = (
        tokenizer(list(texts), truncation=True, max_length=max_tokens)["input_ids"] if texts else []
    )
    lengths = np.array([len(ids) for ids in lists], dtype=np.int64)
    offsets = np.zeros(len(lists), dtype=np.int64)
    if len(lists) > 1:
        offsets[1:] = np.cumsum(lengths)[:-1]
    flat = np.fromiter((i for ids in lists for i in ids), dtype=np.int64, count=int(lengths.sum()))
    return TokenIds(ids=flat, offsets=offsets, lengths=lengths)


@dataclass(frozen=True)
class StateTable:
    """Token states of texts: text i is ``states[offsets[i] : offsets[i] + lengths[i]]`` ([n_i, D])."""

    states: NDArray[np.float16]
    offsets: NDArray[np.int64]
    lengths: NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def dimension(self) -> int:
        return int(self.states.shape[1])

    def padded(
        self, rows: NDArray[np.int64], positions: NDArray[np.int64], mask: NDArray[np.bool_]
    ) -> NDArray[np.float32]:
        """[n, L, D] float32 with token ``positions[j]`` of text ``rows[j]`` at the j-th True cell of
        ``mask`` [n, L] (row-major), zeros elsewhere."""
        out = np.zeros((*mask.shape, self.dimension), dtype=np.float32)
        out[mask] = self.states[self.offsets[rows] + positions]
        return out


def encode_states(
    net: Any,
    tokens: TokenIds,
    *,
    device: Any,
    batch_size: int = ENCODE_BATCH,
    on_batch: Callable[[int], None] | None = None,
) -> StateTable:
    """The in-memory :class:`StateTable` of every text of ``tokens`` (row i = text i)."""
    states = np.zeros((int(tokens.lengths.sum()), net.dimension), dtype=np.float16)
    for rows, batch in _encoded_batches(net, tokens, np.arange(len(tokens)), device, batch_size):
        for row, matrix in zip(rows, batch, strict=True):
            start = tokens.offsets[row]
            states[start : start + len(matrix)] = matrix
        if on_batch is not None:
            on_batch(len(rows))
    return StateTable(states=states, offsets=tokens.offsets, lengths=tokens.lengths)


def _encoded_batches(
    net: Any, tokens: TokenIds, rows: NDArray[np.int64], device: Any, batch_size: int
) -> Iterator[tuple[NDArray[np.int64], list[NDArray[np.float16]]]]:
    """(rows, their float16 state matrices) in length-sorted batches of ``batch_size``."""
    import torch

    order = rows[np.argsort(tokens.lengths[rows], kind="stable")]
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            ids, mask = tokens.padded(batch)
            hidden = net.lower_states(
                torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device)
            ).float()
            found = hidden.to(torch.float16).cpu().numpy()
            yield batch, [found[i, : tokens.lengths[row]] for i, row in enumerate(batch)]


class LowerStateCache:
    """Lower-layer states of texts in ``folder``/``key``: ``states.f16`` (raw float16 rows, appended)
    and ``index.json`` (the texts in row order and their token counts); a lock file keeps two trainings that
    share the folder from writing at once."""

    def __init__(self, folder: Path, *, key: str, dimension: int) -> None:
        self.path = Path(folder) / key
        self.dimension = dimension

    def table(
        self,
        net: Any,
        texts: Sequence[str],
        tokens: TokenIds,
        *,
        device: Any,
        batch_size: int = ENCODE_BATCH,
        on_batch: Callable[[int, int], None] | None = None,
    ) -> tuple[StateTable, int]:
        """(the :class:`StateTable` of ``texts``, row i = text i, over the memory-mapped file; how many
        texts had to be encoded now). ``on_batch(done, to_encode)`` hears of each encoded batch."""
        self.path.mkdir(parents=True, exist_ok=True)
        with self._locked():
            known, lengths = self._index()
            firsts: dict[str, int] = {}  # a repeated text is encoded once
            for row, text in enumerate(texts):
                if text not in known:
                    firsts.setdefault(text, row)
            missing = np.array(sorted(firsts.values()), dtype=np.int64)
            if len(missing):
                self._append(net, texts, tokens, missing, known, lengths, device, batch_size, on_batch)
                known, lengths = self._index()
        offsets = np.zeros(len(lengths), dtype=np.int64)
        if len(lengths) > 1:
            offsets[1:] = np.cumsum(lengths)[:-1]
        total = int(lengths.sum())
        states = (
            np.memmap(self.path / STATES_FILE, dtype=np.float16, mode="r", shape=(total, self.dimension))
            if total
            else np.zeros((0, self.dimension), dtype=np.float16)
        )
        rows = np.array([known[text] for text in texts], dtype=np.int64)
        found = lengths[rows] if len(rows) else np.zeros(0, dtype=np.int64)
        if len(rows) and not np.array_equal(np.minimum(tokens.lengths, found), tokens.lengths):
            raise ValueError(f"{self.path}: cached texts are shorter than asked (another max_tokens?)")
        return StateTable(states=states, offsets=offsets[rows], lengths=found.astype(np.int64)), len(missing)

    def _append(
        self,
        net: Any,
        texts: Sequence[str],
        tokens: TokenIds,
        missing: NDArray[np.int64],
        known: dict[str, int],
        lengths: NDArray[np.int64],
        device: Any,
        batch_size: int,
        on_batch: Callable[[int, int], None] | None,
    ) -> None:
        names = list(known)
        sizes = lengths.tolist()
        done, unflushed = 0, 0
        try:
            with (self.path / STATES_FILE).open("ab") as handle:
                for rows, batch in _encoded_batches(net, tokens, missing, device, batch_size):
                    for row, matrix in zip(rows, batch, strict=True):
                        handle.write(np.ascontiguousarray(matrix, dtype="<f2").tobytes())
                        names.append(texts[row])
                        sizes.append(len(matrix))
                    done += len(rows)
                    unflushed += len(rows)
                    if unflushed >= FLUSH_EVERY:
                        handle.flush()
                        self._write_index(names, sizes)
                        unflushed = 0
                    if on_batch is not None:
                        on_batch(done, len(missing))
        finally:  # a cancelled training keeps what was encoded (the file's tail past the index is cut)
            self._write_index(names, sizes)

    def _index(self) -> tuple[dict[str, int], NDArray[np.int64]]:
        index_path, states = self.path / INDEX_FILE, self.path / STATES_FILE
        if not index_path.is_file():
            states.write_bytes(b"")
            return {}, np.zeros(0, dtype=np.int64)
        index = json.loads(index_path.read_text(encoding="utf-8"))
        texts, lengths = index["texts"], np.asarray(index["lengths"], dtype=np.int64)
        if len(texts) != len(lengths) or index.get("dimension") != self.dimension:
            raise ValueError(f"{self.path}: a damaged or foreign cache; delete the folder")
        expected = int(lengths.sum()) * self.dimension * 2
        size = states.stat().st_size if states.is_file() else 0
        if size < expected:
            raise ValueError(f"{self.path}: {STATES_FILE} is shorter than its index; delete the folder")
        if size > expected:  # rows written after the last index write (an interrupted run)
            os.truncate(states, expected)
        return {text: row for row, text in enumerate(texts)}, lengths

    def _write_index(self, texts: list[str], lengths: list[int]) -> None:
        temporary = self.path / f"{INDEX_FILE}.tmp"
        index = {"dimension": self.dimension, "texts": texts, "lengths": lengths}
        temporary.write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")
        os.replace(temporary, self.path / INDEX_FILE)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with (self.path / LOCK_FILE).open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

"""The token vectors a process encoded lately, kept so that a text is encoded once per process.

A scoring run computes its chunks one after the other in a worker process (``score_study --sync`` in
the command's process), and each chunk's neural metrics encode the chunk's distinct texts: a text that
occurs in several chunks (a reference that is also another context's reply, a context turn shared by
contexts, the same reply scored by BERT-RUBER, MaUde and the blends) was encoded once per chunk, about
twice the encoder's work on DailyDialog-shaped studies (bench/learned_scoring_floor.py counts it).

:class:`TokenCache` keeps the ``[n, D]`` float32 token vectors of the texts an encoder returned, least
recently used first out, within a byte budget (``DIALEVAL_ENCODER_CACHE_MB``, 256 by default; 0 turns
it off). Keys name the encoder's weights folder, device, word-piece limit and autocast dtype beside the
text, so two encoders never share an entry. What it hands out is a copy: a caller may change its
vectors without changing what the next caller gets.

A text's vectors depend a little (~1e-7) on the batch it was encoded in (padding changes the sums'
order), as they did between chunks before; the cache gives the first encoding to every later caller.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import NDArray

DEFAULT_MEGABYTES = 256
ENVIRONMENT_VARIABLE = "DIALEVAL_ENCODER_CACHE_MB"


class TokenCache:
    """Least-recently-used token vectors by (encoder key, text), at most ``max_bytes`` of them."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max(0, int(max_bytes))
        self._entries: OrderedDict[tuple[Hashable, str], NDArray[np.float32]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def get_many(self, key: Hashable, texts: Sequence[str]) -> list[NDArray[np.float32] | None]:
        """A copy of each text's vectors, ``None`` where the cache has none."""
        found: list[NDArray[np.float32] | None] = []
        with self._lock:
            for text in texts:
                vectors = self._entries.get((key, text))
                if vectors is None:
                    found.append(None)
                    continue
                self._entries.move_to_end((key, text))
                found.append(vectors.copy())
        return found

    def put_many(self, key: Hashable, texts: Sequence[str], vectors: Sequence[NDArray[np.float32]]) -> None:
        """Keep a copy of each text's vectors, dropping the least recently used beyond the budget."""
        if self.max_bytes == 0:
            return
        with self._lock:
            for text, matrix in zip(texts, vectors, strict=True):
                if matrix.nbytes > self.max_bytes:
                    continue
                old = self._entries.pop((key, text), None)
                if old is not None:
                    self._bytes -= old.nbytes
                self._entries[(key, text)] = np.array(matrix, dtype=np.float32, copy=True)
                self._bytes += matrix.nbytes
            while self._bytes > self.max_bytes and self._entries:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped.nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


def _budget() -> int:
    raw = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    try:
        megabytes = float(raw) if raw else DEFAULT_MEGABYTES
    except ValueError:
        raise ValueError(f"{ENVIRONMENT_VARIABLE}={raw!r} is not a number of megabytes") from None
    return int(max(0.0, megabytes) * 1024 * 1024)


TOKEN_CACHE = TokenCache(_budget())  # the process's: every ContextualEncoder reads and fills it

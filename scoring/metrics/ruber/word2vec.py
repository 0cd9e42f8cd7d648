"""RUBER's word embeddings: word2vec trained with gensim on the corpus (Tao et al., 2018, section 4.1: "we train
50-dimensional word2vec embeddings"; the dimension and the rest are configurable).

Deterministic for a given corpus and seed: one worker thread, and a stable string hash for gensim's
per-word initial vectors (gensim's default is Python's ``hash``, which is salted per process).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scoring.metrics.word_vectors import WordVectors, from_gensim_keyed_vectors


@dataclass(frozen=True)
class Word2VecConfig:
    dimension: int = 50  # the paper's
    window: int = 5
    min_count: int = 2  # a word seen once gets no vector (it maps to <unk> in s_U)
    epochs: int = 5
    sg: int = 0  # CBOW, gensim's default; the paper does not say
    negative: int = 5


def stable_hash(text: str) -> int:
    """A per-process-stable 32-bit hash of ``text`` (gensim seeds each word's initial vector with it)."""
    return int.from_bytes(hashlib.md5(text.encode("utf-8")).digest()[:4], "little")


def train_word2vec(
    sentences: Sequence[Sequence[str]],
    *,
    config: Word2VecConfig,
    seed: int,
    name: str = "word2vec",
    on_epoch: Callable[[int, int], None] | None = None,
) -> WordVectors:
    """Word vectors trained on tokenized ``sentences``; the vocabulary is ordered by frequency (gensim).

    ``on_epoch(done, epochs)`` is called after each word2vec epoch, in this thread (gensim calls its
    callbacks from the thread that trains), so an exception it raises stops the training."""
    from gensim.models import Word2Vec

    model = Word2Vec(
        sentences=[list(sentence) for sentence in sentences],
        vector_size=config.dimension,
        window=config.window,
        min_count=config.min_count,
        epochs=config.epochs,
        sg=config.sg,
        negative=config.negative,
        seed=seed,
        workers=1,
        hashfxn=stable_hash,
        callbacks=[] if on_epoch is None else [_epoch_callback(on_epoch, config.epochs)],
    )
    return from_gensim_keyed_vectors(model.wv, name=name)


def _epoch_callback(on_epoch: Callable[[int, int], None], epochs: int) -> Any:
    from gensim.models.callbacks import CallbackAny2Vec

    class EpochCallback(CallbackAny2Vec):
        def __init__(self) -> None:
            self.done = 0

        def on_epoch_end(self, model: Any) -> None:
            self.done += 1
            on_epoch(self.done, epochs)

    return EpochCallback()

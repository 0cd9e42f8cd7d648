"""RUBER's referenced score s_R and the "vector pool" unreferenced baseline (Tao et al., 2018, section 3.1).

s_R(r, r_hat) = cos(v_r, v_r_hat) with v = [max-pool; min-pool] of the sentence's word vectors
(eqs. 1-2, :mod:`scoring.metrics.pooling`). With several references, the score is the maximum over them
(Gupta et al., 2019, section 3.2.1, eq. 1). The vector-pool baseline (Tao et al., 2018, Table 2, "Vector pool") is the same
cosine between the query and the reply.

Tokens without a vector are skipped. An item whose reply (or query) has no known word, or none of whose
references has one, has no score: ``None``, and it is counted in ``empty_items``. Callers decide what it
becomes (the scoring app stores no value); it is never NaN and never a made-up number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoring.metrics.pooling import pooled_cosine
from scoring.metrics.word_vectors import WordVectors


@dataclass(frozen=True)
class PooledScores:
    values: list[float | None]
    empty_items: int  # items scored None because a side had no known word


def referenced_scores(
    replies: Sequence[Sequence[str]],
    references_lists: Sequence[Sequence[Sequence[str]]],
    vectors: WordVectors,
) -> PooledScores:
    """s_R of each tokenized reply against its tokenized references (max over references)."""
    if len(replies) != len(references_lists):
        raise ValueError(f"{len(replies)} replies but {len(references_lists)} reference lists")
    values: list[float | None] = []
    for reply, references in zip(replies, references_lists, strict=True):
        reply_vectors = vectors.lookup(reply)
        scores = [pooled_cosine(reply_vectors, vectors.lookup(reference)) for reference in references]
        known = [score for score in scores if score is not None]
        values.append(max(known) if known else None)
    return PooledScores(values, sum(value is None for value in values))


def vector_pool_scores(
    queries: Sequence[Sequence[str]], replies: Sequence[Sequence[str]], vectors: WordVectors
) -> PooledScores:
    """The vector-pool unreferenced baseline: pooled cosine of each tokenized query and reply."""
    if len(queries) != len(replies):
        raise ValueError(f"{len(queries)} queries but {len(replies)} replies")
    values = [
        pooled_cosine(vectors.lookup(query), vectors.lookup(reply))
        for query, reply in zip(queries, replies, strict=True)
    ]
    return PooledScores(values, sum(value is None for value in values))

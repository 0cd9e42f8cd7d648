"""Ranking accuracy of an unreferenced scorer: how often s_U(q, true reply) > s_U(q, random reply).

The quantity RUBER's negative sampling trains for (Tao et al., 2018, section 3.2, eq. 3); used for early
stopping on the validation split and as a sanity benchmark (chance is 0.5; ties count as failures).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from scoring.metrics.ruber.corpus import QueryReplyPair


def negative_indices(count: int, *, seed: int) -> list[int]:
    """For each of ``count`` pairs, the index of another pair (never itself) whose reply is the negative."""
    if count < 2:
        raise ValueError("negative sampling needs at least 2 pairs")
    generator = random.Random(seed)
    return [(index + generator.randrange(1, count)) % count for index in range(count)]


def ranking_triples(pairs: Sequence[QueryReplyPair], *, seed: int) -> list[tuple[str, str, str]]:
    """(query, true reply, reply of another random pair) for every pair, seeded."""
    negatives = negative_indices(len(pairs), seed=seed)
    return [(pair.query, pair.reply, pairs[j].reply) for pair, j in zip(pairs, negatives, strict=True)]


def ranking_accuracy(
    score: Callable[[Sequence[str], Sequence[str]], Sequence[float]],
    triples: Sequence[tuple[str, str, str]],
) -> float:
    """Fraction of ``triples`` where ``score(queries, replies)`` ranks the true reply strictly higher."""
    if not triples:
        raise ValueError("no triples to rank")
    queries = [query for query, _, _ in triples]
    true_scores = score(queries, [true for _, true, _ in triples])
    false_scores = score(queries, [false for _, _, false in triples])
    wins = sum(t > f for t, f in zip(true_scores, false_scores, strict=True))
    return wins / len(triples)

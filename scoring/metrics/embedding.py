"""Embedding Average, Vector Extrema and Greedy Matching: reply-reference similarity from word vectors.

The three embedding-based metrics of the multi-reference study (Gupta et al., 2019, section 3.3, Table 2), as
defined by Liu et al. (2016, "How NOT to evaluate your dialogue system") and implemented in nlg-eval:

- Embedding Average: the cosine of the mean word vectors of the reply and the reference.
- Vector Extrema (Forgues et al., 2014): per dimension, the value with the largest absolute value over
  the sentence's word vectors, keeping its sign (a tie goes to the negative value, as in nlg-eval's
  ``np.where(max > abs(min), max, min)``); the cosine of the two extrema vectors.
- Greedy Matching (Rus and Lintean, 2012): every word of one sentence is matched to its most
  cosine-similar word of the other and the similarities are averaged; the score is the mean of the
  reply->reference and reference->reply directions, which makes it symmetric.

Tokens are scored as they come from ``scoring.metrics.tokenize`` (punctuation included, as nlg-eval
does with tokenized text); words without a vector are skipped (``oov="skip"``), or, as nlg-eval and the
multi-reference study do, given the mean of all the vectors (``oov="mean"``; nlg-eval's ``Embedding.unk``).
``extrema="nlg-eval"`` takes Vector Extrema's per-dimension value exactly as nlg-eval's lambda does, which
differs from the rule above only where the minimum is exactly 0 (nlg-eval then keeps the 0). Several references are combined as in
Gupta et al. (2019), section 3.2.1, eq. 1: score(y, R) = max over r in R of d(y, r), each metric on its own;
references without a known word take no part in the maximum.

Defined edge cases (never NaN, never an exception): an item whose reply has no known word, or none of
whose references has one (or that has no reference), scores 0.0 for every metric and is counted in
:attr:`EmbeddingScores.empty_items`; a cosine with a zero vector (e.g. two opposite word vectors that
average to zero) is 0.0. Scores are cosines, so they lie in [-1, 1].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scoring.metrics.word_vectors import WordVectors

EMBEDDING_AVERAGE = "embedding-average"
VECTOR_EXTREMA = "vector-extrema"
GREEDY_MATCHING = "greedy-matching"
EMBEDDING_METRICS = (EMBEDDING_AVERAGE, VECTOR_EXTREMA, GREEDY_MATCHING)
OOV_RULES = ("skip", "mean")  # a word without a vector: left out, or the mean vector (nlg-eval)
EXTREMA_RULES = ("signed-max", "nlg-eval")
_MEAN_ROW = -1  # a token scored with the mean vector (oov="mean")


@dataclass(frozen=True)
class EmbeddingScores:
    """``values[metric][i]`` is item ``i``'s score; ``empty_items`` items were scored 0.0 by definition."""

    values: Mapping[str, list[float]]
    empty_items: int


def embedding_scores_batch(
    hypotheses: Sequence[Sequence[str]],
    references: Sequence[Sequence[Sequence[str]]],
    vectors: WordVectors,
    *,
    metrics: Sequence[str] = EMBEDDING_METRICS,
    oov: str = "skip",
    extrema: str = "signed-max",
) -> EmbeddingScores:
    """The ``metrics`` for each tokenized reply ``hypotheses[i]`` against its references ``references[i]``.

    Each distinct sentence is looked up and reduced once, so references shared by several systems'
    replies to one context cost one lookup. ``oov`` and ``extrema``: see the module docstring.
    """
    unknown = [name for name in metrics if name not in EMBEDDING_METRICS]
    if unknown:
        raise ValueError(f"unknown embedding metric(s) {unknown}; known: {', '.join(EMBEDDING_METRICS)}")
    if oov not in OOV_RULES:
        raise ValueError(f"unknown out-of-vocabulary rule {oov!r}; choose one of {', '.join(OOV_RULES)}")
    if extrema not in EXTREMA_RULES:
        raise ValueError(f"unknown extrema rule {extrema!r}; choose one of {', '.join(EXTREMA_RULES)}")
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    sentences = _SentenceTable(vectors, oov=oov, extrema=extrema)
    # (item, hypothesis sentence, reference sentence) for every pair where both have a known word.
    items: list[int] = []
    hypothesis_ids: list[int] = []
    reference_ids: list[int] = []
    for item, (hypothesis_tokens, reference_token_lists) in enumerate(
        zip(hypotheses, references, strict=True)
    ):
        hypothesis = sentences.add(hypothesis_tokens)
        if hypothesis is None:
            continue
        for reference_tokens in reference_token_lists:
            reference = sentences.add(reference_tokens)
            if reference is not None:
                items.append(item)
                hypothesis_ids.append(hypothesis)
                reference_ids.append(reference)
    table = sentences.reduce()
    item_index = np.asarray(items, dtype=np.intp)
    hyp = np.asarray(hypothesis_ids, dtype=np.intp)
    ref = np.asarray(reference_ids, dtype=np.intp)
    scored = np.zeros(len(hypotheses), dtype=bool)
    scored[item_index] = True
    values: dict[str, list[float]] = {}
    for name in metrics:
        if name == EMBEDDING_AVERAGE:
            pair_scores = np.einsum("pd,pd->p", table.unit_means[hyp], table.unit_means[ref])
        elif name == VECTOR_EXTREMA:
            pair_scores = np.einsum("pd,pd->p", table.unit_extrema[hyp], table.unit_extrema[ref])
        else:
            pair_scores = np.array(
                [table.greedy(h, r) for h, r in zip(hypothesis_ids, reference_ids, strict=True)]
            )
        # Rounding can carry a cosine of parallel vectors a hair past 1.
        pair_scores = np.clip(pair_scores, -1.0, 1.0)
        best = np.full(len(hypotheses), -np.inf)
        np.maximum.at(best, item_index, pair_scores)  # Gupta et al. (2019), eq. 1: the closest reference
        values[name] = np.where(scored, best, 0.0).tolist()
    return EmbeddingScores(values=values, empty_items=int(len(hypotheses) - scored.sum()))


class _SentenceTable:
    """Distinct sentences' word vectors, looked up and reduced once for all pairs and metrics.

    Rows of all sentences are stacked into one matrix, so that normalising words and taking every
    sentence's mean and extrema are a handful of numpy calls for the whole batch.
    """

    def __init__(self, vectors: WordVectors, *, oov: str = "skip", extrema: str = "signed-max") -> None:
        self._vectors = vectors
        self._vocabulary = vectors.vocabulary
        self._matrix = vectors.matrix
        self._mean_for_unknown = oov == "mean"
        self._nlg_eval_extrema = extrema == "nlg-eval"
        self._ids: dict[tuple[str, ...], int | None] = {}
        self._rows: list[int] = []
        self._starts: list[int] = []
        self.unit_words = np.zeros((0, vectors.dimension))
        self.unit_means = np.zeros((0, vectors.dimension))
        self.unit_extrema = np.zeros((0, vectors.dimension))
        self._bounds: list[int] = [0]

    def add(self, tokens: Sequence[str]) -> int | None:
        """The sentence's id, or None when none of its tokens has a vector."""
        key = tuple(tokens)
        if key not in self._ids:
            if self._mean_for_unknown:
                rows = [self._vocabulary.get(token, _MEAN_ROW) for token in key]
            else:
                rows = [self._vocabulary[token] for token in key if token in self._vocabulary]
            if rows:
                self._ids[key] = len(self._starts)
                self._starts.append(len(self._rows))
                self._rows.extend(rows)
            else:
                self._ids[key] = None
        return self._ids[key]

    def reduce(self) -> _SentenceTable:
        if not self._starts:
            return self
        rows = np.asarray(self._rows, dtype=np.intp)
        unknown = rows == _MEAN_ROW
        words = np.asarray(self._matrix[np.where(unknown, 0, rows)], dtype=np.float64)
        if unknown.any():
            words[unknown] = np.asarray(self._vectors.mean_vector, dtype=np.float64)
        starts = np.asarray(self._starts, dtype=np.intp)
        lengths = np.diff(np.append(starts, len(self._rows)))
        means = np.add.reduceat(words, starts, axis=0) / lengths[:, None]
        maxima = np.maximum.reduceat(words, starts, axis=0)
        minima = np.minimum.reduceat(words, starts, axis=0)
        if self._nlg_eval_extrema:
            # nlg-eval's ``x if ((x>y or x<-y) and y>0) or ((x<y or x>-y) and y<0) else y`` with x the
            # maximum and y the minimum: the maximum where it outweighs a negative minimum or the minimum
            # is positive, else the minimum (so a minimum of exactly 0 is kept).
            keep_max = ((maxima > minima) | (maxima < -minima)) & (minima > 0) | (
                (maxima < minima) | (maxima > -minima)
            ) & (minima < 0)
            extrema = np.where(keep_max, maxima, minima)
        else:
            extrema = np.where(maxima > np.abs(minima), maxima, minima)
        self.unit_words = _unit_rows(words)
        self.unit_means = _unit_rows(means)
        self.unit_extrema = _unit_rows(extrema)
        self._bounds = np.append(starts, len(self._rows)).tolist()
        return self

    def greedy(self, hypothesis: int, reference: int) -> float:
        """Mean of both directions' average best-match cosine (Rus and Lintean, 2012)."""
        h = self.unit_words[self._bounds[hypothesis] : self._bounds[hypothesis + 1]]
        r = self.unit_words[self._bounds[reference] : self._bounds[reference + 1]]
        similarities = h @ r.T  # [k_hyp, k_ref] cosines
        return float(similarities.max(axis=1).mean() + similarities.max(axis=0).mean()) / 2


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero row (no direction) stays zero: its cosine with anything is 0 rather than NaN.
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0.0)

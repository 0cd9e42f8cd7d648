"""Diversity of a system's outputs (Gupta et al., 2019, sections 3.2.2 and 5.2).

Unreferenced diversity:
- Distinct-n (Li et al., 2016): distinct n-grams over all n-grams of a system's outputs, at system level.
- Self-BLEU-n (Zhu et al., 2018, Texygen): for each output of a context, sentence BLEU-n against the other
  outputs of the same context as references; averaged over the outputs, then over contexts. Lower means
  more diverse.

Referenced diversity, the recall (coverage) of Gupta et al. (2019), eq. 2, for a context with system outputs
Y = {y_1..y_M'} and references R = {r_1..r_N}:

    recall(c) = (1/N) * sum over references r_j of max over outputs y_i of d(y_i, r_j)

for any pairwise metric d (the paper reports BLEU-2, BLEU-4, METEOR, ROUGE-L, Vector Extrema).

All functions take tokenized text (scoring.metrics.tokenize); they are pure and batch-first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scoring.metrics.bleu import sentence_bleu

Tokens = Sequence[str]
PairwiseMetric = Callable[[Tokens, Tokens], float]  # d(hypothesis, reference)


def distinct_n(outputs: Sequence[Tokens], n: int) -> float:
    """Distinct-n of a system: |distinct n-grams| / |n-grams| over all its outputs; 0.0 when it has none."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    total = 0
    seen: set[tuple[str, ...]] = set()
    for tokens in outputs:
        grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
        total += len(grams)
        seen.update(grams)
    return len(seen) / total if total else 0.0


def self_bleu_context(outputs: Sequence[Tokens], n: int, smoothing: str = "method1") -> float | None:
    """Mean sentence BLEU-n of each output against the context's other outputs; None with fewer than two."""
    if len(outputs) < 2:
        return None
    scores = [
        sentence_bleu(output, [other for j, other in enumerate(outputs) if j != i], n, smoothing)
        for i, output in enumerate(outputs)
    ]
    return sum(scores) / len(scores)


def self_bleu(
    outputs_per_context: Sequence[Sequence[Tokens]], n: int, smoothing: str = "method1"
) -> float | None:
    """Self-BLEU-n of a system: the mean over contexts with at least two outputs; None when there are none."""
    per_context = [self_bleu_context(outputs, n, smoothing) for outputs in outputs_per_context]
    defined = [score for score in per_context if score is not None]
    return sum(defined) / len(defined) if defined else None


def recall_context(
    outputs: Sequence[Tokens], references: Sequence[Tokens], metric: PairwiseMetric
) -> float | None:
    """Gupta et al. (2019) eq. 2 for one context; None without outputs or references."""
    if not outputs or not references:
        return None
    return sum(max(metric(output, reference) for output in outputs) for reference in references) / len(
        references
    )


def bleu_metric(n: int, smoothing: str = "method1") -> PairwiseMetric:
    """Sentence BLEU-n as a pairwise metric d(hypothesis, reference) for :func:`recall_context`."""

    def metric(hypothesis: Tokens, reference: Tokens) -> float:
        return sentence_bleu(hypothesis, [reference], n, smoothing)

    return metric

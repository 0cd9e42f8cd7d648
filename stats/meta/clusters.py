"""Significance clusters: metrics ranked as the WMT metrics shared task ranks them.

Metrics are ordered by their statistic, best first (ties by their position in the input, as mt-metrics-eval
breaks ties by name). The first metric opens cluster 1; walking down the order, a metric opens the next
cluster or joins the current one, by one of two rules (``rule``):

* ``"any"`` (the default, WMT's): a metric opens a new cluster when *any* metric of the current cluster beats
  it with one-sided p <= alpha, by the chosen test (stats/meta/permutation/). This is mt-metrics-eval's
  ``AssignRanks`` (data.py, as the WMT metrics tasks since 2021 rank metrics) exactly, given the same p-values;
  it needs every earlier pair of the cluster.
* ``"best"`` (best of cluster): a metric opens a new cluster only when the *best* metric of the current
  cluster beats it with p < alpha. It asks for at most one test per metric, and can keep in a cluster a
  metric that a lower member of the cluster beats.

A metric's rank is its cluster's number. Tests are run when needed (``p_value`` is a function). A metric
whose statistic is undefined has no rank (``None``); a test that could not be run (``None``) is not evidence
of a difference.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

SIGNIFICANCE = 0.05
Rule = Literal["any", "best"]
WMT_RULE: Rule = "any"
# What each rule does, in the words the report and its exports print beside the ranks.
RULE_SENTENCES: dict[str, str] = {
    "any": "a new cluster starts at a metric that any metric of the current cluster beats with one-sided "
    "p ≤ {alpha:g} (the WMT metrics task's rule, mt-metrics-eval's AssignRanks)",
    "best": "a new cluster starts at a metric that the best metric of the current cluster beats with "
    "one-sided p < {alpha:g} (best-of-cluster rule)",
}


@dataclass(frozen=True)
class Clusters:
    """``ranks[i]``: metric i's cluster number (1 = best), ``None`` where its statistic is undefined;
    ``order``: the metrics best first; ``p_values``: every test run, (better, worse) -> p."""

    ranks: tuple[int | None, ...]
    order: tuple[int, ...]
    p_values: dict[tuple[int, int], float | None] = field(default_factory=dict)
    rule: Rule = WMT_RULE
    alpha: float = SIGNIFICANCE


def significance_clusters(
    values: Sequence[float | None],
    p_value: Callable[[int, int], float | None],
    *,
    alpha: float = SIGNIFICANCE,
    rule: Rule = WMT_RULE,
) -> Clusters:
    """Cluster ranks of the metrics with statistics ``values`` (higher is better); ``p_value(better,
    worse)`` is the one-sided p-value that ``better`` beats ``worse``."""
    if rule not in RULE_SENTENCES:
        raise ValueError(f'rule must be "any" (WMT\'s) or "best", not {rule!r}')
    order = ranking_order(values)
    ranks: list[int | None] = [None] * len(values)
    tested: dict[tuple[int, int], float | None] = {}

    def test(better: int, worse: int) -> float | None:
        if (better, worse) not in tested:
            tested[(better, worse)] = p_value(better, worse)
        return tested[(better, worse)]

    rank, start = 1, 0
    for position, metric in enumerate(order):
        if position > 0:
            if rule == "best":
                p = test(order[start], metric)
                opens = p is not None and p < alpha
            else:
                earlier = [test(other, metric) for other in order[start:position]]
                opens = any(p is not None and p <= alpha for p in earlier)
            if opens:
                rank, start = rank + 1, position
        ranks[metric] = rank
    return Clusters(tuple(ranks), order, tested, rule, alpha)


def ranking_order(values: Sequence[float | None]) -> tuple[int, ...]:
    """The metrics with a statistic, best first (ties by position): the order clusters are formed in."""
    return tuple(
        sorted(
            (i for i, value in enumerate(values) if value is not None),
            key=lambda i: (-float(values[i] or 0.0), i),
        )
    )


def ranked_pairs(values: Sequence[float | None]) -> list[tuple[int, int]]:
    """Every (better, worse) pair of metrics by :func:`ranking_order`: the tests a clustering may ask for."""
    order = ranking_order(values)
    return [(better, worse) for position, better in enumerate(order) for worse in order[position + 1 :]]


def rule_sentence(rule: Rule, alpha: float = SIGNIFICANCE) -> str:
    """How ``rule`` forms clusters, in a sentence (without the test, which the caller names)."""
    return RULE_SENTENCES[rule].format(alpha=alpha)

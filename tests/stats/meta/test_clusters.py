"""Significance clusters: mt-metrics-eval's AssignRanks test vectors (data_test.py) for its rule, hand cases for
the best-of-cluster rule, and the tests each rule asks for."""

from __future__ import annotations

import numpy as np
import pytest

from stats.meta.clusters import rule_sentence, significance_clusters
from stats.meta.permutation import Layout, Statistic
from tests.stats.meta.cluster_inputs import permutation_p_values, ranks_from_matrix

ALL_ONES = [[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]]
SECOND = [[0, 1, 0, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]]
THIRD = [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]]


def test_mt_metrics_eval_assign_ranks_vectors() -> None:
    """data_test.py testAssignRanks: sig_matrix[i][j] is the p-value that metric i beats metric j."""
    assert ranks_from_matrix(ALL_ONES, 0.5, rule="any") == [1, 1, 1, 1]
    assert ranks_from_matrix(ALL_ONES, 1.0, rule="any") == [1, 2, 3, 4]  # p <= alpha: 1 <= 1
    assert ranks_from_matrix(SECOND, 0.5, rule="any") == [1, 1, 2, 2]
    assert ranks_from_matrix(THIRD, 0.5, rule="any") == [1, 2, 2, 3]


def test_the_default_rule_is_the_wmt_metrics_tasks() -> None:
    """Without a rule, clusters are AssignRanks's (the default was the best-of-cluster rule, which
    gave [1, 2, 2, 2] on THIRD while the report said it ranked as the WMT metrics task does)."""
    for matrix, alpha, expected in (
        (THIRD, 0.5, [1, 2, 2, 3]),
        (SECOND, 0.5, [1, 1, 2, 2]),
        (ALL_ONES, 1.0, [1, 2, 3, 4]),
    ):
        assert ranks_from_matrix(matrix, alpha) == expected

        def p_value(i: int, j: int, m: list[list[int]] = matrix) -> float:
            return float(m[i][j])

        clusters = significance_clusters([4.0, 3.0, 2.0, 1.0], p_value, alpha=alpha)
        assert list(clusters.ranks) == expected
        assert clusters.rule == "any"
    assert "AssignRanks" in rule_sentence("any")
    assert "best metric" in rule_sentence("best")


def test_the_best_of_cluster_rule_compares_with_the_cluster_best_only() -> None:
    """THIRD: metric 1 opens cluster 2 (p 0 against metric 0); metric 3 is beaten by metric 2 (p 0) but not by
    metric 1, the best of cluster 2 (p 1): it stays in cluster 2. mt-metrics-eval's rule opens cluster 3."""
    assert ranks_from_matrix(THIRD, 0.5, rule="best") == [1, 2, 2, 2]
    assert ranks_from_matrix(SECOND, 0.5, rule="best") == [1, 1, 2, 2]
    # The threshold is strict: p = alpha is not significant.
    assert ranks_from_matrix(ALL_ONES, 1.0, rule="best") == [1, 1, 1, 1]


def test_order_ties_and_undefined_values() -> None:
    asked: list[tuple[int, int]] = []

    def p_value(better: int, worse: int) -> float:
        asked.append((better, worse))
        return 0.01 if (better, worse) == (2, 0) else 0.5

    clusters = significance_clusters([0.3, None, 0.5, 0.3], p_value)
    assert clusters.order == (2, 0, 3)  # equal values keep their input order
    assert clusters.ranks == (2, None, 1, 2)
    assert asked == [(2, 0), (0, 3)]  # one test per metric after the first, against the cluster's best
    assert clusters.p_values == {(2, 0): 0.01, (0, 3): 0.5}


def test_an_untestable_pair_is_no_evidence_of_a_difference() -> None:
    clusters = significance_clusters([0.9, 0.1], lambda better, worse: None)
    assert clusters.ranks == (1, 1)


def test_clusters_from_permutation_tests() -> None:
    """Three metrics of clearly different quality and a near copy of the best: the copy shares rank 1."""
    rng = np.random.default_rng(12)
    n = 600
    truth = rng.normal(size=n)
    human = truth + rng.normal(0, 0.5, n)
    best = truth + rng.normal(0, 0.4, n)
    metrics = np.stack(
        [best, best + rng.normal(0, 0.02, n), truth + rng.normal(0, 1.5, n), rng.normal(size=n)], axis=1
    )
    layout = Layout.of(list(range(n)), [f"s{i % 3}" for i in range(n)])
    r = [float(np.corrcoef(human, metrics[:, j])[0, 1]) for j in range(4)]
    test = permutation_p_values(human, metrics, layout, Statistic("pearson"))
    clusters = significance_clusters(r, lambda better, worse: test(better, worse).p_value)
    assert clusters.ranks[0] == clusters.ranks[1] == 1
    assert clusters.ranks[2] == 2
    assert clusters.ranks[3] == 3


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="rule"):
        significance_clusters([0.1], lambda a, b: None, rule="all")  # type: ignore[arg-type]

"""s_R, the vector-pool baseline, eq. 4 normalisation and the four blends, against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scoring.metrics.ruber.blends import blend, min_max_normalise, ruber_blends
from scoring.metrics.ruber.ranking import negative_indices, ranking_accuracy
from scoring.metrics.ruber.scores import referenced_scores, vector_pool_scores
from scoring.metrics.word_vectors import WordVectors

# a: (1, 0)  b: (0, 1)  c: (1, 1)  d: (-1, 2)
VECTORS = WordVectors(
    {"a": 0, "b": 1, "c": 2, "d": 3}, np.array([[1, 0], [0, 1], [1, 1], [-1, 2]], dtype=np.float32)
)


def test_referenced_score_by_hand() -> None:
    # reply "a b": v = [1, 1, 0, 0]; reference "c": v = [1, 1, 1, 1] -> 2 / (sqrt 2 * 2) = 1/sqrt 2
    # reference "a d": max (1, 2), min (-1, 0): v = [1, 2, -1, 0] -> (1 + 2) / (sqrt 2 * sqrt 6) = 3 / sqrt 12
    result = referenced_scores([["a", "b"]], [[["c"]]], VECTORS)
    assert result.values[0] == pytest.approx(1 / math.sqrt(2), abs=1e-7)
    single = referenced_scores([["a", "b"]], [[["a", "d"]]], VECTORS).values[0]
    assert single == pytest.approx(3 / math.sqrt(12), abs=1e-7)


def test_several_references_take_the_maximum_and_skip_unknown_ones() -> None:
    result = referenced_scores([["a", "b", "zzz"]], [[["a", "d"], ["c"], ["unknown"]]], VECTORS)
    assert result.values[0] == pytest.approx(max(3 / math.sqrt(12), 1 / math.sqrt(2)), abs=1e-7)
    assert result.empty_items == 0


def test_no_known_word_is_none_and_counted() -> None:
    result = referenced_scores([["zzz"], ["a"], ["a"]], [[["a"]], [["yyy"]], []], VECTORS)
    assert result.values == [None, None, None]
    assert result.empty_items == 3


def test_vector_pool_baseline_compares_query_and_reply() -> None:
    result = vector_pool_scores([["c"], ["a"], ["zzz"]], [["a", "b"], ["a"], ["a"]], VECTORS)
    assert result.values[0] == pytest.approx(1 / math.sqrt(2), abs=1e-7)
    # "a" alone: v = [1, 0, 1, 0], identical -> 1
    assert result.values[1] == pytest.approx(1.0)
    assert result.values[2] is None
    assert result.empty_items == 1


def test_min_max_normalisation_eq_4() -> None:
    assert min_max_normalise([2.0, 4.0, 3.0, None]) == [0.0, 1.0, 0.5, None]
    assert min_max_normalise([-1.0, 1.0]) == [0.0, 1.0]


def test_constant_or_single_scores_normalise_to_one_half() -> None:
    assert min_max_normalise([0.7]) == [0.5]
    assert min_max_normalise([0.3, 0.3, None]) == [0.5, 0.5, None]
    assert min_max_normalise([None, None]) == [None, None]
    assert min_max_normalise([]) == []
    with pytest.raises(ValueError, match="non-finite"):
        min_max_normalise([1.0, math.nan])


def test_blends_golden_values() -> None:
    s_r = [0.0, 0.5, 1.0, 0.25]  # normalised: 0, 0.5, 1, 0.25
    s_u = [0.2, 0.6, 0.4, None]  # normalised: 0, 1, 0.5, None
    blends = ruber_blends(s_r, s_u)
    assert blends["min"] == pytest.approx([0.0, 0.5, 0.5, None])
    assert blends["max"] == pytest.approx([0.0, 1.0, 1.0, None])
    assert blends["gmean"][:3] == pytest.approx([0.0, math.sqrt(0.5), math.sqrt(0.5)])
    assert blends["amean"][:3] == pytest.approx([0.0, 0.75, 0.75])
    assert blends["gmean"][3] is None
    assert blends["amean"][3] is None
    assert blend(s_r, s_u, "amean") == blends["amean"]


def test_blends_of_a_single_item_are_defined() -> None:
    blends = ruber_blends([0.9], [0.1])
    assert {name: values[0] for name, values in blends.items()} == {
        "min": 0.5,
        "max": 0.5,
        "gmean": 0.5,
        "amean": 0.5,
    }
    # one constant component: min/max/means follow the other one around 0.5
    blends = ruber_blends([0.2, 0.8], [0.4, 0.4])
    assert blends["min"] == [0.0, 0.5]
    assert blends["max"] == [0.5, 1.0]


def test_blend_argument_errors() -> None:
    with pytest.raises(ValueError, match="unknown RUBER blend"):
        blend([1.0], [1.0], "median")
    with pytest.raises(ValueError, match="1 referenced scores but 2"):
        ruber_blends([1.0], [1.0, 2.0])


def test_ranking_accuracy_and_negatives() -> None:
    negatives = negative_indices(50, seed=1)
    assert all(j != i and 0 <= j < 50 for i, j in enumerate(negatives))
    triples = [("q", "good", "bad"), ("q", "bad", "good"), ("q", "good", "good")]
    lengths = lambda queries, replies: [float(len(r)) for r in replies]  # noqa: E731
    # "good" (4) > "bad" (3) wins once; a tie is not a win
    assert ranking_accuracy(lengths, triples) == pytest.approx(1 / 3)

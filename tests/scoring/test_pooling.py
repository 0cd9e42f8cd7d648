"""RUBER's max-min pooling and pooled cosine (Tao et al., 2018, eqs. 1-2), on hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scoring.metrics.pooling import cosine, max_min_pool, pooled_cosine


def test_max_min_pool_concatenates_per_dimension_max_and_min() -> None:
    words = np.array([[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0]])
    # max per dimension: (3, 4); min per dimension: (-1, -2)
    assert max_min_pool(words).tolist() == [3.0, 4.0, -1.0, -2.0]


def test_pooled_cosine_by_hand() -> None:
    reply = np.array([[1.0, 0.0], [0.0, 1.0]])  # v = [1, 1, 0, 0]
    reference = np.array([[1.0, 1.0]])  # v = [1, 1, 1, 1]
    # cos = (1 + 1) / (sqrt(2) * 2) = 1 / sqrt(2)
    assert pooled_cosine(reply, reference) == pytest.approx(1 / math.sqrt(2), abs=1e-12)
    assert pooled_cosine(reference, reference) == pytest.approx(1.0)


def test_sign_symmetry_is_kept_by_min_pooling() -> None:
    positive = np.array([[1.0, 2.0]])
    negative = -positive
    # max-only pooling would compare (1, 2) with (-1, -2): -1; with min pooling too, still -1 (opposite)
    assert pooled_cosine(positive, negative) == pytest.approx(-1.0)


def test_no_vector_is_none_and_zero_vectors_are_zero() -> None:
    assert pooled_cosine(np.zeros((0, 2)), np.ones((1, 2))) is None
    assert cosine(np.zeros(3), np.ones(3)) == 0.0
    with pytest.raises(ValueError, match="non-empty"):
        max_min_pool(np.zeros((0, 2)))

"""RUBER's vector pooling and pooled cosine (Tao et al., 2018, section 3.1, eqs. 1-2).

A sentence of word (or contextual token) vectors w_1..w_n is summarised by max pooling and min pooling per
dimension, concatenated: v = [v_max; v_min] (eq. 1: v_max[i] = max{w_1[i], ..., w_n[i]}; min likewise,
"because an embedding feature is symmetric in terms of its sign"). The referenced score is the cosine of
two such vectors, s_R(r, r_hat) = cos(v_r, v_r_hat) (eq. 2). Shared by RUBER (word2vec vectors) and
BERT-RUBER (contextual token vectors, Ghazarian et al. (2019)).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def max_min_pool(vectors: NDArray[np.floating]) -> NDArray[np.float64]:
    """``[v_max; v_min]`` (2D values) of the rows of ``vectors`` ([n, D], n >= 1)."""
    if vectors.ndim != 2 or vectors.shape[0] == 0:
        raise ValueError(f"max_min_pool needs a non-empty [n, D] array, got shape {vectors.shape}")
    array = np.asarray(vectors, dtype=np.float64)
    return np.concatenate([array.max(axis=0), array.min(axis=0)])


def cosine(first: NDArray[np.floating], second: NDArray[np.floating]) -> float:
    """Cosine similarity; 0.0 when either vector is all zeros (never NaN)."""
    norm = float(np.linalg.norm(first) * np.linalg.norm(second))
    if norm == 0.0:
        return 0.0
    return float(np.clip(np.dot(first, second) / norm, -1.0, 1.0))


def pooled_cosine(first: NDArray[np.floating], second: NDArray[np.floating]) -> float | None:
    """s_R of two sentences given as [n, D] vector arrays; None when either has no vector (no known word),
    so that callers decide (and count) what such an item scores."""
    if first.shape[0] == 0 or second.shape[0] == 0:
        return None
    return cosine(max_min_pool(first), max_min_pool(second))

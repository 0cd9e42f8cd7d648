"""mt-metrics-eval's statistics (google-research/mt-metrics-eval, ``stats.py``, ``tau_optimization.py`` and
``data.py``), written again here from their definitions, for the parity tests: plain loops that follow the
toolkit's formulas step by step, none of the project's code. (PyPI's ``mt-metrics-eval`` is an unrelated
package; Google's toolkit is not on PyPI.)

* ``AverageCorrelation`` (macro): the correlation function on every row of a systems x items matrix (rows:
  the whole matrix for ``average_by='none'``, each system for ``'sys'``, each item for ``'item'``); rows of
  fewer than 2 values skipped, NaN correlations (a constant side) dropped, the plain mean of the rest.
* ``KendallWithTiesOpt`` (variant acc23, sample_rate 1): every pair of a row counted as concordant,
  discordant, tied in the human score only, in the metric only, or in both; a threshold epsilon on |metric
  difference| turns pairs into metric ties; acc23 = (C + T_both) / pairs per row, averaged over rows; the
  candidates are 0 and every |difference| in ascending order, and the best is the first maximum.
* ``PermutationSigDiff``: both metrics z-scored (``scipy.stats.zscore``) over the filtered vectors; in each of
  k permutations every entry's two scores swapped with probability 1/2; p = the share of permutations whose
  difference corr(metric 2) - corr(metric 1) reaches the observed one (no early stopping here).
* ``AssignRanks``: metrics sorted best first; a metric opens a new rank when any metric of the current rank
  beats it with p <= the threshold.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats as scipy_stats

CorrelationFunction = Callable[[np.ndarray, np.ndarray], float]


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(scipy_stats.pearsonr(x, y)[0])


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    return float(scipy_stats.spearmanr(x, y)[0])


def kendall(x: np.ndarray, y: np.ndarray) -> float:
    return float(scipy_stats.kendalltau(x, y)[0])


def average_correlation(
    gold: np.ndarray, metric: np.ndarray, rows: Sequence[np.ndarray], function: CorrelationFunction
) -> float:
    total, used = 0.0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in rows:
            if row.size < 2:
                continue
            value = function(gold[row], metric[row])
            if not math.isnan(value):
                total += value
                used += 1
    return total / used if used else 0.0


def kendall_with_ties_opt_acc23(
    gold: np.ndarray, metric: np.ndarray, rows: Sequence[np.ndarray]
) -> tuple[float, float]:
    """(best acc23, its threshold)."""
    # (|metric difference|, row, agrees now, agrees as a metric tie)
    pairs: list[tuple[float, int, int, int]] = []
    row_pairs: dict[int, int] = {}
    row_agree: dict[int, int] = {}
    for number, members in enumerate(rows):
        h, m = gold[members], metric[members]
        for i in range(members.size):
            for j in range(i + 1, members.size):
                if h[i] == h[j] and m[i] == m[j]:
                    agrees = 1  # tied in both
                elif h[i] == h[j] or m[i] == m[j]:
                    agrees = 0  # tied in one only
                else:
                    agrees = int(bool((h[i] > h[j]) == (m[i] > m[j])))  # concordant
                as_tie = int(bool(h[i] == h[j]))  # a metric tie agrees when people tie too
                pairs.append((float(abs(m[i] - m[j])), number, agrees, as_tie))
                row_pairs[number] = row_pairs.get(number, 0) + 1
                row_agree[number] = row_agree.get(number, 0) + agrees
    rows_used = len(row_pairs)
    total = sum(row_agree[key] / row_pairs[key] for key in row_pairs)
    thresholds, taus = [0.0], [total / rows_used]
    for difference, owner, agrees, as_tie in sorted(pairs, key=lambda pair: pair[0]):
        total += (as_tie - agrees) / row_pairs[owner]
        if thresholds[-1] == difference:
            taus[-1] = total / rows_used
        else:
            thresholds.append(difference)
            taus.append(total / rows_used)
    best = int(np.nanargmax(taus))
    return taus[best], thresholds[best]


def _batch_average_pearson(gold: np.ndarray, metrics: np.ndarray, rows: Sequence[np.ndarray]) -> np.ndarray:
    """scipy's pearsonr (centred, NaN where a side is constant) on every row of every permutation (rows of
    ``metrics``), NaNs dropped, averaged (0 where none is left)."""
    total = np.zeros(metrics.shape[0])
    used = np.zeros(metrics.shape[0])
    for row in rows:
        if row.size < 2:
            continue
        g = gold[row] - gold[row].mean()
        if np.all(gold[row] == gold[row][0]):
            continue
        values = metrics[:, row]
        centred = values - values.mean(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (centred @ g) / (np.linalg.norm(centred, axis=1) * np.linalg.norm(g))
        defined = ~np.all(values == values[:, :1], axis=1)
        total += np.where(defined, np.clip(r, -1.0, 1.0), 0.0)
        used += defined
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(used > 0, total / np.maximum(used, 1), 0.0)


def permutation_sig_diff(
    gold: np.ndarray,
    metric1: np.ndarray,
    metric2: np.ndarray,
    rows: Sequence[np.ndarray],
    k: int,
    generator: np.random.Generator,
) -> tuple[float, float]:
    """(p-value that metric 2 correlates better, the observed delta corr(2) - corr(1)), Pearson."""
    z1, z2 = scipy_stats.zscore(metric1), scipy_stats.zscore(metric2)
    delta = float(
        _batch_average_pearson(gold, z2[None, :], rows)[0]
        - _batch_average_pearson(gold, z1[None, :], rows)[0]
    )
    w1 = generator.binomial(1, 0.5, size=(k, gold.size))
    w2 = 1 - w1
    m1 = w1 * z1 + w2 * z2
    m2 = w2 * z1 + w1 * z2
    deltas = _batch_average_pearson(gold, m2, rows) - _batch_average_pearson(gold, m1, rows)
    return float(np.sum(deltas >= delta)) / k, delta


def assign_ranks(sig_matrix: np.ndarray, threshold: float) -> list[int]:
    """``sig_matrix[i, j]`` (i < j, metrics best first): p that metric i beats metric j."""
    ranks, rank, start = [], 1, 0
    for i in range(sig_matrix.shape[0]):
        if any(sig_matrix[start:i, i] <= threshold):
            rank += 1
            start = i
        ranks.append(rank)
    return ranks

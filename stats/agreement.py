"""Inter-annotator agreement: Cohen's kappa, weighted for ordinal scales, and each rater's agreement
with the others.

Kappa (Cohen 1960) compares the disagreement two raters show with the disagreement expected by chance
from their own label frequencies: kappa = 1 - sum(w * observed) / sum(w * expected), where ``observed``
is the joint distribution of the pairs and ``expected`` the outer product of the two marginals. The
weights ``w`` are the disagreement weights of Cohen (1968), "Weighted kappa: Nominal scale agreement
provision for scaled disagreement or partial credit", Psychological Bulletin 70(4), 213-220:

* unweighted: 0 on the diagonal, 1 elsewhere (every disagreement counts the same);
* linear: |i - j| / (K - 1) (a 1-vs-2 disagreement costs half a 1-vs-3 on a three-point scale);
* quadratic: ((i - j) / (K - 1))^2, which equals the intraclass correlation for large samples (Fleiss
  and Cohen 1973) and is the usual choice for ordinal rating scales.

These are the formulas of ``sklearn.metrics.cohen_kappa_score`` (tests compare against it when it is
installed); here the categories are the points of the study's scale, so a scale point nobody used still
counts in the weights of a linear or quadratic kappa.

The multi-reference study (Gupta et al., 2019, section 5.1.1) removes "workers with a Cohen's kappa
inter-annotator agreement score of less than 0.2". Crowd workers rate different subsets of items, so
pairwise kappas often rest on a handful of shared items; :func:`agreement_with_others` therefore pools
over every item a rater shares with anyone: for each such item, the rater's value is paired with the
consensus of the other raters of that item (their mean, or median, rounded to the nearest scale point,
halves upwards), and one kappa is computed over all those pairs.

Pure Python + numpy: no Django here.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np

Weighting = Literal["unweighted", "linear", "quadratic"]
Consensus = Literal["mean", "median"]
WEIGHTINGS: tuple[Weighting, ...] = ("unweighted", "linear", "quadratic")
MIN_SHARED_ITEMS = 5  # below this, one rater's kappa says more about luck than about the rater
INCLUDE, EXCLUDE, AUTO = "include", "exclude", "auto"  # a researcher's choice per annotator

RaterT = TypeVar("RaterT", bound=Hashable)
ItemT = TypeVar("ItemT", bound=Hashable)


def disagreement_weights(size: int, weights: Weighting) -> np.ndarray:
    """The K x K disagreement weights of Cohen (1968) for ``size`` ordered categories."""
    if weights not in WEIGHTINGS:
        raise ValueError(f"unknown weighting {weights!r}; use one of {', '.join(WEIGHTINGS)}")
    if size < 2:
        raise ValueError("a scale needs at least two points")
    index = np.arange(size)
    distance = np.abs(index[:, None] - index[None, :]).astype(float)
    if weights == "unweighted":
        result: np.ndarray = (distance > 0).astype(float)
        return result
    scaled = distance / (size - 1)
    result = scaled if weights == "linear" else scaled**2
    return result


def cohen_kappa(
    first: Sequence[int] | np.ndarray,
    second: Sequence[int] | np.ndarray,
    *,
    points: Sequence[int],
    weights: Weighting = "unweighted",
) -> float | None:
    """Cohen's kappa of two raters' paired labels on the ordinal scale ``points`` (low to high).

    Returns ``None`` when kappa is undefined: no pairs, or chance disagreement of zero (both raters
    gave one and the same value to every item, so agreement cannot be told apart from chance).
    Raises ``ValueError`` for a label that is not a point of the scale or for unpaired sequences.
    """
    if len(first) != len(second):
        raise ValueError(f"the raters have {len(first)} and {len(second)} labels; kappa needs pairs")
    if len(first) == 0:
        return None
    scale = list(points)
    if sorted(set(scale)) != scale:
        raise ValueError("scale points must be distinct and in increasing order")
    position = {point: index for index, point in enumerate(scale)}
    try:
        rows, columns = _positions(first, scale, position), _positions(second, scale, position)
    except KeyError as missing:
        raise ValueError(f"label {missing.args[0]!r} is not a point of the scale {scale}") from None
    size = len(scale)
    observed = (
        np.bincount(rows * size + columns, minlength=size * size).reshape(size, size).astype(np.float64)
    )
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    weight = disagreement_weights(size, weights)
    chance = float((weight * expected).sum())
    if chance <= 1e-12:
        return None
    return 1.0 - float((weight * observed).sum()) / chance


def _positions(
    labels: Sequence[int] | np.ndarray, scale: list[int], position: Mapping[int, int]
) -> np.ndarray:
    """``position[label]`` of every label: by binary search in the (increasing) scale when labels and scale
    are integers, else (or when a label is off the scale, to raise its ``KeyError``) label by label."""
    array = np.asarray(labels)
    if array.dtype.kind in "iu" and all(type(point) is int for point in scale):
        points = np.asarray(scale, dtype=np.int64)
        index = np.searchsorted(points, array)
        if np.all(index < points.size) and np.array_equal(points[np.minimum(index, points.size - 1)], array):
            return index
    return np.array([position[value] for value in labels], dtype=np.int64)


def nearest_point(value: float, points: Sequence[int]) -> int:
    """The scale point nearest to ``value``; a tie goes to the higher point (2.5 -> 3 on 1-5)."""
    return min(points, key=lambda point: (abs(point - value), -point))


def consensus_of(values: Sequence[int], *, points: Sequence[int], consensus: Consensus = "mean") -> int:
    """The other raters' verdict on one item, as a point of the scale."""
    if not values:
        raise ValueError("no values to summarise")
    if consensus == "mean":
        centre = math.fsum(values) / len(values)
    elif consensus == "median":
        centre = float(statistics.median(values))
    else:
        raise ValueError(f"unknown consensus {consensus!r}; use mean or median")
    return nearest_point(centre, points)


@dataclass(frozen=True)
class RaterAgreement:
    """One rater's kappa with the others and the number of items it rests on.

    ``kappa`` is ``None`` below the minimum of shared items or when kappa is undefined (see
    :func:`cohen_kappa`); ``items`` is always the number of shared items, so the reason shows.
    """

    kappa: float | None
    items: int


def agreement_with_others(
    ratings: Mapping[RaterT, Mapping[ItemT, int]],
    *,
    points: Sequence[int],
    weights: Weighting = "quadratic",
    consensus: Consensus = "mean",
    min_items: int = MIN_SHARED_ITEMS,
) -> dict[RaterT, RaterAgreement]:
    """rater -> kappa between their ratings and the rounded consensus of the other raters.

    ``ratings`` maps each rater to their value per item (one question). Items rated by nobody else are
    left out. Every rater's agreement is computed against all other raters, whatever is later decided
    about them, so excluding one rater never changes anyone else's number (no cascade).
    """
    by_item: dict[ItemT, list[tuple[RaterT, int]]] = {}
    for rater, values in ratings.items():
        for item, value in values.items():
            by_item.setdefault(item, []).append((rater, value))
    result: dict[RaterT, RaterAgreement] = {}
    for rater, values in ratings.items():
        own: list[int] = []
        others: list[int] = []
        for item, value in values.items():
            rest = [other_value for other, other_value in by_item[item] if other != rater]
            if rest:
                own.append(value)
                others.append(consensus_of(rest, points=points, consensus=consensus))
        kappa = (
            cohen_kappa(own, others, points=points, weights=weights)
            if len(own) >= max(1, min_items)
            else None
        )
        result[rater] = RaterAgreement(kappa=kappa, items=len(own))
    return result


def weighting_for_scale(points: Sequence[int]) -> Weighting:
    """Quadratic weights for ordinal scales of three or more points; on two points every weighting
    gives the same kappa, so the plain one is named."""
    return "quadratic" if len(points) > 2 else "unweighted"


def is_included(inclusion: str, agreement: float | None, threshold: float | None) -> bool:
    """Whether a rater's ratings count in reports: the researcher's override ("include"/"exclude"), else
    the threshold on their agreement with the others (Gupta et al. (2019) section 5.1.1 drops raters with kappa
    under 0.2). A rater without an agreement value (too few shared items) is kept: no evidence against
    them yet; a threshold of ``None`` keeps everyone."""
    if inclusion == INCLUDE:
        return True
    if inclusion == EXCLUDE:
        return False
    return threshold is None or agreement is None or agreement >= threshold

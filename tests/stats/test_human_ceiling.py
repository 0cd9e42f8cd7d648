"""Human (Avg)/(Max) and the Figure 4 data, against correlations computed here by hand with scipy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.human_ceiling import (
    human_rows,
    median_rater,
    random_halves,
    raters_vs_rest,
    z_normalised,
)

# 4 raters x 8 replies on 0-2; "d" skipped replies 0 and 1.
RATINGS: dict[Any, dict[Any, int]] = {
    "a": {0: 2, 1: 2, 2: 1, 3: 0, 4: 0, 5: 1, 6: 2, 7: 0},
    "b": {0: 2, 1: 1, 2: 1, 3: 0, 4: 1, 5: 1, 6: 2, 7: 1},
    "c": {0: 1, 1: 2, 2: 2, 3: 0, 4: 0, 5: 0, 6: 1, 7: 0},
    "d": {2: 0, 3: 1, 4: 0, 5: 2, 6: 2, 7: 0},
}


def _rest_by_hand(rater: str) -> tuple[list[int], list[float]]:
    own, rest = [], []
    for item in sorted(RATINGS[rater]):
        others = [RATINGS[o][item] for o in RATINGS if o != rater and item in RATINGS[o]]
        if others:
            own.append(RATINGS[rater][item])
            rest.append(sum(others) / len(others))
    return own, rest


def test_each_rater_against_the_mean_of_the_others() -> None:
    comparisons = {c.rater: c for c in raters_vs_rest(RATINGS)}
    for rater in RATINGS:
        own, rest = _rest_by_hand(rater)
        assert comparisons[rater].pearson.coefficient == pytest.approx(
            scipy_stats.pearsonr(rest, own).statistic
        )
        assert comparisons[rater].spearman.p_value == pytest.approx(scipy_stats.spearmanr(rest, own).pvalue)
        assert comparisons[rater].pearson.n == len(own)


def test_avg_is_the_mean_and_max_the_best_rater() -> None:
    comparisons = raters_vs_rest(RATINGS)
    average, best = human_rows(comparisons)
    pearsons = {
        c.rater: scipy_stats.pearsonr(*reversed(_rest_by_hand(c.rater))).statistic for c in comparisons
    }
    assert average.pearson == pytest.approx(np.mean(list(pearsons.values())))
    assert average.pearson_p == pytest.approx(max(c.pearson.p_value or 0.0 for c in comparisons))
    assert best.pearson == pytest.approx(max(pearsons.values()))
    assert best.pearson_rater == max(pearsons, key=lambda rater: pearsons[rater])
    assert average.raters == best.raters == 4


def test_median_rater_is_the_middle_one() -> None:
    comparisons = raters_vs_rest(RATINGS)
    ordered = sorted(comparisons, key=lambda c: c.pearson.coefficient or 0.0)
    median = median_rater(comparisons)
    assert median is not None
    assert median.rater == ordered[1].rater  # lower middle of four


def test_random_halves_compare_the_means_of_two_disjoint_halves() -> None:
    halves = random_halves(RATINGS, seed=1)
    assert halves is not None
    assert sorted(halves.first + halves.second) == ["a", "b", "c", "d"]
    assert len(halves.first) == 2
    for position, item in enumerate(halves.items):
        first = [RATINGS[r][item] for r in halves.first if item in RATINGS[r]]
        second = [RATINGS[r][item] for r in halves.second if item in RATINGS[r]]
        assert halves.first_mean[position] == pytest.approx(np.mean(first))
        assert halves.second_mean[position] == pytest.approx(np.mean(second))
    assert halves.pearson.coefficient == pytest.approx(
        scipy_stats.pearsonr(halves.first_mean, halves.second_mean).statistic
    )
    assert random_halves(RATINGS, seed=1) == halves  # reproducible


def test_anonymous_ratings_count_in_the_rest_but_are_never_a_rater() -> None:
    ratings = {"a": RATINGS["a"], "b": RATINGS["b"]}
    extra = {item: [RATINGS["c"][item]] for item in RATINGS["c"]}
    comparisons = raters_vs_rest(ratings, extra)
    assert {c.rater for c in comparisons} == {"a", "b"}
    a = next(c for c in comparisons if c.rater == "a")
    assert a.rest[0] == pytest.approx((RATINGS["b"][0] + RATINGS["c"][0]) / 2)


def test_z_normalisation_per_rater() -> None:
    normalised = z_normalised({"a": {0: 1, 1: 2, 2: 3}, "flat": {0: 2, 1: 2}})
    assert list(normalised["a"].values()) == pytest.approx([-1.0, 0.0, 1.0])
    assert list(normalised["flat"].values()) == [0.0, 0.0]


def test_one_rater_or_no_overlap_is_not_computable() -> None:
    average, best = human_rows(raters_vs_rest({"a": {0: 1, 1: 2}}))
    assert best.pearson is None
    assert average.pearson is None
    assert average.note == "not computable: fewer than two raters with known identity"
    average, _ = human_rows(raters_vs_rest({"a": {0: 1, 1: 2}, "b": {2: 1, 3: 0}}))
    assert average.pearson is None
    assert average.note.startswith("not computable: no rater shares")
    assert random_halves({"a": {0: 1}}) is None

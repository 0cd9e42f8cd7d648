"""Cohen's kappa (plain, linear, quadratic) and each rater's agreement with the others.

scikit-learn is not a dependency of the project, so the numbers are checked against hand-computed
textbook examples and against a second, independent formulation of weighted kappa (agreement weights,
kappa = (po - pe) / (1 - pe)) written with plain loops.
"""

from __future__ import annotations

import random

import pytest

from stats.agreement import (
    agreement_with_others,
    cohen_kappa,
    consensus_of,
    disagreement_weights,
    nearest_point,
    weighting_for_scale,
)


def _reference_kappa(first: list[int], second: list[int], points: list[int], weights: str) -> float:
    """Weighted kappa with agreement weights 1 - w, as Cohen (1968) writes it, in plain Python."""
    size = len(points)
    n = len(first)

    def agreement(i: int, j: int) -> float:
        distance = abs(i - j)
        if weights == "unweighted":
            return 1.0 if distance == 0 else 0.0
        scaled = distance / (size - 1)
        return 1.0 - (scaled if weights == "linear" else scaled**2)

    index = {point: position for position, point in enumerate(points)}
    a = [index[value] for value in first]
    b = [index[value] for value in second]
    po = sum(agreement(i, j) for i, j in zip(a, b, strict=True)) / n
    pa = [a.count(i) / n for i in range(size)]
    pb = [b.count(j) / n for j in range(size)]
    pe = sum(pa[i] * pb[j] * agreement(i, j) for i in range(size) for j in range(size))
    return (po - pe) / (1 - pe)


def test_the_textbook_two_by_two_example() -> None:
    """50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15: po = 0.7, pe = 0.5, kappa = 0.4."""
    first = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    second = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(first, second, points=[0, 1]) == pytest.approx(0.4)
    # On two points every weighting is the same kappa.
    assert cohen_kappa(first, second, points=[0, 1], weights="quadratic") == pytest.approx(0.4)


def test_weights_change_the_value_as_computed_by_hand() -> None:
    """Pairs (0,0) (1,1) (2,2) (0,1) (1,2) (2,1): half agree, every disagreement is one step.

    Marginals 1/3 each for the first rater, 1/6, 1/2, 1/3 for the second. Expected disagreement:
    unweighted 2/3, linear 5/12, quadratic 7/24; observed: 1/2, 1/4, 1/8.
    """
    first, second = [0, 1, 2, 0, 1, 2], [0, 1, 2, 1, 2, 1]
    assert cohen_kappa(first, second, points=[0, 1, 2]) == pytest.approx(0.25)
    assert cohen_kappa(first, second, points=[0, 1, 2], weights="linear") == pytest.approx(0.4)
    assert cohen_kappa(first, second, points=[0, 1, 2], weights="quadratic") == pytest.approx(4 / 7)


def test_agrees_with_the_independent_formulation_on_random_data() -> None:
    rng = random.Random(7)
    points = [1, 2, 3, 4, 5]
    for _ in range(25):
        n = rng.randint(8, 60)
        first = [rng.choice(points) for _ in range(n)]
        second = [min(5, max(1, value + rng.choice([-2, -1, 0, 0, 1]))) for value in first]
        for weights in ("unweighted", "linear", "quadratic"):
            assert cohen_kappa(first, second, points=points, weights=weights) == pytest.approx(
                _reference_kappa(first, second, points, weights)
            )


def test_perfect_agreement_is_one_and_perfect_opposition_minus_one() -> None:
    values = [0, 1, 2, 2, 1, 0, 1]
    for weights in ("unweighted", "linear", "quadratic"):
        assert cohen_kappa(values, values, points=[0, 1, 2], weights=weights) == pytest.approx(1.0)
    assert cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0], points=[0, 1]) == pytest.approx(-1.0)


def test_independent_raters_agree_at_chance() -> None:
    rng = random.Random(3)
    first = [rng.randint(1, 5) for _ in range(20_000)]
    second = [rng.randint(1, 5) for _ in range(20_000)]
    for weights in ("unweighted", "linear", "quadratic"):
        kappa = cohen_kappa(first, second, points=[1, 2, 3, 4, 5], weights=weights)
        assert kappa is not None
        assert abs(kappa) < 0.03


def test_weighted_kappa_measures_distance_on_the_scale_not_among_the_labels_used() -> None:
    """Labels 0, 1, 3: on the 0-3 scale, 1 vs 3 is two steps; on a scale without 2 it would be one.
    Unused points at the ends change nothing: they scale every weight by one constant, which cancels."""
    first, second = [0, 1, 3, 0, 1, 3, 3], [0, 1, 3, 1, 3, 1, 0]
    full = cohen_kappa(first, second, points=[0, 1, 2, 3], weights="linear")
    gapless = cohen_kappa(first, second, points=[0, 1, 3], weights="linear")
    assert full == pytest.approx(_reference_kappa(first, second, [0, 1, 2, 3], "linear"))
    assert full != pytest.approx(gapless)
    assert cohen_kappa(first, second, points=[0, 1, 2, 3]) == pytest.approx(
        cohen_kappa(first, second, points=[0, 1, 3])
    )
    wider = cohen_kappa(first, second, points=[-1, 0, 1, 2, 3, 4], weights="quadratic")
    assert wider == pytest.approx(cohen_kappa(first, second, points=[0, 1, 2, 3], weights="quadratic"))


def test_undefined_cases_are_none_and_bad_input_is_an_error() -> None:
    assert cohen_kappa([], [], points=[0, 1, 2]) is None
    # Both always say 2: agreement cannot be told from chance.
    assert cohen_kappa([2, 2, 2], [2, 2, 2], points=[0, 1, 2], weights="quadratic") is None
    with pytest.raises(ValueError, match="not a point of the scale"):
        cohen_kappa([0, 3], [0, 1], points=[0, 1, 2])
    with pytest.raises(ValueError, match="pairs"):
        cohen_kappa([0, 1], [0], points=[0, 1, 2])
    with pytest.raises(ValueError, match="unknown weighting"):
        disagreement_weights(3, "cubic")  # type: ignore[arg-type]


def test_weight_matrices() -> None:
    assert disagreement_weights(3, "linear").tolist() == [[0, 0.5, 1], [0.5, 0, 0.5], [1, 0.5, 0]]
    assert disagreement_weights(3, "quadratic").tolist() == [[0, 0.25, 1], [0.25, 0, 0.25], [1, 0.25, 0]]
    assert disagreement_weights(3, "unweighted").tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    assert weighting_for_scale([0, 1, 2]) == "quadratic"
    assert weighting_for_scale([0, 1]) == "unweighted"


def test_consensus_rounds_to_the_nearest_point_halves_up() -> None:
    assert nearest_point(1.5, [0, 1, 2]) == 2
    assert nearest_point(1.49, [0, 1, 2]) == 1
    assert nearest_point(7.0, [1, 2, 3, 4, 5]) == 5
    assert consensus_of([1, 2], points=[0, 1, 2]) == 2
    assert consensus_of([0, 0, 2], points=[0, 1, 2]) == 1  # mean 0.67
    assert consensus_of([0, 0, 2], points=[0, 1, 2], consensus="median") == 0


def _panel(items: int = 8, agreeing: int = 5) -> dict[str, dict[int, int]]:
    """Raters who agree on everything, and a contrarian who turns every score around."""
    truth = {item: item % 3 for item in range(items)}
    panel = {f"r{index}": dict(truth) for index in range(agreeing)}
    panel["contrarian"] = {item: 2 - value for item, value in truth.items()}
    return panel


def test_each_rater_against_the_consensus_of_the_others() -> None:
    result = agreement_with_others(_panel(), points=[0, 1, 2], weights="quadratic")
    # r0's others: four who agree and the contrarian; their mean rounds back to r0's own value.
    assert result["r0"].items == 8
    assert result["r0"].kappa == pytest.approx(1.0)
    truth = [i % 3 for i in range(8)]
    assert result["contrarian"].kappa == pytest.approx(
        _reference_kappa([2 - value for value in truth], truth, [0, 1, 2], "quadratic")
    )
    contrarian = result["contrarian"].kappa
    assert contrarian is not None
    assert contrarian < -0.9


def test_a_mean_consensus_is_pulled_by_an_outlier_a_median_is_not() -> None:
    """Two agreeing others and the contrarian: their mean rounds to 1 whatever the truth (no information,
    kappa 0), their median is the truth."""
    ratings = _panel(agreeing=3)
    by_mean = agreement_with_others(ratings, points=[0, 1, 2])
    by_median = agreement_with_others(ratings, points=[0, 1, 2], consensus="median")
    assert by_mean["r0"].kappa == pytest.approx(0.0)
    assert by_median["r0"].kappa == pytest.approx(1.0)


def test_too_few_shared_items_give_no_kappa_but_say_how_many() -> None:
    ratings = _panel(items=4)
    ratings["r0"][99] = 2  # an item nobody else rated does not count
    result = agreement_with_others(ratings, points=[0, 1, 2], min_items=5)
    assert result["r0"].kappa is None
    assert result["r0"].items == 4
    enough = agreement_with_others(ratings, points=[0, 1, 2], min_items=4)
    assert enough["r1"].kappa == pytest.approx(1.0)
    alone = agreement_with_others({"solo": {1: 2, 2: 1, 3: 0, 4: 1, 5: 2}}, points=[0, 1, 2])
    assert alone["solo"].items == 0
    assert alone["solo"].kappa is None


def _kappa_as_first_written(first: list, second: list, points: list[int], weights: str) -> float | None:
    """cohen_kappa's arithmetic with its table counted by dict lookups and np.add.at, as first written."""
    import numpy as np

    position = {point: index for index, point in enumerate(points)}
    rows = np.array([position[value] for value in first])
    columns = np.array([position[value] for value in second])
    size = len(points)
    observed = np.zeros((size, size))
    np.add.at(observed, (rows, columns), 1.0)
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    weight = disagreement_weights(size, weights)  # type: ignore[arg-type]
    chance = float((weight * expected).sum())
    return None if chance <= 1e-12 else 1.0 - float((weight * observed).sum()) / chance


@pytest.mark.parametrize("weights", ["unweighted", "linear", "quadratic"])
@pytest.mark.parametrize("points", [[1, 2, 3, 4, 5], [0, 1], [-2, 0, 3, 10]])
def test_the_counted_table_is_the_one_of_dict_lookups_to_the_bit(weights: str, points: list[int]) -> None:
    """Labels as Python ints and as floats equal to points (3.0), scales with gaps and negatives, labels off the
    scale."""
    rng = random.Random(len(points) * 7 + len(weights))
    for size in (1, 2, 7, 500):
        first = [rng.choice(points) for _ in range(size)]
        second = [rng.choice(points) for _ in range(size)]
        for a, b in ((first, second), ([float(v) for v in first], second)):
            expected = _kappa_as_first_written(a, b, points, weights)
            assert cohen_kappa(a, b, points=points, weights=weights) == expected  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a point of the scale"):
        cohen_kappa([points[0], 99], [points[0], points[0]], points=points)
    with pytest.raises(ValueError, match="not a point of the scale"):
        cohen_kappa([points[0], points[0]], [points[0], -99], points=points)

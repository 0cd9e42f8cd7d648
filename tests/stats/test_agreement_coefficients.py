"""Agreement coefficients against the published worked examples and the reference libraries."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stats.agreement_coefficients import (
    fleiss_kappa,
    intraclass_correlation,
    krippendorff_alpha,
    leave_one_out_alpha,
    mean_pair_kappa,
    pairwise_kappas,
    values_by_item,
)

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers x 12 units,
# values 1-5, missing data. Published: nominal .743, ordinal .815, interval .849.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}

# Shrout and Fleiss (1979), Table 2: 6 targets x 4 judges. Published: ICC(1,1) .17, ICC(2,1) .29,
# ICC(1,4) .44, ICC(2,4) .62.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]

# Fleiss (1971) as on Wikipedia's "Fleiss' kappa" page: 10 subjects x 14 raters, 5 categories; kappa .210.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _by_rater(table: dict[str, list[int | None]]) -> dict[str, dict[int, int]]:
    return {
        rater: {unit: v for unit, v in enumerate(values) if v is not None} for rater, values in table.items()
    }


@pytest.mark.parametrize(("level", "published"), [("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_alpha_reproduces_krippendorff_2011(level: Any, published: float) -> None:
    result = krippendorff_alpha(
        values_by_item(_by_rater(KRIPPENDORFF_2011)), points=[1, 2, 3, 4, 5], level=level
    )
    assert result.value == pytest.approx(published, abs=5e-4)
    assert result.items == 11  # unit 12 has a single value: not pairable
    assert result.note == ""


def test_fleiss_kappa_reproduces_the_published_example() -> None:
    items = {
        subject: [category for category, count in enumerate(row, start=1) for _ in range(count)]
        for subject, row in enumerate(FLEISS_TABLE)
    }
    result = fleiss_kappa(items, points=[1, 2, 3, 4, 5])
    assert result.value == pytest.approx(0.210, abs=5e-4)
    assert result.details["raters_per_item"] == 14


def test_fleiss_kappa_uses_the_most_common_number_of_ratings_and_says_so() -> None:
    items = {i: [0, 0, 1] if i % 2 else [2, 2, 2] for i in range(10)}
    items[10] = [0, 1]
    result = fleiss_kappa(items, points=[0, 1, 2])
    assert result.items == 10
    assert result.details["items_left_out"] == 1


def test_icc_two_way_for_crossed_raters_reproduces_shrout_and_fleiss() -> None:
    ratings = {f"judge{j}": {t: row[j] for t, row in enumerate(SHROUT_FLEISS)} for j in range(4)}
    result = intraclass_correlation(ratings)
    assert result.details["type"] == "ICC(A,1)"
    assert result.value == pytest.approx(0.29, abs=0.005)
    assert result.details["average_value"] == pytest.approx(0.62, abs=0.005)


def test_icc_one_way_when_identity_is_unknown_reproduces_shrout_and_fleiss() -> None:
    anonymous = dict(enumerate(SHROUT_FLEISS))
    result = intraclass_correlation({}, anonymous)
    assert result.details["type"] == "ICC(1,1)"
    assert result.value == pytest.approx(0.17, abs=0.005)
    assert result.details["average_value"] == pytest.approx(0.44, abs=0.005)


def test_pairwise_kappas_equal_sklearn_weighted_kappa() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    truth = rng.integers(1, 6, size=40)
    ratings: dict[Any, dict[Any, int]] = {
        name: {i: int(np.clip(truth[i] + rng.integers(-1, 2), 1, 5)) for i in range(40) if rng.random() < 0.9}
        for name in ("a", "b", "c")
    }
    pairs = pairwise_kappas(ratings, points=[1, 2, 3, 4, 5])
    assert len(pairs) == 3
    for pair in pairs:
        shared = sorted(set(ratings[pair.first]) & set(ratings[pair.second]))
        expected = metrics.cohen_kappa_score(
            [ratings[pair.first][i] for i in shared],
            [ratings[pair.second][i] for i in shared],
            labels=[1, 2, 3, 4, 5],
            weights="quadratic",
        )
        assert pair.kappa == pytest.approx(expected, abs=1e-12)
        assert pair.items == len(shared)
    assert mean_pair_kappa(pairs).value == pytest.approx(np.mean([p.kappa for p in pairs]))


def test_leave_one_out_alpha_rises_without_a_contrarian() -> None:
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 3, size=30)
    ratings: dict[Any, dict[Any, float]] = {
        name: {i: int(truth[i]) for i in range(30)} for name in ("a", "b", "c")
    }
    ratings["contrarian"] = {i: int(2 - truth[i]) for i in range(30)}
    everyone = krippendorff_alpha(values_by_item(ratings), points=[0, 1, 2], level="ordinal").value
    without = leave_one_out_alpha(ratings, {}, points=[0, 1, 2])
    assert without["contrarian"].value == pytest.approx(1.0)
    assert everyone is not None
    assert without["contrarian"].value is not None
    assert without["a"].value is not None
    assert without["contrarian"].value > everyone
    assert without["a"].value < everyone


@pytest.mark.parametrize(
    ("ratings", "reason"),
    [
        ({"a": {1: 2, 2: 1}}, "no reply has two ratings"),
        ({"a": {1: 2, 2: 1}, "b": {3: 2, 4: 0}}, "no reply has two ratings"),
        ({"a": {1: 1, 2: 1}, "b": {1: 1, 2: 1}}, "every rating has the same value"),
    ],
)
def test_degenerate_data_is_not_computable_with_a_reason(ratings: Any, reason: str) -> None:
    items = values_by_item(ratings)
    for result in (
        krippendorff_alpha(items, points=[0, 1, 2], level="ordinal"),
        krippendorff_alpha(items, points=[0, 1, 2], level="interval"),
        fleiss_kappa(items, points=[0, 1, 2]),
    ):
        assert result.value is None
        assert result.note == f"not computable: {reason}"


def test_pairs_without_enough_overlap_say_so() -> None:
    pairs = pairwise_kappas({"a": {1: 0, 2: 1}, "b": {3: 0}, "c": {1: 0, 2: 2}}, points=[0, 1, 2])
    notes = {(p.first, p.second): p.note for p in pairs}
    assert notes[("a", "b")] == "not computable: no reply rated by both"
    assert "only 2 shared replies" in notes[("a", "c")]
    assert mean_pair_kappa(pairs).note == "not computable: no pair of raters shares enough replies"
    assert mean_pair_kappa([]).note.startswith("not computable: fewer than two raters")


def test_the_crossed_icc_does_not_depend_on_the_reply_ids_or_the_order_they_came_in() -> None:
    """The same ratings under other reply ids (a database's ids depend on what it held before) and in another
    order give the same ICC to the bit: the rows are summed in the replies' order, not a set's."""
    rng = np.random.default_rng(3)
    quality = rng.integers(0, 3, 40)
    ratings = np.clip(quality[:, None] + rng.integers(-1, 2, (40, 3)), 0, 2)
    values = set()
    for offset in (1, 1000, 4093, 65_521, 10**9):
        for order in (range(40), reversed(range(40))):
            by_rater: dict[str, dict[int, int]] = {rater: {} for rater in ("a", "b", "c")}
            for row in order:
                for column, rater in enumerate(by_rater):
                    by_rater[rater][offset + 7 * row] = int(ratings[row, column])
            result = intraclass_correlation(by_rater)
            assert result.details["type"] == "ICC(A,1)"
            values.add(result.value)
    assert len(values) == 1

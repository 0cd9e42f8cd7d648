"""The rater side grouped with numpy gives exactly what the loops it replaced gave: the same keys in
the same order, the same value objects, the same floats bit for bit. The loops are kept here, verbatim, as the
reference."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from stats.agreement_coefficients import (
    RatedCounts,
    fleiss_kappa,
    krippendorff_alpha,
    leave_one_out_alpha,
    pairwise_kappas,
    value_counts,
    values_by_item,
)
from stats.human_ceiling import _item_means, random_halves, raters_vs_rest
from stats.ratings_by_item import group_by_key
from stats.report.human import counted_ratings, human_scores
from stats.report.types import AnnotatorInfo, QuestionInputs, ReportOptions


def _old_values_by_item(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]],
    anonymous_by_item: Mapping[Any, Sequence[float]] | None = None,
) -> dict[Any, list[float]]:
    result: dict[Any, list[float]] = {}
    for values in ratings_by_rater.values():
        for item, value in values.items():
            result.setdefault(item, []).append(value)
    for item, extra in (anonymous_by_item or {}).items():
        result.setdefault(item, []).extend(extra)
    return result


def _old_value_counts(values_by_item: Mapping[Any, Sequence[float]], points: Sequence[int]) -> np.ndarray:
    position = {point: index for index, point in enumerate(points)}
    rows: list[int] = []
    columns: list[int] = []
    for row, values in enumerate(values_by_item.values()):
        for value in values:
            rows.append(row)
            columns.append(position[int(value)])
    counts = np.zeros((len(values_by_item), len(position)))
    np.add.at(counts, (np.array(rows, dtype=int), np.array(columns, dtype=int)), 1.0)
    return counts


def _old_item_means(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]], raters: Sequence[Any]
) -> dict[Any, float]:
    sums: dict[Any, list[float]] = {}
    for rater in raters:
        for item, value in ratings_by_rater[rater].items():
            sums.setdefault(item, []).append(value)
    return {item: math.fsum(values) / len(values) for item, values in sums.items()}


def _old_rest(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]], extra_by_item: Mapping[Any, Sequence[float]]
) -> dict[Any, tuple[float, ...]]:
    totals: dict[Any, float] = {}
    counts: dict[Any, int] = {}
    for values in ratings_by_rater.values():
        for item, value in values.items():
            totals[item] = totals.get(item, 0.0) + value
            counts[item] = counts.get(item, 0) + 1
    for item, extra in extra_by_item.items():
        totals[item] = totals.get(item, 0.0) + math.fsum(extra)
        counts[item] = counts.get(item, 0) + len(extra)
    result = {}
    for rater, values in ratings_by_rater.items():
        items = tuple(sorted((item for item in values if counts[item] > 1), key=repr))
        result[rater] = tuple((totals[item] - values[item]) / (counts[item] - 1) for item in items)
    return result


def _old_items_and_own(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]], extra_by_item: Mapping[Any, Sequence[float]]
) -> dict[Any, tuple[tuple[Any, ...], tuple[float, ...]]]:
    counts: dict[Any, int] = {}
    for values in ratings_by_rater.values():
        for item in values:
            counts[item] = counts.get(item, 0) + 1
    for item, extra in extra_by_item.items():
        counts[item] = counts.get(item, 0) + len(extra)
    result = {}
    for rater, values in ratings_by_rater.items():
        items = tuple(sorted((item for item in values if counts[item] > 1), key=repr))
        result[rater] = (items, tuple(float(values[item]) for item in items))
    return result


def _old_fleiss(values_by_item: Mapping[Any, Sequence[float]], points: Sequence[int]) -> tuple[Any, ...]:
    """Fleiss' kappa as computed before the shared table: (value, replies, k, replies left out)."""
    from collections import Counter

    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    counts = Counter(len(values) for values in values_by_item.values() if len(values) >= 2)
    k = max(counts, key=lambda size: (counts[size], size))
    used = [values for values in values_by_item.values() if len(values) == k]
    table = _old_value_counts(dict(enumerate(used)), points)
    value = float(statsmodels_fleiss(table, method="fleiss"))
    return (value, len(used), k, sum(counts.values()) - len(used))


def _old_pairwise_kappas(
    ratings_by_rater: Mapping[Any, Mapping[Any, float]], points: Sequence[int]
) -> list[Any]:
    """The set-based loop before the raters x replies table, on labels int(value) as the report passed them."""
    from itertools import combinations

    from stats.agreement import cohen_kappa, weighting_for_scale

    labels = {
        rater: {item: int(value) for item, value in rated.items()}
        for rater, rated in ratings_by_rater.items()
    }
    result = []
    for first, second in combinations(labels, 2):
        shared = sorted(set(labels[first]) & set(labels[second]), key=repr)
        kappa = (
            cohen_kappa(
                [labels[first][item] for item in shared],
                [labels[second][item] for item in shared],
                points=points,
                weights=weighting_for_scale(points),
            )
            if len(shared) >= 5
            else None
        )
        result.append((first, second, kappa, len(shared)))
    return result


def _old_counted(
    question: QuestionInputs, annotators: Mapping[int, AnnotatorInfo], included: Mapping[int, bool]
) -> tuple[dict[Any, Any], ...]:
    kept_named: dict[int, dict[int, float]] = {}
    kept_anonymous: dict[int, list[float]] = {}
    all_named: dict[int, dict[int, float]] = {}
    all_by_item: dict[int, list[float]] = {}
    removed: dict[int, int] = {}
    for key, response_id, value in question.ratings:
        info = annotators[key]
        all_by_item.setdefault(response_id, []).append(value)
        if info.identity_known:
            all_named.setdefault(key, {})[response_id] = value
        if not included[key]:
            removed[key] = removed.get(key, 0) + 1
        elif info.identity_known:
            kept_named.setdefault(key, {})[response_id] = value
        else:
            kept_anonymous.setdefault(response_id, []).append(value)
    return kept_named, kept_anonymous, all_named, all_by_item, removed


def _same(a: Any, b: Any) -> None:
    """Equal, in the same order, with the same types, floats bit for bit."""
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            assert type(key) is type(next(k for k in b if k == key))
            _same(a[key], b[key])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, float):
        assert a == b or (math.isnan(a) and math.isnan(b))
    else:
        assert a == b


def _ratings(seed: int, items: int = 300, raters: int = 6, floats: bool = False) -> dict[Any, dict[Any, Any]]:
    rng = np.random.default_rng(seed)
    result: dict[Any, dict[Any, Any]] = {}
    for rater in rng.permutation(raters).tolist():
        chosen = rng.choice(items, size=int(rng.integers(items // 3, items)), replace=False)
        values = rng.normal(size=chosen.size) if floats else rng.integers(1, 6, chosen.size)
        result[f"r{rater}" if seed % 2 else rater] = dict(
            zip([int(i) for i in chosen], [float(v) if floats else int(v) for v in values], strict=True)
        )
    return result


def _anonymous(seed: int, items: int = 300, floats: bool = False) -> dict[int, list[Any]]:
    rng = np.random.default_rng(seed + 100)
    chosen = rng.choice(items + 50, size=80, replace=False)
    return {
        int(i): [
            float(v) if floats else int(v) for v in (rng.normal(size=3) if floats else rng.integers(1, 6, 3))
        ]
        for i in chosen
    }


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("floats", [False, True])
def test_values_by_item_equals_the_loop(seed: int, floats: bool) -> None:
    ratings, anonymous = _ratings(seed, floats=floats), _anonymous(seed, floats=floats)
    _same(values_by_item(ratings, anonymous), _old_values_by_item(ratings, anonymous))
    _same(values_by_item(ratings), _old_values_by_item(ratings))
    with_empty = {**anonymous, 9999: []}
    _same(values_by_item(ratings, with_empty), _old_values_by_item(ratings, with_empty))


def test_values_by_item_with_keys_of_any_kind() -> None:
    ratings = {"a": {("x", 1): 2, "y": 3, 2.5: 1}, "b": {"y": 4, 7: 5}}
    _same(values_by_item(ratings, {"z": [1, 2]}), _old_values_by_item(ratings, {"z": [1, 2]}))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_value_counts_equals_the_loop(seed: int) -> None:
    items = _old_values_by_item(_ratings(seed), _anonymous(seed))
    np.testing.assert_array_equal(value_counts(items, range(1, 6)), _old_value_counts(items, range(1, 6)))
    np.testing.assert_array_equal(value_counts({}, range(1, 6)), _old_value_counts({}, range(1, 6)))


def test_value_counts_refuses_a_value_off_the_scale_as_the_loop_did() -> None:
    with pytest.raises(KeyError):
        value_counts({1: [1, 7]}, range(1, 6))
    with pytest.raises(ValueError, match="NaN"):
        value_counts({1: [1, math.nan]}, range(1, 6))
    # int() truncates towards zero: 2.7 counts as 2, as before.
    np.testing.assert_array_equal(value_counts({1: [2.7, -0.5]}, [-1, 0, 1, 2]), [[0, 1, 0, 1]])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("floats", [False, True])
def test_item_means_equal_the_loop(seed: int, floats: bool) -> None:
    ratings = _ratings(seed, floats=floats)
    raters = list(ratings)[::2]
    _same(_item_means(ratings, raters), _old_item_means(ratings, raters))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("floats", [False, True])
def test_raters_vs_rest_equals_the_loop(seed: int, floats: bool) -> None:
    ratings, anonymous = _ratings(seed, floats=floats), _anonymous(seed, floats=floats)
    expected = _old_rest(ratings, anonymous)
    items_and_own = _old_items_and_own(ratings, anonymous)
    comparisons = raters_vs_rest(ratings, anonymous)
    assert [comparison.rater for comparison in comparisons] == list(ratings)
    for comparison in comparisons:
        _same(comparison.rest, expected[comparison.rater])
        _same((comparison.items, comparison.own), items_and_own[comparison.rater])


@pytest.mark.parametrize(
    "keys",
    [
        [
            0,
            1,
            9,
            10,
            19,
            2,
            100,
            1000,
            99,
            101,
            10**16,
            10**16 + 1,
            5 * 10**15,
        ],  # decimal prefixes sort first
        [-1, -10, 3, 30, 4],  # a minus sign sorts before digits: compared as strings
        [10**17, 2, 10**18 + 3],  # too long for the numeric order
        ["b", "a10", "a9", ("x", 1), 2.5, 7],  # keys of any kind
    ],
)
def test_raters_vs_rest_orders_replies_by_repr_for_keys_of_any_kind(keys: list[Any]) -> None:
    rng = np.random.default_rng(5)
    ratings = {
        rater: {key: int(value) for key, value in zip(keys, rng.integers(1, 6, len(keys)), strict=True)}
        for rater in ("a", "b", "c")
    }
    expected = _old_items_and_own(ratings, {})
    for comparison in raters_vs_rest(ratings):
        _same((comparison.items, comparison.own), expected[comparison.rater])
        assert list(comparison.items) == sorted(keys, key=repr)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_halves_compare_the_shared_replies_in_repr_order(seed: int) -> None:
    ratings = _ratings(seed, floats=bool(seed % 2))
    halves = random_halves(ratings, seed=seed)
    assert halves is not None
    first = _old_item_means(ratings, halves.first)
    second = _old_item_means(ratings, halves.second)
    items = tuple(sorted(set(first) & set(second), key=repr))
    _same(halves.items, items)
    _same(halves.first_mean, tuple(first[item] for item in items))
    _same(halves.second_mean, tuple(second[item] for item in items))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("floats", [False, True])
def test_pairwise_kappas_equal_the_set_loop(seed: int, floats: bool) -> None:
    ratings = _ratings(seed, floats=floats)
    if floats:  # labels are int(value): on a -2..2 scale
        ratings = {r: {i: max(-2.0, min(2.0, v)) for i, v in rated.items()} for r, rated in ratings.items()}
    points = [-2, -1, 0, 1, 2] if floats else [1, 2, 3, 4, 5]
    sparse = {**ratings, "few": dict(list(next(iter(ratings.values())).items())[:3]), "none": {10_000: 1}}
    got = [(p.first, p.second, p.kappa, p.items) for p in pairwise_kappas(sparse, points=points)]
    assert got == _old_pairwise_kappas(sparse, points)
    assert any(kappa is not None for _, _, kappa, _ in got)
    assert any(items == 0 for _, _, _, items in got)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rated_counts_give_the_coefficients_of_values_by_item(seed: int) -> None:
    """The report's shared table of value counts gives alpha (both levels) and Fleiss' kappa bit for bit as
    computed from values_by_item, with and without anonymous ratings, and with a tie of rating counts."""
    points = [1, 2, 3, 4, 5]
    for ratings, anonymous in (
        (_ratings(seed), _anonymous(seed)),
        (_ratings(seed), {}),
        ({"a": {1: 1, 2: 2, 3: 3}, "b": {1: 2, 2: 2}, "c": {3: 3, 4: 1}}, {4: [2], 5: [1, 5]}),
        # two replies with 2 ratings, two with 3: the tie goes to 3
        ({"a": {1: 1, 2: 2, 3: 3, 4: 4}, "b": {1: 2, 2: 2, 3: 3, 4: 5}, "c": {3: 1, 4: 2}}, {}),
    ):
        table = RatedCounts.of(ratings, anonymous, points)
        items = values_by_item(ratings, anonymous)
        np.testing.assert_array_equal(table.counts, value_counts(items, points))
        for level in ("ordinal", "interval"):
            assert table.alpha(level) == krippendorff_alpha(items, points=points, level=level)
        assert table.fleiss() == fleiss_kappa(items, points=points)
        fleiss = table.fleiss()
        assert (
            fleiss.value,
            fleiss.items,
            fleiss.details["raters_per_item"],
            fleiss.details["items_left_out"],
        ) == (_old_fleiss(items, points))
        assert leave_one_out_alpha(ratings, anonymous, points=points, counted=table) == leave_one_out_alpha(
            ratings, anonymous, points=points
        )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agreement_coefficients_are_unchanged(seed: int) -> None:
    ratings, anonymous = _ratings(seed), _anonymous(seed)
    points = [1, 2, 3, 4, 5]
    old_items = _old_values_by_item(ratings, anonymous)
    import krippendorff

    expected = krippendorff.alpha(
        value_counts=_old_value_counts(old_items, points)[
            _old_value_counts(old_items, points).sum(axis=1) >= 2
        ],
        level_of_measurement="ordinal",
        value_domain=points,
    )
    assert (
        krippendorff_alpha(values_by_item(ratings, anonymous), points=points, level="ordinal").value
        == expected
    )
    loo = leave_one_out_alpha(ratings, anonymous, points=points)
    for rater, values in ratings.items():
        without = {r: v for r, v in ratings.items() if r != rater}
        counts = _old_value_counts(_old_values_by_item(without, anonymous), points)
        # The rater's items keep their rows (emptier): rows with fewer than 2 ratings drop out either way.
        reference = krippendorff.alpha(
            value_counts=counts[counts.sum(axis=1) >= 2], level_of_measurement="ordinal", value_domain=points
        )
        assert loo[rater].value == pytest.approx(reference, abs=1e-15)
        assert values  # every rater rated something
    table = {item: values for item, values in old_items.items() if len(values) == 3}
    assert fleiss_kappa(table, points=points).value is not None


def _question(seed: int) -> tuple[QuestionInputs, dict[int, AnnotatorInfo]]:
    rng = np.random.default_rng(seed)
    annotators = {
        key: AnnotatorInfo(
            key=key,
            pseudonym=f"a{key}",
            identity_known=key % 4 != 3,
            inclusion=["auto", "include", "exclude"][key % 3],
            agreement=float(rng.random()),
        )
        for key in range(8)
    }
    ratings = [
        (int(rng.integers(0, 8)), int(rng.integers(0, 400)), int(rng.integers(1, 6))) for _ in range(2000)
    ]
    ratings += ratings[:20]  # a rater rating the same reply twice: the later value wins, as in a dict
    question = QuestionInputs(
        name="q", scale_min=1, scale_max=5, ratings=tuple(ratings), imported_means={5: 2.5}
    )
    return question, annotators


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("threshold", [None, 0.5])
def test_counted_ratings_equal_the_loop(seed: int, threshold: float | None) -> None:
    from stats.report.human import _counts

    question, annotators = _question(seed)
    options = ReportOptions()
    counted = counted_ratings(question, annotators, options, threshold)
    included = {key: _counts(info, options, threshold) for key, info in annotators.items()}
    kept_named, kept_anonymous, all_named, all_by_item, removed = _old_counted(question, annotators, included)
    _same(counted.kept_named, kept_named)
    _same(counted.kept_anonymous, kept_anonymous)
    _same(counted.all_named, all_named)
    _same(counted.all_by_item, all_by_item)
    _same(counted.removed, removed)
    assert counted.kept_named is not counted.all_named


@pytest.mark.parametrize("normalise", ["none", "z"])
def test_human_scores_equal_the_loop(normalise: str) -> None:
    from stats.human_ceiling import z_normalised
    from stats.report.human import _counts, _normalised_anonymous

    question, annotators = _question(7)
    options = ReportOptions(normalise=normalise)
    scores = human_scores(question, annotators, options, 0.3)
    included = {key: _counts(info, options, 0.3) for key, info in annotators.items()}
    kept_named, kept_anonymous, *_ = _old_counted(question, annotators, included)
    if normalise == "z":
        kept_named = z_normalised(kept_named)
        kept_anonymous = _normalised_anonymous(kept_anonymous, normalise)
    expected = {5: 2.5}
    for item, values in _old_values_by_item(kept_named, kept_anonymous).items():
        expected[item] = math.fsum(values) / len(values)
    _same(scores, expected)


def test_group_by_key_orders_by_first_appearance() -> None:
    grouped = group_by_key([5, 3, 5, 9, 3, 5])
    assert grouped.keys == [5, 3, 9]
    assert grouped.codes.tolist() == [0, 1, 0, 2, 1, 0]
    assert grouped.lists(["a", "b", "c", "d", "e", "f"]) == [["a", "c", "f"], ["b", "e"], ["d"]]
    assert grouped.means([1, 2, 3, 4, 5, 6]) == [10 / 3, 7 / 2, 4.0]
    empty = group_by_key([])
    assert empty.keys == []
    assert empty.lists([]) == []

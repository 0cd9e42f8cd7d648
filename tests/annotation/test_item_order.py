"""An annotator's shuffle of work items (annotation.item_order): a real shuffle of consecutive ids, one per
seed. Items imported together have consecutive ids, so the order must owe nothing to the ids' own."""

from __future__ import annotations

import random
from collections import Counter

from scipy import stats

from annotation.item_order import shuffle_key

ITEMS = list(range(7, 31, 2))  # twelve ids as a study's first import numbers them


def _seeds(count: int) -> list[int]:
    draw = random.Random(20261128)
    return [draw.randrange(2**31) for _ in range(count)]


def _order(seed: int) -> list[int]:
    return sorted(ITEMS, key=lambda item_id: shuffle_key(order_seed=seed, item_id=item_id))


def test_the_order_is_a_function_of_seed_and_id_alone():
    seed = _seeds(1)[0]
    assert _order(seed) == _order(seed)
    assert shuffle_key(order_seed=seed, item_id=9) == shuffle_key(order_seed=seed, item_id=9)
    assert shuffle_key(order_seed=seed, item_id=9) != shuffle_key(order_seed=seed + 1, item_id=9)


def test_no_annotator_gets_the_ids_in_their_own_order():
    """2,000 annotators: with a real shuffle, the chance that any of them sees the twelve ids ascending
    (or descending) is 2,000 × 2 / 12!, about 1e-5. A linear map of the id gave one in thirty."""
    orders = [_order(seed) for seed in _seeds(2000)]
    assert sum(order == sorted(order) for order in orders) == 0
    assert sum(order == sorted(order, reverse=True) for order in orders) == 0
    assert len({tuple(order) for order in orders}) == 2000  # no two annotators share an order


def test_each_item_comes_first_about_equally_often():
    """Which item an annotator is handed first: uniform over the twelve (chi-square, 6,000 annotators)."""
    firsts = Counter(_order(seed)[0] for seed in _seeds(6000))
    counts = [firsts[item_id] for item_id in ITEMS]
    assert stats.chisquare(counts).pvalue > 1e-3


def test_the_order_does_not_follow_the_ids():
    """Kendall's tau between an annotator's order and the ids' order averages about zero, as a random
    permutation's does (sd of the mean over 2,000 orders ≈ 0.0051)."""
    taus = [
        stats.kendalltau(ITEMS, [_order(seed).index(i) for i in ITEMS]).statistic for seed in _seeds(2000)
    ]
    assert abs(sum(taus) / len(taus)) < 0.03

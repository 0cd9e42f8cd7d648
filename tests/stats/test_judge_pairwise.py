"""A pairwise judge beside the people (stats/judge_pairwise.py): every figure of one small case worked out
by hand, and the degenerate cases."""

from __future__ import annotations

import pytest

from stats.judge_pairwise import (
    JudgedPair,
    PairVerdict,
    judge_agreement,
    judge_pairwise_comparison,
    judge_records,
    pairwise_summary,
)
from stats.pairwise import PairwiseRecord, win_rates

SYSTEMS = {1: "X", 2: "Y", 3: "X", 4: "Z", 5: "Y", 6: "Z", 7: "X", 8: "Y", 9: "X", 10: "Y"}


def judged(first: int, verdict: str | None, bias: float | None, consistent: bool | None) -> JudgedPair:
    probabilities = {"first": (0.7, 0.2, 0.1), "second": (0.2, 0.7, 0.1), "tie": (0.2, 0.2, 0.6)}
    first_better, second_better, tie = probabilities.get(verdict or "", (None, None, None))
    mass = (0.9, 0.8) if verdict else (0.0, 0.3)
    judge = PairVerdict(first_better, second_better, tie, verdict, bias, consistent, mass)
    return JudgedPair(first, first + 1, SYSTEMS[first], SYSTEMS[first + 1], judge)


def person(annotator: int, first: int, choice: str) -> PairwiseRecord:
    return PairwiseRecord(annotator, first, first + 1, SYSTEMS[first], SYSTEMS[first + 1], choice, True)


# The judge on five pairs (the last without a verdict: no probability on any label):
#   (1, 2) X-Y first, (3, 4) X-Z first, (5, 6) Y-Z tie, (7, 8) X-Y second, (9, 10) X-Y none.
# Its win rates: X won (1,2), (3,4), lost (7,8): 2/3; Y lost, tied, won: 1.5/3; Z lost, tied: 0.5/2.
JUDGE = [
    judged(1, "first", 0.1, True),
    judged(3, "first", 0.3, True),
    judged(5, "tie", -0.2, False),
    judged(7, "second", 0.0, True),
    judged(9, None, None, None),
]
# Seven judgments by two people; the last is of the pair the judge gave no verdict.
#   X: won h1, h3, h7, lost h2, h6, tied h5: 3.5/6.  Y: won h2, h6, lost h1, h4, h7, tied h5: 2.5/6.
#   Z: lost h3, won h4: 1/2.
PEOPLE = [
    person(1, 1, "a"),  # h1: the judge agrees
    person(2, 1, "b"),  # h2: it does not
    person(1, 3, "a"),  # h3: agrees
    person(1, 5, "b"),  # h4: the judge says tie: not the winner
    person(1, 7, "tie"),  # h5: not decisive
    person(2, 7, "b"),  # h6: agrees
    person(1, 9, "a"),  # h7: no verdict on this pair
]


def test_the_judges_win_rates_count_each_verdict_once_ties_half() -> None:
    rates = {rate.system: rate for rate in win_rates(judge_records(JUDGE))}
    assert rates["X"].win_rate == pytest.approx(2 / 3)
    assert (rates["X"].wins, rates["X"].losses, rates["X"].ties) == (2, 1, 0)
    assert rates["Y"].win_rate == pytest.approx(0.5)
    assert rates["Z"].win_rate == pytest.approx(0.25)
    assert sum(rate.comparisons for rate in rates.values()) == 2 * 4  # the pair without a verdict is left out


def test_the_comparison_sets_the_win_rates_side_by_side_with_their_spearman() -> None:
    comparison = judge_pairwise_comparison(PEOPLE, JUDGE)
    assert [row.system for row in comparison.systems] == ["X", "Y", "Z"]  # the judge's best first
    human = {row.system: row.human.win_rate for row in comparison.systems if row.human is not None}
    assert human == pytest.approx({"X": 3.5 / 6, "Y": 2.5 / 6, "Z": 0.5})
    judge = {row.system: row.judge.win_rate for row in comparison.systems if row.judge is not None}
    assert judge == pytest.approx({"X": 2 / 3, "Y": 0.5, "Z": 0.25})
    # people rank Y < Z < X, the judge Z < Y < X: d = (0, 1, 1), rho = 1 - 6 * 2 / (3 * 8) = 0.5
    assert comparison.spearman.coefficient == pytest.approx(0.5)
    assert comparison.spearman.n == 3


def test_agreement_is_the_share_of_decisive_judgments_whose_winner_the_judge_picks() -> None:
    agreement = judge_agreement(PEOPLE, JUDGE)
    assert (agreement.judgments, agreement.decisive, agreement.agreed) == (6, 5, 3)
    assert agreement.share == pytest.approx(3 / 5)
    # people (a, b, a, b, tie, b) against the judge (a, a, a, tie, b, b): observed 3/6, chance
    # (2*3 + 3*2 + 1*1) / 36 = 13/36, kappa = (1/2 - 13/36) / (1 - 13/36) = 5/23
    assert agreement.kappa == pytest.approx(5 / 23)


def test_the_summary_is_over_the_pairs_with_a_verdict() -> None:
    summary = pairwise_summary([pair.judge for pair in JUDGE])
    assert summary.pairs == 4
    assert summary.position_bias == pytest.approx((0.1 + 0.3 - 0.2 + 0.0) / 4)
    assert summary.consistent == pytest.approx(3 / 4)
    assert summary.ties == pytest.approx(1 / 4)
    assert judge_pairwise_comparison(PEOPLE, JUDGE).summary == summary


def test_without_people_or_verdicts_every_figure_says_it_is_undefined() -> None:
    alone = judge_pairwise_comparison([], JUDGE)
    assert [row.human for row in alone.systems] == [None, None, None]
    assert alone.spearman.coefficient is None
    assert alone.spearman.note == "too few items"
    assert (alone.agreement.judgments, alone.agreement.share, alone.agreement.kappa) == (0, None, None)
    unjudged = judge_pairwise_comparison(PEOPLE, [judged(9, None, None, None)])
    assert [row.system for row in unjudged.systems] == ["X", "Z", "Y"]  # the people's best first
    assert all(row.judge is None for row in unjudged.systems)
    assert unjudged.summary.pairs == 0
    assert unjudged.summary.position_bias is None

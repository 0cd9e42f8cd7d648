"""System-level win rates from pairwise judgments (which of two systems' replies to a context is better).

The usual summary of pairwise human evaluation in dialog (ACUTE-Eval, Li et al. 2019; ChatEval; the
Chatbot Arena's win-rate matrix): for each system, over every judgment that involved it,

    win rate = (wins + 0.5 * ties) / comparisons

with a 95% **Wilson score interval** on that proportion (Wilson 1927; Brown, Cai and DasGupta 2001 show it
keeps its coverage on small samples and near 0 and 1, where the normal interval does not). A tie counts as
half a win, so the proportion need not be a whole number of successes over n; the Wilson formula takes
the proportion as it is. Each judgment is treated as independent, which k raters of one pair are not:
read the interval as a little narrow when k is large.

The **win-rate matrix** gives the same proportion for each ordered pair of systems (row against column),
with the number of judgments behind each cell; ``None`` where two systems were never compared.

**Position bias**: of the judgments that picked a side (no tie), how many picked the reply shown on the
left, with a two-sided binomial test against one half. The page randomises the side per annotator and
item, so a bias there does not favour a system, but a strong one says raters were not reading closely.

Pure Python + scipy: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scipy import stats as scipy_stats

Z_95 = 1.959963984540054  # the 97.5th percentile of N(0, 1)
CHOICES = ("a", "b", "tie")


@dataclass(frozen=True)
class PairwiseRecord:
    """One rater's judgment of one pair: ``choice`` "a" (the lower-id reply, ``response_a``, is better),
    "b" or "tie"; ``a_shown_left`` whether ``response_a`` was the reply shown on the left."""

    annotator: int
    response_a: int
    response_b: int
    system_a: str
    system_b: str
    choice: str
    a_shown_left: bool


@dataclass(frozen=True)
class SystemWinRate:
    system: str
    comparisons: int
    wins: int
    losses: int
    ties: int
    win_rate: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class PositionBias:
    decisive: int  # judgments that picked a side
    left_wins: int
    left_share: float | None
    p_value: float | None  # two-sided binomial test of left_share = 0.5


def wilson_interval(successes: float, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of the proportion ``successes / n`` (``successes`` may be fractional:
    ties count half); ``(0, 1)`` when ``n`` is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, successes / n))
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _outcomes(records: Iterable[PairwiseRecord]) -> Iterable[tuple[str, str, float]]:
    """(system, opponent, score) twice per judgment: 1 for the better reply's system, 0 for the other,
    0.5 each for a tie. Judgments of two replies of one system, or with an unknown choice, say nothing."""
    for record in records:
        if record.system_a == record.system_b or record.choice not in CHOICES:
            continue
        score_a = {"a": 1.0, "b": 0.0, "tie": 0.5}[record.choice]
        yield record.system_a, record.system_b, score_a
        yield record.system_b, record.system_a, 1.0 - score_a


def win_rates(records: Sequence[PairwiseRecord], z: float = Z_95) -> list[SystemWinRate]:
    """Every system that took part in a judgment, best win rate first (then by name)."""
    tallies: dict[str, list[int]] = {}  # system -> [wins, losses, ties]
    for system, _, score in _outcomes(records):
        tally = tallies.setdefault(system, [0, 0, 0])
        tally[0 if score == 1.0 else 1 if score == 0.0 else 2] += 1
    rates = []
    for system, (wins, losses, ties) in tallies.items():
        n = wins + losses + ties
        low, high = wilson_interval(wins + 0.5 * ties, n, z)
        rates.append(SystemWinRate(system, n, wins, losses, ties, (wins + 0.5 * ties) / n, low, high))
    return sorted(rates, key=lambda rate: (-rate.win_rate, rate.system))


def win_rate_matrix(
    records: Sequence[PairwiseRecord], systems: Sequence[str]
) -> tuple[list[list[float | None]], list[list[int]]]:
    """(win rate of the row system against the column system, judgments behind it), in ``systems``'
    order; ``None`` on the diagonal and for pairs never compared."""
    index = {system: position for position, system in enumerate(systems)}
    size = len(systems)
    scores = [[0.0] * size for _ in range(size)]
    counts = [[0] * size for _ in range(size)]
    for system, opponent, score in _outcomes(records):
        if system in index and opponent in index:
            scores[index[system]][index[opponent]] += score
            counts[index[system]][index[opponent]] += 1
    rates: list[list[float | None]] = [
        [scores[i][j] / counts[i][j] if counts[i][j] else None for j in range(size)] for i in range(size)
    ]
    return rates, counts


def position_bias(records: Sequence[PairwiseRecord]) -> PositionBias:
    """How often a decisive judgment picked the reply on the left, and whether that differs from half."""
    decisive = [record for record in records if record.choice in ("a", "b")]
    left = sum(1 for record in decisive if (record.choice == "a") == record.a_shown_left)
    if not decisive:
        return PositionBias(0, 0, None, None)
    p_value = float(scipy_stats.binomtest(left, len(decisive), 0.5).pvalue)
    return PositionBias(len(decisive), left, left / len(decisive), min(1.0, p_value))

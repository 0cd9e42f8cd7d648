"""An LLM pairwise judge beside the people who compared the same replies.

The pairwise judge of Zheng et al. (2023) says which of two replies to a context is better, or a tie; asked
in both orders, its verdict on a pair is the likeliest of the three after the order swap
(scoring/metrics/llm_judge/pairwise.py). Here its verdicts meet the study's pairwise judgments:

- **win rates**: the judge's, per system, by the method of the people's (:func:`stats.pairwise.win_rates`:
  each verdict one comparison, a tie half a win), beside the people's;
- **Spearman** across the systems between the two win rates (by convention ``x`` the people's): whether
  the judge ranks the systems as the people do;
- **agreement on the same pairs**: of the people's decisive judgments (a reply picked) on pairs the judge
  gave a verdict on, the share whose winner the judge picks too (a judge's tie agrees with none of them);
  and the unweighted kappa (Cohen, 1960; stats/agreement.py) over the three categories, each judgment
  paired with the judge's verdict on its pair (ties included on both sides);
- **the judge's own summary** (:func:`pairwise_summary`): the mean position bias the order swap cancelled,
  the share of pairs on which both orders picked the same reply, and the share of ties.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from stats.agreement import cohen_kappa
from stats.correlations import CorrelationResult, spearman_with_ci
from stats.pairwise import PairwiseRecord, SystemWinRate, win_rates

FIRST, SECOND, TIE = "first", "second", "tie"  # a verdict: response_a better, response_b better, a tie
_CHOICE_OF_VERDICT = {FIRST: "a", SECOND: "b", TIE: "tie"}  # as a PairwiseRecord's choice
_CATEGORY = {"a": 0, "b": 1, "tie": 2}  # the kappa's nominal categories
JUDGE_ANNOTATOR = 0  # the judge's verdicts as the judgments of one rater


@dataclass(frozen=True)
class PairVerdict:
    """The judge on one pair: the probabilities that ``first``/``second`` is better or that they tie (order
    swap averaged), the verdict, the position bias on this pair, whether both orders agree, and the mass on
    the three labels in each order (None probabilities where an order put no mass on any label)."""

    first_better: float | None
    second_better: float | None
    tie: float | None
    verdict: str | None
    position_bias: float | None
    consistent: bool | None
    mass: tuple[float, float]


@dataclass(frozen=True)
class PairwiseSummary:
    """Over the pairs with a verdict: how many, the mean position bias, the share of consistent pairs, and
    the share of verdicts that are ties."""

    pairs: int
    position_bias: float | None
    consistent: float | None
    ties: float | None


def pairwise_summary(verdicts: Sequence[PairVerdict]) -> PairwiseSummary:
    found = [verdict for verdict in verdicts if verdict.verdict is not None]
    if not found:
        return PairwiseSummary(0, None, None, None)
    return PairwiseSummary(
        pairs=len(found),
        position_bias=fmean(verdict.position_bias or 0.0 for verdict in found),
        consistent=fmean(1.0 if verdict.consistent else 0.0 for verdict in found),
        ties=fmean(1.0 if verdict.verdict == TIE else 0.0 for verdict in found),
    )


@dataclass(frozen=True)
class JudgedPair:
    """The judge's verdict on one pair of two systems' replies, in the people's canonical order
    (``response_a`` the lower id, the judge's "first")."""

    response_a: int
    response_b: int
    system_a: str
    system_b: str
    judge: PairVerdict


@dataclass(frozen=True)
class SystemBeside:
    """One system's win rate by the judge and by the people (None where it had no comparison there)."""

    system: str
    judge: SystemWinRate | None
    human: SystemWinRate | None


@dataclass(frozen=True)
class JudgeAgreement:
    """The judge against the people on the pairs both judged: ``decisive`` judgments that picked a reply,
    ``agreed`` of them whose winner the judge picks (``share`` = agreed / decisive), and Cohen's kappa over
    first/second/tie across the ``judgments`` paired with a verdict (None when undefined)."""

    judgments: int
    decisive: int
    agreed: int
    share: float | None
    kappa: float | None


@dataclass(frozen=True)
class JudgePairwiseComparison:
    """Everything the report sets beside the people's pairwise section for one pairwise judge."""

    systems: tuple[SystemBeside, ...]  # the judge's best win rate first, then systems only people compared
    spearman: CorrelationResult  # across the systems both compared: x the people's win rate, y the judge's
    agreement: JudgeAgreement
    summary: PairwiseSummary


def judge_records(judged: Sequence[JudgedPair]) -> list[PairwiseRecord]:
    """The judge's verdicts as the judgments of one rater (pairs without a verdict left out)."""
    return [
        PairwiseRecord(
            annotator=JUDGE_ANNOTATOR,
            response_a=pair.response_a,
            response_b=pair.response_b,
            system_a=pair.system_a,
            system_b=pair.system_b,
            choice=_CHOICE_OF_VERDICT[pair.judge.verdict],
            a_shown_left=True,  # both orders were shown: the verdict has no side
        )
        for pair in judged
        if pair.judge.verdict in _CHOICE_OF_VERDICT
    ]


def judge_agreement(human: Sequence[PairwiseRecord], judged: Sequence[JudgedPair]) -> JudgeAgreement:
    """How the judge's verdicts agree with the people's judgments of the same pairs (the class docstring)."""
    verdicts = {
        (pair.response_a, pair.response_b): _CHOICE_OF_VERDICT[pair.judge.verdict]
        for pair in judged
        if pair.judge.verdict in _CHOICE_OF_VERDICT
    }
    paired = [
        (record.choice, verdicts[(record.response_a, record.response_b)])
        for record in human
        if record.choice in _CATEGORY and (record.response_a, record.response_b) in verdicts
    ]
    decisive = [(person, judge) for person, judge in paired if person != "tie"]
    agreed = sum(1 for person, judge in decisive if person == judge)
    kappa = cohen_kappa(
        [_CATEGORY[person] for person, _ in paired],
        [_CATEGORY[judge] for _, judge in paired],
        points=sorted(_CATEGORY.values()),
    )
    return JudgeAgreement(
        judgments=len(paired),
        decisive=len(decisive),
        agreed=agreed,
        share=agreed / len(decisive) if decisive else None,
        kappa=kappa,
    )


def judge_pairwise_comparison(
    human: Sequence[PairwiseRecord], judged: Sequence[JudgedPair]
) -> JudgePairwiseComparison:
    """The judge's win rates beside the people's, their Spearman across systems, the judge's agreement
    with the people on the same pairs, and its position bias and consistency (the module docstring)."""
    by_judge = {rate.system: rate for rate in win_rates(judge_records(judged))}
    by_people = {rate.system: rate for rate in win_rates(human)}
    order = [*by_judge, *(system for system in by_people if system not in by_judge)]
    systems = tuple(SystemBeside(system, by_judge.get(system), by_people.get(system)) for system in order)
    both = [system for system in order if system in by_judge and system in by_people]
    spearman = spearman_with_ci(
        [by_people[system].win_rate for system in both], [by_judge[system].win_rate for system in both]
    )
    return JudgePairwiseComparison(
        systems=systems,
        spearman=spearman,
        agreement=judge_agreement(human, judged),
        summary=pairwise_summary([pair.judge for pair in judged]),
    )

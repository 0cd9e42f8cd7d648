"""The shape of the report document's ``pairwise`` section, as TypedDicts (the rest of the document is
stats/report/document_types.py, which reads these from here): the people's system win rates, their matrix
and position bias, the metrics against the win rates (stats/report/pairwise.py), and each pairwise LLM
judge's win rates beside the people's (stats/report/pairwise_judges.py).

Fields are added, never renamed (``DOCUMENT_VERSION`` in stats/report/builder.py); a key marked
``NotRequired`` is missing from documents built before it.

Pure Python: no Django here (import-linter contract).
"""

# No ``from __future__ import annotations`` here: NotRequired must be seen when each class is created, so
# that ``__required_keys__`` is right at run time too (tests/stats/test_document_types.py reads it).
from typing import NotRequired, TypedDict


class PairwiseSystem(TypedDict):
    system: str
    comparisons: int
    wins: int
    losses: int
    ties: int
    win_rate: float
    ci: list[float]  # 95% Wilson interval [low, high]


class PairwiseMatrix(TypedDict):
    systems: list[str]
    win_rate: list[list[float | None]]  # row system against column system; None: never compared
    comparisons: list[list[int]]


class PairwisePosition(TypedDict):
    decisive: int
    left_wins: int
    left_share: float | None
    p_value: float | None


class PairwiseMetricSystem(TypedDict):
    system: str
    metric_mean: float
    win_rate: float


class PairwiseMetricAgreement(TypedDict):
    signature: str
    metric: str
    display: NotRequired[str]
    references: str
    n: int  # systems
    spearman: float | None
    spearman_p: float | None
    note: str
    systems: list[PairwiseMetricSystem]


class PairwiseJudgeSystem(TypedDict):
    """One system's win rate by the people (over the judgments that count) and by the judge, each with its
    Wilson interval; ``None`` where the system had no comparison there."""

    system: str
    human: PairwiseSystem | None
    judge: PairwiseSystem | None


class PairwiseJudgeAgreement(TypedDict):
    """The judge against the people on the pairs both judged (stats.judge_pairwise.JudgeAgreement)."""

    judgments: int  # the people's judgments of pairs the judge gave a verdict on
    decisive: int  # of them, those that picked a reply
    agreed: int  # of those, the ones whose winner the judge picks too
    share: float | None  # agreed / decisive
    kappa: float | None  # Cohen's kappa over first/second/tie across ``judgments``


class PairwiseJudgeEntry(TypedDict):
    """A pairwise LLM judge (``llm-pairwise:<key>``, Zheng et al., 2023) beside the people: its win rates
    beside theirs, Spearman's rho across the systems both compared (x the people's win rate, y the judge's)
    with its p-value and Fisher-z interval, its agreement with the people on the same pairs, and its mean
    position bias, share of consistent pairs and share of ties over its verdicts. ``note`` says in words a
    position bias of 0.2 or more (either way), else ""."""

    signature: str
    metric: str  # llm-pairwise:<key>
    display: NotRequired[str]  # written beside every signature's (stats/report/metric_names.py)
    pairs: int  # pairs with a verdict, replies the researcher excluded left out
    pairs_total: int  # every stored verdict on the study's pairs
    systems: list[PairwiseJudgeSystem]
    n: int  # systems both the people and the judge compared
    spearman: float | None
    spearman_p: float | None
    spearman_ci: list[float | None]  # [low, high]; [None, None] when not computable
    spearman_note: str
    agreement: PairwiseJudgeAgreement
    position_bias: float | None  # mean P(first shown wins) - P(second shown wins), both orders
    consistent: float | None  # share of pairs where both orders pick the same reply (or both a tie)
    ties: float | None  # share of verdicts that are ties
    note: str


class PairwiseSection(TypedDict):
    """``pairwise``: system win rates from pairwise judgments (``None`` in the document without any)."""

    method: str
    judgments: int
    judgments_total: int
    pairs: int
    raters: int
    raters_left_out: int
    systems: list[PairwiseSystem]
    matrix: PairwiseMatrix
    position: PairwisePosition
    metrics: list[PairwiseMetricAgreement]
    judges: NotRequired[list[PairwiseJudgeEntry]]  # pairwise LLM judges; documents before version 6 lack it

"""What a permutation test is asked (the statistic, the layout of replies, early stopping) and what it
answers, one result per pair of metrics (Deutsch et al., 2021)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

from stats.meta.groups import Groups

StatisticName = Literal["pearson", "spearman", "system_accuracy", "reply_accuracy"]
Grouping = Literal["none", "context", "system"]
Scheme = Literal["both", "inputs"]
PERM_BOTH: Scheme = "both"
PERM_INPUTS: Scheme = "inputs"
EQUAL = 1e-12  # swapped and observed differences this close count as equal


@dataclass(frozen=True)
class Statistic:
    """What is compared: a correlation (``pearson``, ``spearman``) at a ``grouping``, or a pairwise accuracy
    (``system_accuracy``; ``reply_accuracy`` within contexts) with or without ``tie_calibration``."""

    name: StatisticName = "pearson"
    grouping: Grouping = "none"
    tie_calibration: bool = True

    def __post_init__(self) -> None:
        if self.name not in ("pearson", "spearman", "system_accuracy", "reply_accuracy"):
            raise ValueError(f"no permutation test for the statistic {self.name!r}")
        if self.grouping not in ("none", "context", "system"):
            raise ValueError(f"grouping must be none, context or system, not {self.grouping!r}")


@dataclass(frozen=True)
class Layout:
    """Each reply's context and system (the cells of the contexts x systems matrix)."""

    contexts: Groups
    systems: Groups

    @classmethod
    def of(cls, contexts: Sequence[Hashable], systems: Sequence[Hashable]) -> Layout:
        if len(contexts) != len(systems):
            raise ValueError(f"{len(contexts)} contexts for {len(systems)} systems: one of each per reply")
        return cls(Groups.of(contexts), Groups.of(systems))

    @property
    def n(self) -> int:
        return self.contexts.n


@dataclass(frozen=True)
class EarlyStop:
    """mt-metrics-eval's ``PermutationSigDiffParams`` as the WMT tasks set them."""

    block: int = 100
    below: float = 0.02
    above: float = 0.5


@dataclass(frozen=True)
class PermutationResult:
    """One pair of metrics (column indices): ``delta`` = statistic(first) - statistic(second)."""

    first: int
    second: int
    delta: float | None
    p_value: float | None  # one-sided: that first's statistic is the higher
    p_two_sided: float | None
    permutations: int
    statistic_first: float | None = None
    statistic_second: float | None = None
    note: str = ""


DEFAULT_EARLY_STOP = EarlyStop()

"""What a benchmark table shows: one statistic of each metric on each study, and how replies are grouped.

Statistics: ``pearson``, ``spearman``, ``kendall`` (the correlation of the metric with the human scores,
flat or grouped as stats/meta/grouped.py defines), ``system_accuracy`` (the share of system pairs the
metric orders as people do, Kocmi et al. 2021) and ``reply_accuracy`` (acc_eq within contexts with tie
calibration, Deutsch, Foster and Freitag 2023). Grouping (``none``, ``context``, ``system``) applies to the
correlations; an accuracy names its own level, so with it the grouping must be ``none``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.report.types import MAX_RESAMPLES, OptionError, integer_option

CORRELATIONS = ("pearson", "spearman", "kendall")
ACCURACIES = ("system_accuracy", "reply_accuracy")
STATISTICS = CORRELATIONS + ACCURACIES
GROUPINGS = ("none", "context", "system")
STATISTIC_LABELS = {
    "pearson": "Pearson's r",
    "spearman": "Spearman's ρ",
    "kendall": "Kendall's τ-b",
    "system_accuracy": "pairwise accuracy of systems",
    "reply_accuracy": "acc_eq within contexts (tie-calibrated)",
}
GROUPING_LABELS = {
    "none": "over all replies",
    "context": "within each context, averaged over contexts",
    "system": "within each system, averaged over systems",
}


@dataclass(frozen=True)
class BenchmarkOptions:
    statistic: str = "pearson"
    grouping: str = "none"
    resamples: int = DEFAULT_RESAMPLES  # bootstrap resamples of the grouped and accuracy intervals
    seed: int = DEFAULT_SEED

    @classmethod
    def parse(cls, values: Mapping[str, str | None]) -> BenchmarkOptions:
        """Options from query parameters or command-line flags; absent or empty values take defaults. An
        error is an :class:`OptionError` whose text starts with the field's name (``"statistic: ..."``)."""
        statistic = (values.get("statistic") or "pearson").strip()
        if statistic not in STATISTICS:
            raise OptionError(f'statistic: "{statistic}" is not one of {", ".join(STATISTICS)}')
        grouping = (values.get("grouping") or "none").strip()
        if grouping not in GROUPINGS:
            raise OptionError(f'grouping: "{grouping}" is not one of {", ".join(GROUPINGS)}')
        if statistic in ACCURACIES and grouping != "none":
            raise OptionError(
                f'grouping: "{grouping}" applies to the correlations; {statistic} names its own level '
                '(leave the grouping at "none")'
            )
        resamples = integer_option(values.get("resamples"), "resamples", DEFAULT_RESAMPLES, 0, MAX_RESAMPLES)
        seed = integer_option(values.get("seed"), "seed", DEFAULT_SEED, 0, 2**32 - 1)
        return cls(statistic=statistic, grouping=grouping, resamples=resamples, seed=seed)

    @property
    def label(self) -> str:
        """What the table shows, in words: "Pearson's r within each context, averaged over contexts"."""
        if self.statistic in ACCURACIES:
            return STATISTIC_LABELS[self.statistic]
        return f"{STATISTIC_LABELS[self.statistic]} {GROUPING_LABELS[self.grouping]}"

    def as_dict(self) -> dict[str, object]:
        return {
            "statistic": self.statistic,
            "grouping": self.grouping,
            "resamples": self.resamples,
            "seed": self.seed,
        }

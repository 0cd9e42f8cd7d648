"""One study's column of a benchmark table: the chosen statistic of every metric, and whether it is
significant.

The numbers are the ones the report and stats/meta compute for the study (the same functions, on the same
human scores), so a benchmark cell equals the statistic computed for that study alone. Significance, at
p < 0.05 (marked ``*``):

* a flat correlation: its test's two-sided p-value (scipy, as the report's table);
* a grouped correlation: its 95% bootstrap interval over groups excludes 0;
* pairwise accuracy of systems: its 95% interval (contexts resampled) lies above 0.5, the accuracy of an
  ordering at random;
* acc_eq within contexts: its 95% interval lies above what a trivial metric gets: max(t, (1 - t) / 2), with
  t the contexts' mean share of reply pairs people tied (a metric that ties every pair gets t, one that
  orders every pair at random (1 - t) / 2).

A cell whose statistic cannot be computed has no value and says why (``note``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from stats.benchmark.options import BenchmarkOptions
from stats.correlations import kendall_with_ci, pearson_with_ci, spearman_with_ci
from stats.meta import (
    Groups,
    grouped_correlations,
    reply_pairwise_accuracy,
    system_pairwise_accuracy,
    trivial_accuracy,
)

SIGNIFICANCE = 0.05
_FLAT = {"pearson": pearson_with_ci, "spearman": spearman_with_ci, "kendall": kendall_with_ci}


@dataclass(frozen=True)
class BenchmarkCell:
    """One metric's statistic on one study. ``n``: replies (flat), groups used (grouped), pairs (accuracy)."""

    value: float | None
    significant: bool = False
    p_value: float | None = None
    ci: tuple[float, float] | None = None
    n: int = 0
    note: str = ""
    # an LLM judge's: its model's mean probability on the scale's labels on the study (stats/benchmark/judges.py)
    label_mass: float | None = None

    def as_dict(self) -> dict[str, object]:
        fields: dict[str, object] = {
            "value": self.value,
            "significant": self.significant,
            "p_value": self.p_value,
            "ci": list(self.ci) if self.ci is not None else None,
            "n": self.n,
            "note": self.note,
        }
        if self.label_mass is not None:
            fields["label_mass"] = self.label_mass
        return fields


def study_cells(
    human: np.ndarray,
    values: np.ndarray,
    contexts: Sequence[Hashable],
    systems: Sequence[Hashable],
    options: BenchmarkOptions,
) -> list[BenchmarkCell]:
    """The statistic of every metric column of ``values`` (replies x metrics, NaN: no value) against
    ``human`` (one score per reply), the replies' contexts and systems given."""
    x = np.asarray(human, dtype=np.float64)
    matrix = np.asarray(values, dtype=np.float64).reshape(x.size, -1)
    if len(contexts) != x.size or len(systems) != x.size:
        raise ValueError(f"{x.size} replies, {len(contexts)} contexts and {len(systems)} systems")
    if options.statistic == "system_accuracy":
        return _system_accuracy(x, matrix, contexts, systems, options)
    if options.statistic == "reply_accuracy":
        return _reply_accuracy(x, matrix, contexts, options)
    if options.grouping == "none":
        return [_flat(x, matrix[:, column], options.statistic) for column in range(matrix.shape[1])]
    groups = Groups.of(contexts if options.grouping == "context" else systems)
    results = grouped_correlations(
        x,
        matrix,
        groups,
        coefficient=options.statistic,  # type: ignore[arg-type]  # checked by BenchmarkOptions.parse
        resamples=options.resamples,
        seed=options.seed,
    )
    return [
        BenchmarkCell(
            value=result.value,
            significant=result.ci is not None and (result.ci[0] > 0 or result.ci[1] < 0),
            ci=result.ci,
            n=result.groups,
            note=result.note,
        )
        for result in results
    ]


def _flat(x: np.ndarray, metric: np.ndarray, statistic: str) -> BenchmarkCell:
    present = np.isfinite(x) & np.isfinite(metric)
    result = _FLAT[statistic](x[present].tolist(), metric[present].tolist())
    return BenchmarkCell(
        value=result.coefficient,
        significant=result.p_value is not None and result.p_value < SIGNIFICANCE,
        p_value=result.p_value,
        ci=(result.ci_low, result.ci_high)
        if result.ci_low is not None and result.ci_high is not None
        else None,
        n=result.n,
        note=result.note,
    )


def _system_accuracy(
    x: np.ndarray,
    matrix: np.ndarray,
    contexts: Sequence[Hashable],
    systems: Sequence[Hashable],
    options: BenchmarkOptions,
) -> list[BenchmarkCell]:
    results = system_pairwise_accuracy(
        x,
        matrix,
        Groups.of(systems),
        contexts=Groups.of(contexts),
        resamples=options.resamples,
        seed=options.seed,
    )
    return [
        BenchmarkCell(
            value=result.value,
            significant=result.ci is not None and result.ci[0] > 0.5,
            ci=result.ci,
            n=result.pairs,
            note=result.note,
        )
        for result in results
    ]


def _reply_accuracy(
    x: np.ndarray, matrix: np.ndarray, contexts: Sequence[Hashable], options: BenchmarkOptions
) -> list[BenchmarkCell]:
    groups = Groups.of(contexts)
    results = reply_pairwise_accuracy(
        x, matrix, groups, tie_calibration=True, resamples=options.resamples, seed=options.seed
    )
    cells = []
    for column, result in enumerate(results):
        baseline = trivial_accuracy(x, matrix[:, column], groups)
        cells.append(
            BenchmarkCell(
                value=result.value,
                significant=result.ci is not None and baseline is not None and result.ci[0] > baseline,
                ci=result.ci,
                n=result.pairs,
                note=result.note,
            )
        )
    return cells

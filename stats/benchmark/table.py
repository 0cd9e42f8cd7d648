"""Metric x study: each study's column of one statistic side by side, the mean and the mean rank per metric,
and the best of each column.

Metrics are matched across studies by their signature text (the same metric, parameters, tokenizer, model
and version), so two studies' cells of one row are the same computation. A metric missing on a study has
no value there and says why: not scored on it, scored without a value for any reply (the reason the report
gives), or the statistic's own note (too few replies, no context with two rated replies...).

* mean: the mean of the metric's values over the studies where it has one (``studies`` counts them);
* mean rank: in each study the metrics on every study of the table are ranked among themselves, 1 for the
  highest (ties share the mean of their ranks, as scipy's ``rankdata``), and the ranks are averaged over the
  studies; a metric missing on some study is ranked apart, among every value of each study it has, and
  listed after the others (``complete`` false, "on 1 of 2 studies"): it is never rewarded for the studies
  it missed;
* best: per study column the highest value as printed (3 decimals) among the metrics on every study, so
  equal-looking values are best together; for the mean the highest, for the mean rank the lowest, also among
  those metrics only; nothing is best in a column where fewer than two of them have a value. Every statistic
  here is better when higher.

Rows read as the metrics' display names among the table's (stats/display_names.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from stats.benchmark.cells import BenchmarkCell
from stats.benchmark.options import BenchmarkOptions
from stats.display_names import display_names

NOT_SCORED = "not scored on this study"
PRINTED_DIGITS = 3


@dataclass(frozen=True)
class MetricKey:
    text: str  # the signature text: what matches a metric across studies
    name: str  # what a row reads (the report's name: an imported metric's is "<name> (external)")


@dataclass(frozen=True)
class StudyColumn:
    """One study's cells by signature text; ``missing``: signature text -> why it has no cell."""

    study: str
    cells: Mapping[str, BenchmarkCell]
    missing: Mapping[str, str] | None = None


@dataclass(frozen=True)
class BenchmarkRow:
    metric: MetricKey
    label: str
    cells: tuple[BenchmarkCell, ...]
    best: tuple[bool, ...]
    mean: float | None
    mean_rank: float | None
    studies: int  # studies where the metric has a value
    best_mean: bool = False
    best_rank: bool = False
    # on every study of the table: only such rows are ranked against each other and can be best (a
    # metric scored on 1 of 2 studies took "best mean rank" with its one rank of 1.00)
    complete: bool = True

    @property
    def cells_with_best(self) -> list[tuple[BenchmarkCell, bool]]:
        return list(zip(self.cells, self.best, strict=True))


@dataclass(frozen=True)
class BenchmarkTable:
    options: BenchmarkOptions
    studies: tuple[str, ...]
    rows: tuple[BenchmarkRow, ...]

    def as_dict(self) -> dict[str, object]:
        return {
            "statistic": self.options.statistic,
            "grouping": self.options.grouping,
            "statistic_label": self.options.label,
            "options": self.options.as_dict(),
            "studies": list(self.studies),
            "rows": [
                {
                    "metric": row.label,
                    "signature": row.metric.text,
                    "cells": [
                        {"study": study, **cell.as_dict(), "best": best}
                        for study, cell, best in zip(self.studies, row.cells, row.best, strict=True)
                    ],
                    "mean": row.mean,
                    "mean_rank": row.mean_rank,
                    "studies": row.studies,
                    "best_mean": row.best_mean,
                    "best_rank": row.best_rank,
                    "on_every_study": row.complete,
                    "display": row.label,
                }
                for row in self.rows
            ],
        }


def benchmark_table(
    columns: Sequence[StudyColumn], metrics: Sequence[MetricKey], options: BenchmarkOptions
) -> BenchmarkTable:
    """The table of ``metrics`` (rows, in this order) over ``columns`` (studies, in this order)."""
    grid = [[_cell(column, metric) for column in columns] for metric in metrics]
    values = np.array(
        [[np.nan if cell.value is None else cell.value for cell in row] for row in grid], dtype=np.float64
    ).reshape(len(metrics), len(columns))
    counts = np.isfinite(values).sum(axis=1)
    complete = counts == len(columns)
    # Complete rows are ranked among themselves; a row with a study missing, among every value of each of its
    # studies (its place beside all the metrics there), and apart: after the complete rows, never best.
    ranks = np.full(values.shape, np.nan)
    for j in range(values.shape[1]):
        present = np.isfinite(values[:, j])
        among = present & complete
        if among.any():
            ranks[among, j] = rankdata(-values[among, j], method="average")
        apart = present & ~complete
        if apart.any():
            everyone = rankdata(-values[present, j], method="average")
            ranks[apart, j] = everyone[~complete[present]]
    with np.errstate(invalid="ignore"):
        means = np.where(counts > 0, np.nansum(values, axis=1) / np.maximum(counts, 1), np.nan)
        mean_ranks = np.where(counts > 0, np.nansum(ranks, axis=1) / np.maximum(counts, 1), np.nan)
    awarded = np.where(complete[:, None], values, np.nan)
    best = np.column_stack([_best(awarded[:, j]) for j in range(values.shape[1])]) if columns else None
    best_mean, best_rank = (
        _best(np.where(complete, means, np.nan)),
        _best(np.where(complete, -mean_ranks, np.nan)),
    )
    labels = _labels(metrics)
    order = [i for i in range(len(metrics)) if complete[i]] + [
        i for i in range(len(metrics)) if not complete[i]
    ]
    rows = tuple(
        BenchmarkRow(
            metric=metrics[i],
            label=labels[i],
            cells=tuple(grid[i]),
            best=tuple(bool(flag) for flag in best[i]) if best is not None else (),
            mean=_number(means[i]),
            mean_rank=_number(mean_ranks[i]),
            studies=int(counts[i]),
            best_mean=bool(best_mean[i]),
            best_rank=bool(best_rank[i]),
            complete=bool(complete[i]),
        )
        for i in order
    )
    return BenchmarkTable(options=options, studies=tuple(column.study for column in columns), rows=rows)


def _cell(column: StudyColumn, metric: MetricKey) -> BenchmarkCell:
    cell = column.cells.get(metric.text)
    if cell is not None:
        return cell
    return BenchmarkCell(None, note=(column.missing or {}).get(metric.text, NOT_SCORED))


def _best(column: np.ndarray) -> np.ndarray:
    """Where a column's highest value (as printed) is; nowhere with fewer than two values."""
    present = np.isfinite(column)
    if present.sum() < 2:
        return np.zeros(column.size, dtype=bool)
    printed = np.round(column, PRINTED_DIGITS)
    result: np.ndarray = present & (printed == np.nanmax(np.where(present, printed, -np.inf)))
    return result


def _labels(metrics: Sequence[MetricKey]) -> list[str]:
    """Each metric's display name among the table's (stats/display_names.py): its name, and where two rows
    would read the same, the parts of their signatures that tell them apart."""
    names = display_names([(metric.text, metric.name) for metric in metrics])
    return [names[metric.text].text for metric in metrics]


def _number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None

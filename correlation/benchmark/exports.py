"""The benchmark table as CSV: one line per (metric, study) cell, with the metric's mean and mean rank
repeated on each of its lines, so that a spreadsheet or pandas can pivot it either way; the reason of a
cell without a value in ``note``. Text cells are formula-safe (kernel/csv_cells.py); numbers keep every
digit; a statistic without a value is an empty cell."""

from __future__ import annotations

import io

from kernel.csv_cells import FormulaSafeWriter
from stats.benchmark.table import BenchmarkTable

CSV_COLUMNS = (
    "metric",
    "signature",
    "study",
    "statistic",
    "grouping",
    "value",
    "significant",
    "p_value",
    "ci_low",
    "ci_high",
    "n",
    "best",
    "note",
    "mean",
    "mean_rank",
    "studies",
    "on_every_study",  # 0: the metric misses a study (ranked apart, never best)
    "label_mass",  # an LLM judge's: its model's mean probability on the scale's labels on the study
)


def benchmark_csv(table: BenchmarkTable) -> str:
    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in table.rows:
        for study, cell, best in zip(table.studies, row.cells, row.best, strict=True):
            writer.writerow(
                [
                    row.label,
                    row.metric.text,
                    study,
                    table.options.statistic,
                    table.options.grouping,
                    cell.value,
                    int(cell.significant),
                    cell.p_value,
                    cell.ci[0] if cell.ci else None,
                    cell.ci[1] if cell.ci else None,
                    cell.n,
                    int(best),
                    cell.note,
                    row.mean,
                    row.mean_rank,
                    row.studies,
                    int(row.complete),
                    cell.label_mass,
                ]
            )
    return buffer.getvalue()

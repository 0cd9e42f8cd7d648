"""The utterance-level table as a file: JSON (the row dicts as they are) or CSV (each CI as two columns).

Shared by the page's download links and ``manage.py study_report`` so both give the same bytes. Text
cells (a question name, a metric signature) are formula-safe (``annotation.csv_cells``); numbers are
written as numbers.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

from annotation.csv_cells import FormulaSafeWriter

CSV_COLUMNS = (
    "question",
    "metric",
    "references",
    "signature",
    "n",
    "pearson",
    "pearson_p",
    "pearson_ci_low",
    "pearson_ci_high",
    "spearman",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
    "note",
)


def correlation_rows_as_json(rows: Sequence[dict[str, Any]]) -> str:
    # allow_nan=False: a NaN that slipped through would make invalid JSON; fail loudly instead.
    return json.dumps(list(rows), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def correlation_rows_as_csv(rows: Sequence[dict[str, Any]]) -> str:
    """One line per row; undefined statistics are empty cells, floats keep full precision (repr)."""
    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        flat = {key: value for key, value in row.items() if key in CSV_COLUMNS}
        flat["pearson_ci_low"], flat["pearson_ci_high"] = row["pearson_ci"]
        flat["spearman_ci_low"], flat["spearman_ci_high"] = row["spearman_ci"]
        writer.writerow("" if flat.get(column) is None else flat[column] for column in CSV_COLUMNS)
    return buffer.getvalue()

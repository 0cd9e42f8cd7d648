"""The report's tables as files: JSON (the row dicts as they are) and CSV (one file per section).

Shared by the page's download links, ``manage.py study_report`` and the reproducibility bundle, so all give
the same bytes. What each CSV holds is ``stats/report/csv_tables.py``'s; here every one is written through
``kernel.csv_cells.FormulaSafeWriter``: text cells (a question name, a metric signature, a system or
annotator name, a note) that a spreadsheet would run as a formula get a leading ``'``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence

from kernel.csv_cells import FormulaSafeWriter
from stats.report.csv_tables import CsvTable, correlation_rows_table, report_table, report_tables
from stats.report.document_types import MetricRow, ReportDocument


def correlation_rows_as_json(rows: Sequence[MetricRow]) -> str:
    # allow_nan=False: a NaN that slipped through would make invalid JSON; fail loudly instead.
    return json.dumps(list(rows), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def correlation_rows_as_csv(rows: Sequence[MetricRow]) -> str:
    """The utterance-level table, one line per metric signature."""
    return csv_text(correlation_rows_table(rows))


def report_tables_csv(document: ReportDocument) -> dict[str, str]:
    """Every table of a report document as CSV: table name (a file stem) -> CSV text."""
    return {name: csv_text(table) for name, table in report_tables(document).items()}


def report_table_csv(document: ReportDocument, name: str) -> str | None:
    """One table as CSV, built alone; ``None`` when the document has no such table."""
    table = report_table(document, name)
    return None if table is None else csv_text(table)


def csv_text(table: CsvTable) -> str:
    """The table's CSV text, header first, lines ending in ``\\n``, text cells formula-safe."""
    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator="\n")
    writer.writerow(table.columns)
    writer.writerows(table.cells())
    return buffer.getvalue()

"""Every table of a report, under a comment header naming the study, the data and code versions and the
options."""

from __future__ import annotations

from stats.latex.cells import PACKAGES, comment_text
from stats.latex.correlation_table import correlation_table_latex
from stats.latex.reference_tables import diversity_latex, single_vs_multi_latex
from stats.report.document_types import ReportDocument


def report_latex(document: ReportDocument, *, study_name: str | None = None, kendall: bool = False) -> str:
    """Every table of the report (per question: the correlation table and, where there is one, the
    single- vs multi-reference table; then the diversity table), under a comment header."""
    name = study_name if study_name is not None else str(document.get("study_name", ""))
    options = document.get("options")
    header = [
        f'% Correlation report of study "{comment_text(name)}" (dialeval)',
        f"% data version {comment_text(document.get('data_version'))}; "
        f"code version {comment_text(document.get('code_version') or 'unknown')}; "
        f"document version {comment_text(document.get('document_version'))}",
        "% options: "
        + ", ".join(f"{comment_text(k)}={comment_text(v)}" for k, v in (options.items() if options else ())),
        f"% needs {PACKAGES} in the preamble",
    ]
    tables = []
    for summary in document.get("questions") or []:
        question = str(summary.get("name", ""))
        tables.append(correlation_table_latex(document, question, study_name=study_name, kendall=kendall))
        tables.append(single_vs_multi_latex(document, question, study_name=study_name))
    tables.append(diversity_latex(document, study_name=study_name))
    tables = [table for table in tables if table]
    if not tables:
        header.append("% no tables: the report has no rows yet")
    return "\n".join(header) + "\n" + "".join("\n" + table for table in tables)

"""Tao et al. (2018), Table 2's layout: the human rows, then one block of rows per metric group, a column per
coefficient with its $p$-value in parentheses, and the significance cluster of each metric as its Rank."""

from __future__ import annotations

from stats.latex.captions import JUDGE_OWN_MARK, correlation_caption, of_question, rank_sentence, table_label
from stats.latex.cells import best_of, block_cell, human_cell, latex_escape, paired_cell
from stats.latex.labels import group_of, group_order, row_labels, row_order
from stats.report.document_types import CorrelationFields, ReportDocument, Statistic

INTER_ANNOTATOR = "Inter-annotator"
HUMAN_LABELS = ("Human (Avg)", "Human (Max)")
STAT_NAMES = {"pearson": "Pearson", "spearman": "Spearman", "kendall": "Kendall"}


def correlation_table_latex(
    document: ReportDocument,
    question: str,
    *,
    study_name: str | None = None,
    kendall: bool = False,
) -> str:
    """Tao et al. (2018) Table 2 for one question: the human rows, then one block of rows per metric group.
    ``""`` when the document has neither human rows nor metric rows for the question."""
    human = {row["label"]: row for row in of_question(document.get("human"), question)}
    rows = of_question(document.get("rows"), question)
    if not rows and not human:
        return ""
    statistics: tuple[Statistic, ...] = (
        ("pearson", "spearman", "kendall") if kendall else ("pearson", "spearman")
    )
    blocks: list[tuple[str, list[tuple[str, list[str]]]]] = []
    if human:
        blocks.append(
            (
                INTER_ANNOTATOR,
                [
                    (latex_escape(label), [human_cell(human.get(label), stat) for stat in statistics])
                    for label in HUMAN_LABELS
                ],
            )
        )
    ordered = sorted(rows, key=row_order)
    labels = row_labels(ordered)
    for row in ordered:  # an LLM judge of this question (stats/report/judges.py)
        if row.get("judge", {}).get("own_question"):
            labels[id(row)] += JUDGE_OWN_MARK
    cells = {id(row): [paired_cell(*value_and_p(row, s)) for s in statistics] for row in ordered}
    for column, stat in enumerate(statistics):
        for row in best_of([(row, value_and_p(row, stat)[0]) for row in ordered]):
            value, p = value_and_p(row, stat)
            cells[id(row)][column] = paired_cell(value, p, bold=True)
    # the significance cluster of each metric (documents from before it have no rank).
    ranked = any("rank" in row for row in rows)
    if ranked:
        for row in ordered:
            rank = row.get("rank")
            cells[id(row)].append(str(rank) if rank is not None else "--")
        blocks = [(name, [(label, [*row_cells, ""]) for label, row_cells in block]) for name, block in blocks]
    for group in group_order(ordered):
        members = [row for row in ordered if group_of(row) == group]
        blocks.append((latex_escape(group), [(labels[id(row)], cells[id(row)]) for row in members]))

    header = [r"\multicolumn{2}{l}{Metrics}"] + [f"{STAT_NAMES[stat]} ($p$-value)" for stat in statistics]
    header += ["Rank"] if ranked else []
    lines = [
        r"\begin{table*}[t]",
        r"\centering",
        r"\small",
        r"\begin{tabular}{ll" + "c" * (len(statistics) + int(ranked)) + "}",
        r"\toprule",
        " & ".join(header) + r" \\",
    ]
    for name, block_rows in blocks:
        lines.append(r"\midrule")
        for position, (label, row_cells) in enumerate(block_rows):
            first = block_cell(name, len(block_rows)) if position == 0 else ""
            lines.append(" & ".join([first, label, *row_cells]) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\caption{"
        + correlation_caption(document, question, study_name, rows, labels, human)
        + (rank_sentence(document, question) if ranked else "")
        + "}",
        r"\label{" + table_label(document, question, study_name, "correlation") + "}",
        r"\end{table*}",
    ]
    return "\n".join(lines) + "\n"


def value_and_p(row: CorrelationFields, stat: Statistic) -> tuple[float | None, float | None]:
    if stat == "pearson":
        return row.get("pearson"), row.get("pearson_p")
    if stat == "spearman":
        return row.get("spearman"), row.get("spearman_p")
    return row.get("kendall"), row.get("kendall_p")

"""Gupta et al. (2019), Tables 4 and 5's layouts: each referenced metric with one reference and with all of
them, and the diversity metrics against the raters' diversity scores (Spearman first, $p$-values in their own
columns)."""

from __future__ import annotations

from typing import Literal

from stats.latex.captions import (
    THREE_DECIMAL_P_RULE,
    diversity_notes,
    of_question,
    question_summary,
    study_phrase,
    table_label,
)
from stats.latex.cells import best_of, bold_if, format_coefficient, latex_escape, p_three_decimals
from stats.latex.labels import disambiguated, display_detail, metric_label, metric_rank, paper_label
from stats.report.document_types import DiversityRow, ReportDocument, SingleVsMultiEntry

Mode = Literal["single", "multi"]
PaperStatistic = Literal["spearman", "pearson"]  # Gupta et al. (2019)'s tables: Spearman first


def single_vs_multi_latex(document: ReportDocument, question: str, *, study_name: str | None = None) -> str:
    """Gupta et al. (2019) Table 4 for one question; ``""`` when no metric was scored both ways."""
    entries = sorted(
        of_question(document.get("single_vs_multi"), question),
        key=lambda entry: (
            metric_rank(str(entry.get("metric", ""))),
            str(entry.get("single_signature", "")),
        ),
    )
    if not entries:
        return ""
    details = [display_detail(entry, str(entry["metric"])) for entry in entries]
    if all(detail is not None for detail in details):
        labels = {
            id(entry): paper_label(str(entry["metric"]), detail or "", False)
            for entry, detail in zip(entries, details, strict=True)
        }
    else:
        labels = disambiguated(
            [
                (id(entry), metric_label(str(entry["metric"])), str(entry.get("single_signature", "")))
                for entry in entries
            ]
        )
    columns: list[tuple[Mode, PaperStatistic]] = [
        ("single", "spearman"),
        ("single", "pearson"),
        ("multi", "spearman"),
        ("multi", "pearson"),
    ]
    best = {
        (mode, stat): {id(e) for e in best_of([(e, mode_value_and_p(e, mode, stat)[0]) for e in entries])}
        for mode, stat in columns
    }
    lines = [
        r"\begin{table*}[t]",
        r"\centering",
        r"\small",
        r"\begin{tabular}{l" + "c" * 8 + "}",
        r"\toprule",
        r" & \multicolumn{4}{c}{Single reference} & \multicolumn{4}{c}{Multiple references} \\",
        r"\cmidrule(lr){2-5} \cmidrule(lr){6-9}",
        r"Metrics" + r" & Spearman & $p$-value & Pearson & $p$-value" * 2 + r" \\",
        r"\midrule",
    ]
    for entry in entries:
        cells = [labels[id(entry)]]
        for mode, stat in columns:
            value, p = mode_value_and_p(entry, mode, stat)
            cells.append(bold_if(format_coefficient(value), id(entry) in best[(mode, stat)]))
            cells.append(p_three_decimals(p))
        lines.append(" & ".join(cells) + r" \\")
    summary = question_summary(document, question)
    replies = summary.get("human_scored") if summary else None
    caption = (
        "Correlation of each metric with the human scores when evaluated with a single reference "
        "(the original reply) and with multiple references (the best-matching reference of each context)"
        f": {study_phrase(document, study_name)}, question ``{latex_escape(question)}''"
        + (f", {replies} replies with a human score" if replies is not None else "")
        + ". "
        + THREE_DECIMAL_P_RULE
        + (
            " n/a: not computable (too few replies, or constant scores)."
            if any(
                value is None
                for entry in entries
                for mode, stat in columns
                for value in mode_value_and_p(entry, mode, stat)
            )
            else ""
        )
    )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\caption{" + caption + "}",
        r"\label{" + table_label(document, question, study_name, "single-vs-multi") + "}",
        r"\end{table*}",
    ]
    return "\n".join(lines) + "\n"


def mode_value_and_p(
    entry: SingleVsMultiEntry, mode: Mode, stat: PaperStatistic
) -> tuple[float | None, float | None]:
    if mode == "single":
        if stat == "spearman":
            return entry.get("single_spearman"), entry.get("single_spearman_p")
        return entry.get("single_pearson"), entry.get("single_pearson_p")
    if stat == "spearman":
        return entry.get("multi_spearman"), entry.get("multi_spearman_p")
    return entry.get("multi_pearson"), entry.get("multi_pearson_p")


def diversity_latex(document: ReportDocument, *, study_name: str | None = None) -> str:
    """Gupta et al. (2019) Table 5; ``""`` when the study has no diversity judgments."""
    diversity = document.get("diversity")
    if not diversity or not diversity.get("rows"):
        return ""
    entries = sorted(diversity["rows"], key=lambda row: metric_rank(str(row.get("metric", ""))))
    statistics: tuple[PaperStatistic, ...] = ("spearman", "pearson")
    best = {
        stat: {id(row) for row in best_of([(row, diversity_value_and_p(row, stat)[0]) for row in entries])}
        for stat in statistics
    }
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        r"\begin{tabular}{lcccc}",
        r"\toprule",
        r"Metric & Spearman & $p$-value & Pearson & $p$-value \\",
        r"\midrule",
    ]
    inverted = False
    for row in entries:
        label = metric_label(str(row.get("metric", "")))
        if row.get("inverted"):
            label += r"$^\dagger$"
            inverted = True
        cells = [label]
        for stat in statistics:
            value, p = diversity_value_and_p(row, stat)
            cells.append(bold_if(format_coefficient(value), id(row) in best[stat]))
            cells.append(p_three_decimals(p))
        lines.append(" & ".join(cells) + r" \\")
    human = diversity.get("human_score") or "the raters' diversity score"
    caption = (
        f"Correlation of diversity metrics with the human diversity score ({latex_escape(human)}), "
        f"over {diversity.get('pairs', 'n/a')} (system, context) pairs and {diversity.get('judgments', 'n/a')} "
        f"judgments: {study_phrase(document, study_name)}. "
        + (r"$^\dagger$Correlated as $1 - x$, since a lower value means more diverse. " if inverted else "")
        + THREE_DECIMAL_P_RULE
        + diversity_notes(entries)
    )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\caption{" + caption + "}",
        r"\label{" + table_label(document, None, study_name, "diversity") + "}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def diversity_value_and_p(row: DiversityRow, stat: PaperStatistic) -> tuple[float | None, float | None]:
    if stat == "spearman":
        return row.get("spearman"), row.get("spearman_p")
    return row.get("pearson"), row.get("pearson_p")

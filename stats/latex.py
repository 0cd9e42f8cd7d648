"""The report's tables as LaTeX, in the layout of the papers the app reproduces, ready to paste.

* :func:`correlation_table_latex`: seed 000 (RUBER) Table 2: an "Inter-annotator" block with Human (Avg)
  and Human (Max) above the metric blocks Referenced, Unreferenced, Hybrid, Other (always in this order;
  a block the document does not know comes last); one column per coefficient, "Pearson ($p$-value)" and
  "Spearman ($p$-value)" (Kendall's tau on request), each cell ``0.2722 ($< 0.01$)``.
* :func:`single_vs_multi_latex`: seed 003 Table 4: each referenced metric with one reference and with all
  of them, Spearman, $p$-value, Pearson, $p$-value for each.
* :func:`diversity_latex`: seed 003 Table 5: diversity metrics against the raters' diversity scores.
* :func:`report_latex`: every table of every question, under a comment header naming the study, the data
  and code versions and the report options.

Number rules (each table's caption repeats its $p$-value rule):

* coefficients: 4 decimals, as both papers print them (``-0.0006``; a rounded ``-0.0000`` is ``0.0000``);
* $p$-values in seed 000's layout: 4 decimals in parentheses, and ``$< 0.01$`` below 0.01, as Table 2
  prints them; in seed 003's layouts (own columns): 3 decimals, and ``$< 0.001$`` below 0.001, where the
  paper printed ``0.000``;
* a statistic the report could not compute (``None``; the row's note says why) is ``n/a``; a column that
  does not apply to a row (Kendall's tau for the human rows, which the report does not compute) is
  ``---``;
* bold: the highest coefficient per column among the metric rows (the human rows are the ceiling, not
  competitors), compared as printed (4 decimals), so equal-looking values are bold together; nothing is
  bold when fewer than two metrics have a value in that column.

Metric names read as in the papers (``bleu-2`` -> BLEU-2, ``ruber-referenced`` -> Vector pool ($s_R$));
a name the app does not know is printed as it is, escaped. A metric whose scores were computed elsewhere
and imported (``origin`` external, issue 14) is printed with its name and a dagger
(``BLEU-2$^\\dagger$``), in the block External, and the caption says what the dagger means. When one
metric was scored with one reference and with all of them, its rows say which (``BLEU-2 (single)``,
``BLEU-2 (multi)``); when two signatures of a metric still read the same (two tokenizers, two models),
the parts of the signature that differ are added. Every text from outside (study, question, metric and
block names, notes, the filter's description) goes through :func:`latex_escape`.

The tables need only ``\\usepackage{booktabs}`` (a block's name stands in its first row, no ``multirow``,
so nothing beyond what an ACL or IEEE template loads). The correlation and single- vs
multi-reference tables are ``table*`` (as wide as the page in a two-column paper such as the seeds', an
ordinary float in one column), all three in ``\\small``.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Literal, TypeVar

from stats.report.document_types import (
    CorrelationFields,
    DiversityRow,
    HumanEntry,
    MetricRow,
    QuestionSummary,
    ReportDocument,
    SingleVsMultiEntry,
    Statistic,
)
from stats.report.types import EXTERNAL_ORIGIN

Entry = TypeVar("Entry", bound=Mapping[str, object])
Row = TypeVar("Row")
Mode = Literal["single", "multi"]
PaperStatistic = Literal["spearman", "pearson"]  # seed 003's tables: Spearman first

GROUP_ORDER = ("Referenced", "Unreferenced", "Hybrid", "Other")
INTER_ANNOTATOR = "Inter-annotator"
HUMAN_LABELS = ("Human (Avg)", "Human (Max)")
NOT_AVAILABLE = "n/a"
NOT_APPLICABLE = "---"
PACKAGES = r"\usepackage{booktabs}"

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # Not special to TeX, but OT1-encoded fonts (LaTeX's default) print them as other glyphs (< as ¡).
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "≤": r"\ensuremath{\leq}",
    "≥": r"\ensuremath{\geq}",
}

_FIXED_NAMES = {
    "rouge-l": "ROUGE-L",
    "meteor": "METEOR",
    "embedding-average": "Embedding Average",
    "vector-extrema": "Vector Extrema",
    "greedy-matching": "Greedy Matching",
    # seed 000 Table 2's names for RUBER's parts
    "ruber-referenced": r"Vector pool ($s_R$)",
    "vector-pool-unreferenced": "Vector pool",
    "ruber-unreferenced": r"NN scorer ($s_U$)",
    "bert-ruber-referenced": r"BERT-RUBER $s_R$",
    "bert-ruber-unreferenced": r"BERT-RUBER $s_U$",
    "recall-vector-extrema": "Recall Vector Extrema",
    "corpus-bleu": "Corpus BLEU",
    # the names their papers print (issue 34: "cider-d" stood beside "BLEU-4")
    "cider-d": "CIDEr-D",
    "chrf": "chrF",
    "chrf++": "chrF++",
    "rouge-lsum": "ROUGE-Lsum",
    "rouge-l-precision": "ROUGE-L precision",
    "rouge-l-recall": "ROUGE-L recall",
    "maude": "MaUde",
    "cross-ruber-unreferenced": r"Cross-RUBER $s_U$",
    "cross-ruber-referenced": r"Cross-RUBER $s_R$",
}
_BLENDS = {"min": "min", "gmean": "geometric mean", "amean": "arithmetic mean", "max": "max"}
_CELL_PARTS = {
    "word2vec": "word2vec",
    "bert": "BERT",
    "rnn": "Bi-RNN",
    "max": "max pooling",
    "mean": "mean pooling",
    "ranking": "ranking",
    "ce": "cross-entropy",
}
# The papers' row order: n-gram overlap, embeddings, RUBER's parts, its blends (seed 000 Table 2),
# then seed 003 Table 5's diversity metrics.
METRIC_ORDER = (
    "bleu-1",
    "bleu-2",
    "bleu-3",
    "bleu-4",
    "rouge-l",
    "meteor",
    "embedding-average",
    "vector-extrema",
    "greedy-matching",
    "ruber-referenced",
    "bert-ruber-referenced",
    "vector-pool-unreferenced",
    "ruber-unreferenced",
    "bert-ruber-unreferenced",
    "ruber-min",
    "ruber-gmean",
    "ruber-amean",
    "ruber-max",
    "bert-ruber-min",
    "bert-ruber-gmean",
    "bert-ruber-amean",
    "bert-ruber-max",
    "distinct-1",
    "distinct-2",
    "distinct-3",
    "self-bleu-2",
    "self-bleu-4",
    "recall-bleu-2",
    "recall-bleu-4",
    "recall-meteor",
    "recall-rouge-l",
    "recall-vector-extrema",
    "recall-greedy-matching",
    "corpus-bleu",
)
_REFERENCE_ORDER = {"single": 0, "multi": 1}
EXTERNAL_MARK = r"$^\dagger$"
EXTERNAL_NOTE = (
    EXTERNAL_MARK + "Computed elsewhere and imported into the app (its signature names the source)."
)
_SIGNATURE_VALUE_LIMIT = 12  # a model's sha256 in a disambiguating suffix is cut to this many characters


def latex_escape(text: object) -> str:
    """``text`` as LaTeX that prints it literally: TeX's special characters escaped, line breaks and other
    control characters as spaces (a blank line would end a caption's paragraph)."""
    out = []
    for char in str(text):
        if char in _LATEX_SPECIALS:
            out.append(_LATEX_SPECIALS[char])
        elif unicodedata.category(char) == "Cc":
            out.append(" ")
        else:
            out.append(char)
    return "".join(out)


def metric_label(name: str) -> str:
    """The name a paper prints for a metric, as LaTeX; an unknown name is printed as it is, escaped."""
    if name in _FIXED_NAMES:
        return _FIXED_NAMES[name]
    match = re.fullmatch(r"(recall-|self-)?bleu-(\d)", name)
    if match:
        prefix = {"recall-": "Recall ", "self-": "Self "}.get(match.group(1) or "", "")
        return f"{prefix}BLEU-{match.group(2)}"
    match = re.fullmatch(r"distinct-(\d)", name)
    if match:
        return f"Distinct-{match.group(1)}"
    match = re.fullmatch(r"(cross-ruber|bert-ruber|ruber)-(min|gmean|amean|max)", name)
    if match:
        family = {"bert-ruber": "BERT-RUBER", "cross-ruber": "Cross-RUBER"}.get(match.group(1), "RUBER")
        return f"{family} {_BLENDS[match.group(2)]}"
    match = re.fullmatch(r"bert-ruber-unreferenced:(word2vec|bert)-(rnn|max|mean)-(ranking|ce)", name)
    if match:
        return r"BERT-RUBER $s_U$ (" + ", ".join(_CELL_PARTS[part] for part in match.groups()) + ")"
    match = re.fullmatch(r"recall-(.+)", name)
    if match and match.group(1) in _FIXED_NAMES:
        return f"Recall {_FIXED_NAMES[match.group(1)]}"
    return latex_escape(name)


def format_coefficient(value: float | None) -> str:
    """4 decimals (``-0.0006``); ``n/a`` for a coefficient the report could not compute."""
    if value is None or not math.isfinite(value):
        return NOT_AVAILABLE
    text = f"{value:.4f}"
    return "0.0000" if text == "-0.0000" else text


def format_p_value(p: float | None, *, below: float = 0.01, digits: int = 4) -> str:
    """Seed 000's rule by default: ``$< 0.01$`` under 0.01, else 4 decimals; seed 003's layouts pass
    ``below=0.001, digits=3``."""
    if p is None or not math.isfinite(p):
        return NOT_AVAILABLE
    if p < below:
        return f"$< {below:g}$"
    return f"{p:.{digits}f}"


def correlation_table_latex(
    document: ReportDocument,
    question: str,
    *,
    study_name: str | None = None,
    kendall: bool = False,
) -> str:
    """Seed 000 Table 2 for one question: the human rows, then one block of rows per metric group.
    ``""`` when the document has neither human rows nor metric rows for the question."""
    human = {row["label"]: row for row in _of_question(document.get("human"), question)}
    rows = _of_question(document.get("rows"), question)
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
                    (latex_escape(label), [_human_cell(human.get(label), stat) for stat in statistics])
                    for label in HUMAN_LABELS
                ],
            )
        )
    ordered = sorted(rows, key=_row_order)
    labels = _row_labels(ordered)
    cells = {id(row): [_paired_cell(*_value_and_p(row, s)) for s in statistics] for row in ordered}
    for column, stat in enumerate(statistics):
        for row in _best([(row, _value_and_p(row, stat)[0]) for row in ordered]):
            value, p = _value_and_p(row, stat)
            cells[id(row)][column] = _paired_cell(value, p, bold=True)
    # Issue 26: the significance cluster of each metric (documents from before it have no rank).
    ranked = any("rank" in row for row in rows)
    if ranked:
        for row in ordered:
            rank = row.get("rank")
            cells[id(row)].append(str(rank) if rank is not None else "--")
        blocks = [(name, [(label, [*row_cells, ""]) for label, row_cells in block]) for name, block in blocks]
    for group in _group_order(ordered):
        members = [row for row in ordered if _group(row) == group]
        blocks.append((latex_escape(group), [(labels[id(row)], cells[id(row)]) for row in members]))

    header = [r"\multicolumn{2}{l}{Metrics}"] + [f"{_STAT_NAMES[stat]} ($p$-value)" for stat in statistics]
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
            first = _block_cell(name, len(block_rows)) if position == 0 else ""
            lines.append(" & ".join([first, label, *row_cells]) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\caption{"
        + _correlation_caption(document, question, study_name, rows, labels, human)
        + (_rank_sentence(document, question) if ranked else "")
        + "}",
        r"\label{" + _label(document, question, study_name, "correlation") + "}",
        r"\end{table*}",
    ]
    return "\n".join(lines) + "\n"


def single_vs_multi_latex(document: ReportDocument, question: str, *, study_name: str | None = None) -> str:
    """Seed 003 Table 4 for one question; ``""`` when no metric was scored both ways."""
    entries = sorted(
        _of_question(document.get("single_vs_multi"), question),
        key=lambda entry: (
            _metric_rank(str(entry.get("metric", ""))),
            str(entry.get("single_signature", "")),
        ),
    )
    if not entries:
        return ""
    details = [_display_detail(entry, str(entry["metric"])) for entry in entries]
    if all(detail is not None for detail in details):
        labels = {
            id(entry): _paper_label(str(entry["metric"]), detail or "", False)
            for entry, detail in zip(entries, details, strict=True)
        }
    else:
        labels = _disambiguated(
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
        (mode, stat): {id(e) for e in _best([(e, _mode_value_and_p(e, mode, stat)[0]) for e in entries])}
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
            value, p = _mode_value_and_p(entry, mode, stat)
            cells.append(_bold_if(format_coefficient(value), id(entry) in best[(mode, stat)]))
            cells.append(_seed_003_p(p))
        lines.append(" & ".join(cells) + r" \\")
    summary = _question_summary(document, question)
    replies = summary.get("human_scored") if summary else None
    caption = (
        "Correlation of each metric with the human scores when evaluated with a single reference "
        "(the original reply) and with multiple references (the best-matching reference of each context)"
        f": {_study_phrase(document, study_name)}, question ``{latex_escape(question)}''"
        + (f", {replies} replies with a human score" if replies is not None else "")
        + ". "
        + _SEED_003_P_RULE
        + (
            " n/a: not computable (too few replies, or constant scores)."
            if any(
                value is None
                for entry in entries
                for mode, stat in columns
                for value in _mode_value_and_p(entry, mode, stat)
            )
            else ""
        )
    )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\caption{" + caption + "}",
        r"\label{" + _label(document, question, study_name, "single-vs-multi") + "}",
        r"\end{table*}",
    ]
    return "\n".join(lines) + "\n"


def diversity_latex(document: ReportDocument, *, study_name: str | None = None) -> str:
    """Seed 003 Table 5; ``""`` when the study has no diversity judgments."""
    diversity = document.get("diversity")
    if not diversity or not diversity.get("rows"):
        return ""
    entries = sorted(diversity["rows"], key=lambda row: _metric_rank(str(row.get("metric", ""))))
    statistics: tuple[PaperStatistic, ...] = ("spearman", "pearson")
    best = {
        stat: {id(row) for row in _best([(row, _diversity_value_and_p(row, stat)[0]) for row in entries])}
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
            value, p = _diversity_value_and_p(row, stat)
            cells.append(_bold_if(format_coefficient(value), id(row) in best[stat]))
            cells.append(_seed_003_p(p))
        lines.append(" & ".join(cells) + r" \\")
    human = diversity.get("human_score") or "the raters' diversity score"
    caption = (
        f"Correlation of diversity metrics with the human diversity score ({latex_escape(human)}), "
        f"over {diversity.get('pairs', 'n/a')} (system, context) pairs and {diversity.get('judgments', 'n/a')} "
        f"judgments: {_study_phrase(document, study_name)}. "
        + (r"$^\dagger$Correlated as $1 - x$, since a lower value means more diverse. " if inverted else "")
        + _SEED_003_P_RULE
        + _diversity_notes(entries)
    )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\caption{" + caption + "}",
        r"\label{" + _label(document, None, study_name, "diversity") + "}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def report_latex(document: ReportDocument, *, study_name: str | None = None, kendall: bool = False) -> str:
    """Every table of the report (per question: the correlation table and, where there is one, the
    single- vs multi-reference table; then the diversity table), under a comment header."""
    name = study_name if study_name is not None else str(document.get("study_name", ""))
    options = document.get("options")
    header = [
        f'% Correlation report of study "{_comment_text(name)}" (dialeval)',
        f"% data version {_comment_text(document.get('data_version'))}; "
        f"code version {_comment_text(document.get('code_version') or 'unknown')}; "
        f"document version {_comment_text(document.get('document_version'))}",
        "% options: "
        + ", ".join(
            f"{_comment_text(k)}={_comment_text(v)}" for k, v in (options.items() if options else ())
        ),
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


def _rank_sentence(document: ReportDocument, question: str) -> str:
    """What the Rank column is (stats/report/meta.py's significance clusters)."""
    clusters = _of_question(document.get("significance_clusters"), question)
    if not clusters:
        return ""
    entry = clusters[0]
    if entry["note"]:
        return f" Rank: none ({latex_escape(entry['note'])})."
    rule = entry.get("rule_description") or (
        f"a new cluster starts where a metric is worse than the best of the current one, p < {entry['alpha']:g}"
    )
    return (
        f" Rank: significance cluster by {latex_escape(entry['statistic'])}; {latex_escape(rule)}"
        f" ({latex_escape(entry['test'])} permutation test, {entry['permutations']} permutations)."
    )


def _diversity_notes(rows: Sequence[DiversityRow]) -> str:
    notes = [
        f"{metric_label(str(row.get('metric', '')))}, {_reason(row['note'])}"
        for row in rows
        if row.get("note") and (row.get("spearman") is None or row.get("pearson") is None)
    ]
    return " Not computable (n/a): " + "; ".join(notes) + "." if notes else ""


def _reason(note: object) -> str:
    """A row's note without the "not computable: " its sentence already says."""
    return latex_escape(str(note).strip().removeprefix("not computable:").strip())


# -- the correlation table's parts ------------------------------------------------------------------------

_STAT_NAMES = {"pearson": "Pearson", "spearman": "Spearman", "kendall": "Kendall"}
_SEED_003_P_RULE = r"$p$-values under 0.001 are shown as $< 0.001$."


def _of_question(section: Sequence[Entry] | None, question: str) -> list[Entry]:
    return [entry for entry in section or [] if entry.get("question") == question]


def _value_and_p(row: CorrelationFields, stat: Statistic) -> tuple[float | None, float | None]:
    if stat == "pearson":
        return row.get("pearson"), row.get("pearson_p")
    if stat == "spearman":
        return row.get("spearman"), row.get("spearman_p")
    return row.get("kendall"), row.get("kendall_p")


def _mode_value_and_p(
    entry: SingleVsMultiEntry, mode: Mode, stat: PaperStatistic
) -> tuple[float | None, float | None]:
    if mode == "single":
        if stat == "spearman":
            return entry.get("single_spearman"), entry.get("single_spearman_p")
        return entry.get("single_pearson"), entry.get("single_pearson_p")
    if stat == "spearman":
        return entry.get("multi_spearman"), entry.get("multi_spearman_p")
    return entry.get("multi_pearson"), entry.get("multi_pearson_p")


def _diversity_value_and_p(row: DiversityRow, stat: PaperStatistic) -> tuple[float | None, float | None]:
    if stat == "spearman":
        return row.get("spearman"), row.get("spearman_p")
    return row.get("pearson"), row.get("pearson_p")


def _group(row: MetricRow) -> str:
    return str(row.get("group") or "Other")


def _group_order(rows: Sequence[MetricRow]) -> list[str]:
    present = {_group(row) for row in rows}
    return [g for g in GROUP_ORDER if g in present] + sorted(present - set(GROUP_ORDER))


def _metric_rank(name: str) -> tuple[int, str]:
    base = name.split(":", 1)[0] if name.startswith("bert-ruber-unreferenced:") else name
    rank = METRIC_ORDER.index(base) if base in METRIC_ORDER else len(METRIC_ORDER)
    return rank, name


def _row_order(row: MetricRow) -> tuple[int, str, int, str]:
    return (
        *_metric_rank(str(row.get("metric", ""))),
        _REFERENCE_ORDER.get(str(row.get("references")), 2),
        str(row.get("signature", "")),
    )


def _display_detail(entry: Mapping[str, object], name: str) -> str | None:
    """The part of an entry's display name (issue 34, stats/display_names.py) after its metric's name: "" for a
    name that is unique alone, ``None`` in a document from before display names."""
    display = entry.get("display")
    if not isinstance(display, str) or not display:
        return None
    if display == name:
        return ""
    if display.startswith(f"{name} (") and display.endswith(")"):
        return display[len(name) + 2 : -1]
    return None


def _paper_label(name: str, detail: str, external: bool) -> str:
    """The paper's name of a metric (a dagger for an external one) and the display name's distinguishing part."""
    label = metric_label(name.removesuffix(" (external)")) + EXTERNAL_MARK if external else metric_label(name)
    return f"{label} ({latex_escape(detail)})" if detail else label


def _row_labels(rows: Sequence[MetricRow]) -> dict[int, str]:
    """Each row's printed name: the paper's name of the metric and the distinguishing part of its display name
    (the page's and every export's). In a document from before display names: the metric's, plus its reference
    mode where the same metric appears with one reference and with several, plus the differing signature parts
    where that still is not unique."""
    details = [_display_detail(row, str(row.get("metric", ""))) for row in rows]
    if rows and all(detail is not None for detail in details):
        return {
            id(row): _paper_label(str(row.get("metric", "")), detail or "", _is_external(row))
            for row, detail in zip(rows, details, strict=True)
        }
    modes: dict[str, set[str]] = {}
    implementations: dict[str, set[str]] = {}
    for row in rows:
        modes.setdefault(str(row.get("metric", "")), set()).add(str(row.get("references")))
        implementations.setdefault(str(row.get("metric", "")), set()).add(str(row.get("implementation", "")))
    named = []
    for row in rows:
        metric = str(row.get("metric", ""))
        label = metric_label(metric)
        if _is_external(row):  # the report names it "<name> (external)": the paper's name and a dagger
            label = metric_label(metric.removesuffix(" (external)")) + EXTERNAL_MARK
        references = str(row.get("references"))
        if references in _REFERENCE_ORDER and {"single", "multi"} <= modes[metric]:
            label += f" ({references})"
        if len(implementations[metric]) > 1:  # two tools' numbers of one metric: say whose each row is
            label += f" ({latex_escape(str(row.get('implementation', '')))})"
        named.append((id(row), label, str(row.get("signature", ""))))
    return _disambiguated(named)


def _disambiguated(named: Sequence[tuple[int, str, str]]) -> dict[int, str]:
    """(key, label, signature text) -> key: label, with the signature parts that tell apart rows whose
    labels are equal (``tok:none``, ``model:1a2b3c4d5e6f``)."""
    by_label: dict[str, list[tuple[int, str]]] = {}
    for key, label, signature in named:
        by_label.setdefault(label, []).append((key, signature))
    labels = {}
    for label, members in by_label.items():
        if len(members) == 1:
            labels[members[0][0]] = label
            continue
        parts = {key: set(signature.split("|")[1:]) for key, signature in members}
        shared = set.intersection(*parts.values())
        for key, _ in members:
            differing = sorted(parts[key] - shared)
            suffix = ", ".join(latex_escape(_shortened(part)) for part in differing)
            labels[key] = f"{label} ({suffix})" if suffix else label
    return labels


def _shortened(part: str) -> str:
    key, _, value = part.partition(":")
    if len(value) > _SIGNATURE_VALUE_LIMIT:
        return f"{key}:{value[:_SIGNATURE_VALUE_LIMIT]}"
    return part


def _is_external(row: MetricRow) -> bool:
    return row.get("origin") == EXTERNAL_ORIGIN


def _best(rows: Sequence[tuple[Row, float | None]]) -> list[Row]:
    """Of (row, statistic) pairs, the rows whose statistic is highest as printed; none when fewer than two
    rows have a value."""
    printed = [
        (row, float(format_coefficient(value)))
        for row, value in rows
        if format_coefficient(value) != NOT_AVAILABLE
    ]
    if len(printed) < 2:
        return []
    top = max(value for _, value in printed)
    return [row for row, value in printed if value == top]


def _paired_cell(value: float | None, p: float | None, *, bold: bool = False) -> str:
    coefficient = format_coefficient(value)
    if coefficient == NOT_AVAILABLE:
        return NOT_AVAILABLE
    return f"{_bold_if(coefficient, bold)} ({format_p_value(p)})"


def _human_cell(row: HumanEntry | None, stat: Statistic) -> str:
    if stat == "kendall":
        return NOT_APPLICABLE
    if row is None:
        return NOT_AVAILABLE
    if stat == "pearson":
        return _paired_cell(row.get("pearson"), row.get("pearson_p"))
    return _paired_cell(row.get("spearman"), row.get("spearman_p"))


def _bold_if(text: str, bold: bool) -> str:
    return rf"\textbf{{{text}}}" if bold else text


def _seed_003_p(p: float | None) -> str:
    return format_p_value(p, below=0.001, digits=3)


def _block_cell(name: str, size: int) -> str:
    """The block's name, in its first row (the other rows of the block leave the cell empty)."""
    return name


def _question_summary(document: ReportDocument, question: str) -> QuestionSummary | None:
    for summary in document.get("questions") or []:
        if summary.get("name") == question:
            return summary
    return None


def _study_phrase(document: ReportDocument, study_name: str | None) -> str:
    name = study_name if study_name is not None else str(document.get("study_name", ""))
    return f"study ``{latex_escape(name)}''"


def _correlation_caption(
    document: ReportDocument,
    question: str,
    study_name: str | None,
    rows: Sequence[MetricRow],
    labels: Mapping[int, str],
    human: Mapping[str, HumanEntry],
) -> str:
    summary = _question_summary(document, question)
    replies = summary.get("human_scored") if summary else None
    sentences = [
        "Correlation between automatic metrics and human scores: "
        f"{_study_phrase(document, study_name)}, question ``{latex_escape(question)}''"
        + (f", {replies} replies with a human score" if replies is not None else "")
        + "."
    ]
    raters = max((int(row.get("raters") or 0) for row in human.values()), default=0)
    if human and raters:
        sentences.append(
            "Human (Avg): each rater against the mean of the others, averaged over "
            f"{raters} raters; Human (Max): the best rater."
        )
    sentences.append(_filter_sentence(document, question))
    sentences.append(
        r"$p$-values in parentheses ($< 0.01$ below 0.01); the best metric in each column in bold."
    )
    if any(_is_external(row) for row in rows):
        sentences.append(EXTERNAL_NOTE)
    sentences.append(_implementation_sentence(rows, labels))
    fewer = [
        f"{labels[id(row)]} ($n = {row['n']}$)"
        for row in rows
        if replies is not None
        and isinstance(row.get("n"), int)
        and row["n"] < replies
        and not row.get("no_values")  # said below, with the reason
    ]
    if fewer:
        sentences.append(
            "Replies with no score of the metric are left out of its row: " + ", ".join(fewer) + "."
        )
    missing = [
        f"{latex_escape(label)}, {_reason(human_row['note'])}"
        for label, human_row in human.items()
        if human_row.get("note") and (human_row.get("pearson") is None or human_row.get("spearman") is None)
    ]
    missing += [
        f"{labels[id(row)]}, {_reason(row['note'])}"
        for row in rows
        if row.get("note") and (row.get("pearson") is None or row.get("spearman") is None)
    ]
    if missing:
        sentences.append("Not computable (n/a): " + "; ".join(missing) + ".")
    return " ".join(sentence for sentence in sentences if sentence)


# The tools a baseline can be computed by (issue 23), as the caption names them.
IMPLEMENTATION_DESCRIPTIONS = {
    "nltk": "nltk's formulas",
    "nlg-eval": "nlg-eval (pycocoevalcap; METEOR 1.5)",
    "sacrebleu": "sacrebleu",
    "rouge-score": "Google's rouge-score",
}


def _implementation_sentence(rows: Sequence[MetricRow], labels: Mapping[int, str]) -> str:
    """Which tool computed which baseline ("Computed with nlg-eval (pycocoevalcap; METEOR 1.5): BLEU-4,
    METEOR; with nltk's formulas: ROUGE-L."), so that a reader puts each number beside the right paper's."""
    by_tool: dict[str, list[str]] = {}
    for row in rows:
        tool = str(row.get("implementation", ""))
        if tool in IMPLEMENTATION_DESCRIPTIONS:
            by_tool.setdefault(tool, []).append(labels[id(row)])
    if not by_tool:
        return ""
    parts = [
        f"{IMPLEMENTATION_DESCRIPTIONS[tool]}: {', '.join(by_tool[tool])}"
        for tool in IMPLEMENTATION_DESCRIPTIONS
        if tool in by_tool
    ]
    return "Computed with " + "; with ".join(parts) + " (each score's signature names it: impl)."


def _filter_sentence(document: ReportDocument, question: str) -> str:
    entries = _of_question(document.get("filter"), question)
    if not entries:
        return ""
    entry = entries[0]
    if not entry.get("ratings_total"):
        summary = _question_summary(document, question)
        if summary and summary.get("imported_means"):
            return "The human scores are imported means: there are no per-rater scores to filter."
        return "No per-rater ratings."
    description = str(entry.get("description") or "").strip()
    removed = int(entry.get("ratings_removed") or 0)
    total = entry.get("ratings_total")
    annotators = int(entry.get("annotators_removed") or 0)
    sentence = f"Filter: {latex_escape(description)}" if description else "Filter: none"
    sentence += (
        f"; {removed} of {total} ratings removed" if total is not None else f"; {removed} ratings removed"
    )
    if annotators:
        sentence += f" ({annotators} rater{'s' if annotators != 1 else ''})"
    sentence += "."
    note = str(entry.get("normalisation_note") or "").strip()
    if note:
        sentence += f" Normalisation: {latex_escape(note)}."
    return sentence


def _label(document: ReportDocument, question: str | None, study_name: str | None, table: str) -> str:
    name = study_name if study_name is not None else str(document.get("study_name", ""))
    study = _slug(name) or f"study-{_slug(str(document.get('study', '')))}"
    parts = ["tab", study] + ([_slug(question) or "question"] if question is not None else []) + [table]
    return ":".join([parts[0], "-".join(parts[1:])])


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _comment_text(value: object) -> str:
    """A value on a ``%`` comment line: a line break would end the comment and run the rest as LaTeX."""
    return "".join(" " if unicodedata.category(char) in ("Cc", "Zl", "Zp") else char for char in str(value))

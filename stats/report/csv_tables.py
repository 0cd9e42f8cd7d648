"""The report's tables as CSV files, one per section, before they are written: each a header and its lines,
every cell a plain value.

What a line holds is statistics' business, so it lives beside the LaTeX (``stats/latex.py``); writing the
bytes is the caller's (``correlation/report/exports.py``), through the kernel's formula-safe writer, so that
every CSV the project writes shares one rule against spreadsheet formulas. Numbers stay numbers with full
precision (the csv module writes a float with ``repr``), so ``-0.0067`` stays a number; a statistic the
report could not compute (``None``, or a NaN that slipped through) is an empty cell; an interval is two
columns (``stats/report/csv_columns.py``).

``REPORT_TABLES`` names every section a document can have, so that a page lists them without building a
table: every one is there (header only when empty), except ``diversity`` and ``pairwise``, only when the
study has such judgments (or, for ``pairwise``, a pairwise judge's verdicts), ``pairwise_judges``, only when
pairwise judges gave verdicts, and the sections
later documents added, only in those documents.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from stats.report.csv_columns import (
    AGREEMENT_COEFFICIENTS,
    AGREEMENT_COLUMNS,
    ANNOTATOR_COLUMNS,
    COEFFICIENT_FIELDS,
    COMPARISON_COLUMNS,
    CSV_COLUMNS,
    DIVERSITY_COLUMNS,
    FILTER_COLUMNS,
    HUMAN_COLUMNS,
    METRIC_NAME_COLUMNS,
    MORE_RATINGS_COLUMNS,
    PAIR_COLUMNS,
    PAIRWISE_ACCURACY_COLUMNS,
    PAIRWISE_COLUMNS,
    PAIRWISE_JUDGE_COLUMNS,
    PER_SYSTEM_COLUMNS,
    QUANTILE_COLUMNS,
    QUESTION_COLUMNS,
    REFERENCES_CURVE_COLUMNS,
    SINGLE_VS_MULTI_COLUMNS,
    SYSTEM_LEVEL_COLUMNS,
)
from stats.report.document_types import (
    AccuracyFields,
    AgreementEntry,
    DiversitySection,
    FilterEntry,
    HumanEntry,
    MetricComparison,
    MetricNameEntry,
    MetricRow,
    MoreRatingsEntry,
    PairwiseAccuracyEntry,
    PairwiseSection,
    PerSystemRow,
    QuantileEntry,
    QuestionSummary,
    ReferencesCurveEntry,
    ReportDocument,
    SingleVsMultiEntry,
    SystemLevelRow,
    SystemMeans,
)
from stats.report.pairwise_types import PairwiseJudgeEntry, PairwiseSystem

Line = Mapping[str, object]  # one line of a CSV file: column -> value
PEOPLE = "people"  # ``judged_by`` of the people's win rates in pairwise.csv (a judge's: its display name)


@dataclass(frozen=True)
class CsvTable:
    """One CSV file: its columns, and its lines as column -> value (a column a line lacks is empty)."""

    columns: Sequence[str]
    lines: Sequence[Line]

    def cells(self) -> Iterator[list[object]]:
        """Each line's cells in the order of the columns, as plain values (see ``csv_cell``)."""
        for line in self.lines:
            yield [csv_cell(line.get(column)) for column in self.columns]


def correlation_rows_table(rows: Sequence[MetricRow]) -> CsvTable:
    """The utterance-level table, one line per metric signature (``CSV_COLUMNS``). Rows from before the
    report document (no Kendall, no bootstrap, no group) leave those cells empty."""
    return _table(CSV_COLUMNS, (_metric_row_cells(row) for row in rows))


def per_system_table(rows: Sequence[PerSystemRow]) -> CsvTable:
    """The utterance-level table per system: one line per (system, metric signature)."""
    return _table(PER_SYSTEM_COLUMNS, (_metric_row_cells(row) for row in rows))


def human_table(rows: Sequence[HumanEntry]) -> CsvTable:
    """Human (Avg) and Human (Max) per question (the inter-annotator rows of Tao et al., 2018, Table 2)."""
    return _table(HUMAN_COLUMNS, rows)


def metric_comparisons_table(rows: Sequence[MetricComparison]) -> CsvTable:
    """One line per pair of metric signatures: Williams' test and the paired bootstrap."""
    return _table(COMPARISON_COLUMNS, rows)


def system_level_table(rows: Sequence[SystemLevelRow]) -> CsvTable:
    """One line per (metric signature, system): the system's mean human score and mean metric value, with
    the signature's correlation across systems; a signature with no system still gets one line."""

    def lines() -> Iterable[Line]:
        for row in rows:
            shared = {
                **_metric_row_cells(row),
                "systems": row.get("n"),
            }
            systems: Sequence[SystemMeans | None] = row.get("systems") or [None]  # one line without any
            for system in systems:
                yield {
                    **shared,
                    "system": system.get("system") if system else None,
                    "replies": system.get("n") if system else None,
                    "human_mean": system.get("human_mean") if system else None,
                    "metric_mean": system.get("metric_mean") if system else None,
                }

    return _table(SYSTEM_LEVEL_COLUMNS, lines())


def agreement_table(sections: Sequence[AgreementEntry]) -> CsvTable:
    """The agreement coefficients of each question, one line per coefficient (value ``None``: the note
    says why it is not computable)."""
    return _table(
        AGREEMENT_COLUMNS,
        (
            {
                "question": section.get("question"),
                "identity": section.get("identity"),
                "coefficient": name,
                **_coefficient_cells(section.get(name) or {}),
            }
            for section in sections
            for name in AGREEMENT_COEFFICIENTS
        ),
    )


def agreement_annotators_table(sections: Sequence[AgreementEntry]) -> CsvTable:
    """One line per (question, annotator): ratings, whether they count, their agreement, alpha without
    them, and their correlation with the mean of the others."""
    return _table(
        ANNOTATOR_COLUMNS,
        ({"question": s.get("question"), **row} for s in sections for row in s.get("annotators") or []),
    )


def agreement_pairs_table(sections: Sequence[AgreementEntry]) -> CsvTable:
    """One line per (question, pair of annotators): their Cohen's kappa (the heat map's cells)."""
    return _table(
        PAIR_COLUMNS,
        ({"question": s.get("question"), **pair} for s in sections for pair in s.get("pairs") or []),
    )


def filter_table(entries: Sequence[FilterEntry]) -> CsvTable:
    """Which filter each question's human scores used and what it removed."""
    return _table(
        FILTER_COLUMNS,
        (
            {
                **entry,
                "removed_annotators": "; ".join(
                    f"{removed.get('annotator')} ({removed.get('ratings')}: {removed.get('reason')})"
                    for removed in entry.get("removed") or []
                ),
            }
            for entry in entries
        ),
    )


def questions_table(entries: Sequence[QuestionSummary]) -> CsvTable:
    """Per question: its scale, how many replies have a human score and how many were left out."""
    return _table(QUESTION_COLUMNS, (_question_cells(entry) for entry in entries))


def single_vs_multi_table(rows: Sequence[SingleVsMultiEntry]) -> CsvTable:
    """Gupta et al. (2019), Table 4: each referenced metric with one reference and with all of them."""
    return _table(SINGLE_VS_MULTI_COLUMNS, rows)


def diversity_table(diversity: DiversitySection | None) -> CsvTable:
    """Gupta et al. (2019), Table 5 (header only when the study has no diversity judgments)."""
    return _table(DIVERSITY_COLUMNS, (diversity.get("rows") if diversity else None) or [])


def pairwise_table(pairwise: PairwiseSection | None) -> CsvTable:
    """The systems' win rates from pairwise judgments (stats/report/pairwise.py), best first, then each
    pairwise judge's (stats/report/pairwise_judges.py), in its order, named by ``judged_by``."""

    def line(row: PairwiseSystem, judged_by: str, signature: str = "") -> Line:
        return {
            **row,
            "ci_low": row["ci"][0],
            "ci_high": row["ci"][1],
            "judged_by": judged_by,
            "signature": signature,
        }

    rows = (pairwise.get("systems") if pairwise else None) or []
    judges = [
        line(rate, judge.get("display") or judge["metric"], judge["signature"])
        for judge in _pairwise_judges(pairwise)
        for system in judge["systems"]
        if (rate := system["judge"]) is not None
    ]
    return _table(PAIRWISE_COLUMNS, [*(line(row, PEOPLE) for row in rows), *judges])


def pairwise_judges_table(pairwise: PairwiseSection | None) -> CsvTable:
    """Each pairwise judge against the people: Spearman across systems, agreement on the same pairs,
    position bias, consistency and ties (stats/report/pairwise_judges.py)."""
    return _table(
        PAIRWISE_JUDGE_COLUMNS,
        (
            {
                **judge,
                **judge["agreement"],
                "agreement": judge["agreement"]["share"],
                "systems": judge["n"],
                "spearman_ci_low": judge["spearman_ci"][0],
                "spearman_ci_high": judge["spearman_ci"][1],
            }
            for judge in _pairwise_judges(pairwise)
        ),
    )


def pairwise_accuracy_table(entries: Sequence[PairwiseAccuracyEntry]) -> CsvTable:
    """Pairwise accuracy per metric: of systems (Kocmi et al., 2021) and within contexts (acc_eq with tie
    calibration, Deutsch et al., 2023), each with its interval, epsilon and pairs."""

    def cells(level: str, fields: AccuracyFields) -> dict[str, object]:
        low, high = _interval(fields.get("ci"))
        flat: dict[str, object] = {f"{level}_{key}": value for key, value in fields.items()}
        flat[f"{level}_ci_low"], flat[f"{level}_ci_high"] = low, high
        return flat

    return _table(
        PAIRWISE_ACCURACY_COLUMNS,
        (
            {**entry, **cells("system", entry["system"]), **cells("context", entry["context"])}
            for entry in entries
        ),
    )


def more_ratings_table(entries: Sequence[MoreRatingsEntry]) -> CsvTable:
    """How many more ratings: one line per sentence, its kind (noise, system, difference, metric, note)."""
    return _table(
        MORE_RATINGS_COLUMNS,
        (
            {"question": entry["question"], "kind": kind, "sentence": sentence}
            for entry in entries
            for kind, sentences in (
                ("note", [entry["note"]] if entry["note"] else []),
                ("noise", [entry["noise"]] if entry["noise"] else []),
                ("system", entry["systems"]),
                ("difference", entry["differences"]),
                ("metric", entry["metrics"]),
            )
            for sentence in sentences
        ),
    )


def references_curve_table(curves: Sequence[ReferencesCurveEntry]) -> CsvTable:
    """The data of Gupta et al. (2019), Figure 2: one line per (signature, number of references)."""
    return _table(
        REFERENCES_CURVE_COLUMNS,
        (
            {**curve, **point, "point_items": point.get("items"), "items": curve.get("items")}
            for curve in curves
            for point in curve.get("points") or []
        ),
    )


def quantiles_table(entries: Sequence[QuantileEntry]) -> CsvTable:
    """The data of Tao et al. (2018), Figure 1: one line per (signature, human-score group)."""
    return _table(
        QUANTILE_COLUMNS,
        (
            {**entry, **group, "quantile": index}
            for entry in entries
            for index, group in enumerate(entry.get("groups") or [], start=1)
        ),
    )


def metric_names_table(entries: Sequence[MetricNameEntry]) -> CsvTable:
    """The legend of the metrics' display names: each name with the metric and signature it stands for, and
    an LLM judge's question and mean mass on labels."""
    return _table(METRIC_NAME_COLUMNS, ({**entry, **_judge_cells(entry)} for entry in entries))


# Every section, in the order the files are written (the bundle's archive lists them in this order).
_SECTIONS: dict[str, Callable[[ReportDocument], CsvTable]] = {
    "questions": lambda document: questions_table(document.get("questions") or []),
    "filter": lambda document: filter_table(document.get("filter") or []),
    "human": lambda document: human_table(document.get("human") or []),
    "correlations": lambda document: correlation_rows_table(document.get("rows") or []),
    "per_system": lambda document: per_system_table(document.get("per_system") or []),
    "metric_comparisons": lambda document: metric_comparisons_table(document.get("metric_comparisons") or []),
    "system_level": lambda document: system_level_table(document.get("system_level") or []),
    "agreement": lambda document: agreement_table(document.get("agreement") or []),
    "agreement_annotators": lambda document: agreement_annotators_table(document.get("agreement") or []),
    "agreement_pairs": lambda document: agreement_pairs_table(document.get("agreement") or []),
    "single_vs_multi": lambda document: single_vs_multi_table(document.get("single_vs_multi") or []),
    "references_curve": lambda document: references_curve_table(document.get("references_curve") or []),
    "quantiles": lambda document: quantiles_table(document.get("quantiles") or []),
    "pairwise_accuracy": lambda document: pairwise_accuracy_table(document["pairwise_accuracy"]),
    "more_ratings": lambda document: more_ratings_table(document["more_ratings"]),
    "metric_names": lambda document: metric_names_table(document["metric_names"]),
    "diversity": lambda document: diversity_table(document.get("diversity")),
    "pairwise": lambda document: pairwise_table(document.get("pairwise")),
    "pairwise_judges": lambda document: pairwise_judges_table(document.get("pairwise")),
}
REPORT_TABLES: tuple[str, ...] = tuple(_SECTIONS)
# Sections a document has when it has the key (documents from before them lack it) ...
_WHEN_IN_DOCUMENT = frozenset({"pairwise_accuracy", "more_ratings", "metric_names"})
# ... and when the study has such judgments.
_WHEN_NOT_EMPTY = frozenset({"diversity", "pairwise"})


def report_table_names(document: ReportDocument) -> list[str]:
    """The CSV sections of this document, in ``REPORT_TABLES`` order, without building any of them."""
    return [
        name
        for name in REPORT_TABLES
        if (name not in _WHEN_IN_DOCUMENT or name in document)
        and (name not in _WHEN_NOT_EMPTY or document.get(name))
        and (name != "pairwise_judges" or _pairwise_judges(document.get("pairwise")))
    ]


def report_table(document: ReportDocument, name: str) -> CsvTable | None:
    """One section's table; ``None`` when the document has no such section."""
    return _SECTIONS[name](document) if name in report_table_names(document) else None


def report_tables(document: ReportDocument) -> dict[str, CsvTable]:
    """Every section's table: section name (a file stem) -> table."""
    return {name: _SECTIONS[name](document) for name in report_table_names(document)}


def csv_cell(value: object) -> object:
    """None (and a NaN that slipped through) as an empty cell; a NumPy number as the Python number it
    is (the csv module writes a float with ``repr``: every digit); everything else as it is."""
    if value is None:
        return ""
    if isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else ""
    item = getattr(value, "item", None)
    if item is not None:  # a NumPy scalar
        return csv_cell(item())
    return value


def _table(columns: Sequence[str], lines: Iterable[Line]) -> CsvTable:
    return CsvTable(columns=columns, lines=tuple(lines))


def _question_cells(entry: QuestionSummary) -> dict[str, object]:
    scale: Sequence[int | None] = entry.get("scale") or [None, None]
    left_out = entry.get("left_out")
    return {
        **entry,
        "scale_min": scale[0],
        "scale_max": scale[1],
        "no_human_score": left_out.get("no_human_score") if left_out else None,
    }


def _coefficient_cells(coefficient: Line) -> dict[str, object]:
    """Value, items, ratings and note as columns; what else a coefficient carries (the ICC's type and
    interval, Fleiss' raters per reply, ...) as one JSON object."""
    cells = {field: coefficient.get(field) for field in COEFFICIENT_FIELDS}
    details = {key: value for key, value in coefficient.items() if key not in COEFFICIENT_FIELDS}
    cells["details"] = json.dumps(details, ensure_ascii=False, sort_keys=True) if details else None
    return cells


def _metric_row_cells(row: MetricRow | PerSystemRow | SystemLevelRow) -> dict[str, object]:
    """A metric row (utterance, per-system or system level) with its intervals split into columns."""
    flat: dict[str, object] = dict(row)
    for interval in (
        "pearson_ci",
        "spearman_ci",
        "kendall_ci",
        "pearson_ci_bootstrap",
        "spearman_ci_bootstrap",
    ):
        low, high = _interval(flat.get(interval))
        flat[f"{interval}_low"], flat[f"{interval}_high"] = low, high
    flat.update(_judge_cells(row))
    left_out = flat.get("left_out")  # system-level rows have none
    flat["no_metric_score"] = left_out.get("no_metric_score") if isinstance(left_out, Mapping) else None
    grouped = flat.get("grouped")  # with a grouping only
    if isinstance(grouped, Mapping):
        for key, value in grouped.items():
            flat["grouping" if key == "grouping" else f"grouped_{key}"] = value
        for interval in ("pearson_ci", "spearman_ci", "kendall_ci"):
            low, high = _interval(grouped.get(interval))
            flat[f"grouped_{interval}_low"], flat[f"grouped_{interval}_high"] = low, high
        reasons = grouped.get("left_out") or {}
        flat["grouped_left_out"] = (
            "; ".join(f"{reason}: {count}" for reason, count in reasons.items()) or None
        )
    return flat


def _judge_cells(entry: Mapping[str, object]) -> dict[str, object]:
    """An LLM judge's fields as columns (stats/report/judges.py); none for any other metric."""
    judge = entry.get("judge")
    if not isinstance(judge, Mapping):
        return {}
    return {
        "judge_question": judge.get("question"),
        "judge_own_question": judge.get("own_question"),
        "label_mass": judge.get("label_mass"),
        "label_mass_replies": judge.get("label_mass_replies"),
    }


def _pairwise_judges(pairwise: PairwiseSection | None) -> list[PairwiseJudgeEntry]:
    """The pairwise judges of the section (none in documents before them)."""
    return (pairwise.get("judges") if pairwise else None) or []


def _interval(value: object) -> tuple[object, object]:
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        return value[0], value[1]
    return None, None

"""The report's tables as files: JSON (the row dicts as they are) and CSV (one file per section).

Shared by the page's download links, ``manage.py study_report`` and the reproducibility bundle, so all give
the same bytes. Every CSV goes through ``kernel.csv_cells.FormulaSafeWriter``: text cells (a question
name, a metric signature, a system or annotator name, a note) that a spreadsheet would run as a formula
get a leading ``'``; numbers are written as numbers with full precision (``repr``), so ``-0.0067`` stays a
number; a statistic the report could not compute (``None``) is an empty cell. An interval (``[low,
high]``) is two columns, ``<name>_low`` and ``<name>_high``.

The utterance-level table keeps the columns it always had, first and in order (``CSV_COLUMNS`` starts with
them; scripts read them by position), and adds the later statistics after them.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import get_args

from kernel.csv_cells import FormulaSafeWriter
from stats.report.document_types import (
    AccuracyFields,
    AgreementCoefficient,
    AgreementEntry,
    DiversitySection,
    FilterEntry,
    HumanEntry,
    MetricComparison,
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

Line = Mapping[str, object]  # one line of a CSV file: column -> value
GROUPED_COLUMNS = (
    "grouping",
    "grouped_pearson",
    "grouped_pearson_ci_low",
    "grouped_pearson_ci_high",
    "grouped_spearman",
    "grouped_spearman_ci_low",
    "grouped_spearman_ci_high",
    "grouped_kendall",
    "grouped_kendall_ci_low",
    "grouped_kendall_ci_high",
    "grouped_groups",
    "grouped_groups_total",
    "grouped_left_out",
    "grouped_note",
)

# Each coefficient with its p-value and Fisher-z interval, as two columns per interval.
_CORRELATION_COLUMNS = (
    "pearson",
    "pearson_p",
    "pearson_ci_low",
    "pearson_ci_high",
    "spearman",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
)
LEGACY_CSV_COLUMNS = ("question", "metric", "references", "signature", "n", *_CORRELATION_COLUMNS, "note")
CSV_COLUMNS = (
    *LEGACY_CSV_COLUMNS,
    "kendall",
    "kendall_p",
    "kendall_ci_low",
    "kendall_ci_high",
    "pearson_ci_bootstrap_low",
    "pearson_ci_bootstrap_high",
    "spearman_ci_bootstrap_low",
    "spearman_ci_bootstrap_high",
    "group",
    "no_metric_score",
    "implementation",
    # issue 26: the significance cluster and, with a grouping, the grouped correlation
    "rank",
    *GROUPED_COLUMNS,
    "display",  # issue 34: the metric's name as the page and every export show it (unique in the report)
)
PER_SYSTEM_COLUMNS = ("question", "system", *CSV_COLUMNS[1:])
HUMAN_COLUMNS = (
    "question",
    "label",
    "pearson",
    "pearson_p",
    "spearman",
    "spearman_p",
    "raters",
    "pearson_rater",
    "spearman_rater",
    "note",
)
COMPARISON_COLUMNS = (
    "question",
    "first",
    "first_metric",
    "second",
    "second_metric",
    "n",
    "pearson_difference",
    "williams_t",
    "williams_p",
    "bootstrap_p",
    "spearman_difference",
    "williams_p_spearman",
    "bootstrap_p_spearman",
    "metrics_pearson",
    "winner",
    "note",
    "permutation_statistic",
    "first_statistic",
    "second_statistic",
    "perm_both_p",
    "perm_both_permutations",
    "perm_inputs_p",
    "perm_inputs_permutations",
    "permutation_note",
    "first_display",
    "second_display",
)
SYSTEM_LEVEL_COLUMNS = (
    "question",
    "metric",
    "references",
    "signature",
    "group",
    "system",
    "replies",  # the replies this system's two means run over
    "human_mean",
    "metric_mean",
    "systems",  # the signature's system-level correlation, repeated on each of its systems' lines
    *_CORRELATION_COLUMNS,
    "kendall",
    "kendall_p",
    "note",
    "implementation",
    "display",
)
AGREEMENT_COEFFICIENTS: tuple[AgreementCoefficient, ...] = get_args(AgreementCoefficient)
AGREEMENT_COLUMNS = ("question", "identity", "coefficient", "value", "items", "ratings", "note", "details")
_COEFFICIENT_FIELDS = ("value", "items", "ratings", "note")
ANNOTATOR_COLUMNS = (
    "question",
    "annotator",
    "ratings",
    "included",
    "agreement_kappa",
    "pair_kappa_mean",
    "alpha_without",
    "alpha_change_without",
    "pearson_vs_rest",
    "pearson_vs_rest_p",
    "spearman_vs_rest",
    "spearman_vs_rest_p",
    "shared_replies",
)
PAIR_COLUMNS = ("question", "first", "second", "kappa", "items", "note")
FILTER_COLUMNS = (
    "question",
    "kind",
    "threshold",
    "description",
    "annotators_removed",
    "ratings_removed",
    "ratings_total",
    "normalisation",
    "normalisation_note",
    "removed_annotators",
)
QUESTION_COLUMNS = (
    "name",
    "scale_min",
    "scale_max",
    "responses",
    "human_scored",
    "ratings",
    "imported_means",
    "no_human_score",
)
SINGLE_VS_MULTI_COLUMNS = (
    "question",
    "metric",
    *(
        f"{mode}_{field}"
        for mode in ("single", "multi")
        for field in ("signature", "n", "spearman", "spearman_p", "pearson", "pearson_p")
    ),
    "display",
)
DIVERSITY_COLUMNS = ("metric", "inverted", "n", "spearman", "spearman_p", "pearson", "pearson_p", "note")
PAIRWISE_COLUMNS = ("system", "comparisons", "wins", "losses", "ties", "win_rate", "ci_low", "ci_high")
REFERENCES_CURVE_COLUMNS = (
    "question",
    "metric",
    "signature",
    "items",
    "max_references",
    "stored_multi_pearson",
    "references",
    "pearson_mean",
    "pearson_sd",
    "spearman_mean",
    "spearman_sd",
    "point_items",
    "display",
)
_ACCURACY_FIELDS = (
    "value",
    "ci_low",
    "ci_high",
    "epsilon",
    "calibrated",
    "accuracy_at_zero",
    "pairs",
    "note",
)
PAIRWISE_ACCURACY_COLUMNS = (
    "question",
    "metric",
    "references",
    "signature",
    *(f"system_{field}" for field in (*_ACCURACY_FIELDS, "systems")),
    *(f"context_{field}" for field in (*_ACCURACY_FIELDS, "groups")),  # groups: contexts averaged over
    "display",
)
MORE_RATINGS_COLUMNS = ("question", "kind", "sentence")
QUANTILE_COLUMNS = (
    "question",
    "metric",
    "signature",
    "quantile",
    "human_low",
    "human_high",
    "human_mean",
    "metric_mean",
    "items",
    "display",
)
METRIC_NAME_COLUMNS = ("display", "metric", "detail", "signature")  # the legend of the display names


def correlation_rows_as_json(rows: Sequence[MetricRow]) -> str:
    # allow_nan=False: a NaN that slipped through would make invalid JSON; fail loudly instead.
    return json.dumps(list(rows), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def correlation_rows_as_csv(rows: Sequence[MetricRow]) -> str:
    """The utterance-level table, one line per metric signature (``CSV_COLUMNS``). Rows from before the
    report document (no Kendall, no bootstrap, no group) leave those cells empty."""
    return _csv(CSV_COLUMNS, (_metric_row_cells(row) for row in rows))


def per_system_rows_as_csv(rows: Sequence[PerSystemRow]) -> str:
    """The utterance-level table per system: one line per (system, metric signature)."""
    return _csv(PER_SYSTEM_COLUMNS, (_metric_row_cells(row) for row in rows))


def human_rows_as_csv(rows: Sequence[HumanEntry]) -> str:
    """Human (Avg) and Human (Max) per question (seed 000 Table 2's inter-annotator rows)."""
    return _csv(HUMAN_COLUMNS, rows)


def metric_comparisons_as_csv(rows: Sequence[MetricComparison]) -> str:
    """One line per pair of metric signatures: Williams' test and the paired bootstrap."""
    return _csv(COMPARISON_COLUMNS, rows)


def system_level_as_csv(rows: Sequence[SystemLevelRow]) -> str:
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

    return _csv(SYSTEM_LEVEL_COLUMNS, lines())


def agreement_as_csv(sections: Sequence[AgreementEntry]) -> str:
    """The agreement coefficients of each question, one line per coefficient (value ``None``: the note
    says why it is not computable)."""
    return _csv(
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


def agreement_annotators_as_csv(sections: Sequence[AgreementEntry]) -> str:
    """One line per (question, annotator): ratings, whether they count, their agreement, alpha without
    them, and their correlation with the mean of the others."""
    return _csv(
        ANNOTATOR_COLUMNS,
        ({"question": s.get("question"), **row} for s in sections for row in s.get("annotators") or []),
    )


def agreement_pairs_as_csv(sections: Sequence[AgreementEntry]) -> str:
    """One line per (question, pair of annotators): their Cohen's kappa (the heat map's cells)."""
    return _csv(
        PAIR_COLUMNS,
        ({"question": s.get("question"), **pair} for s in sections for pair in s.get("pairs") or []),
    )


def filter_as_csv(entries: Sequence[FilterEntry]) -> str:
    """Which filter each question's human scores used and what it removed."""
    return _csv(
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


def questions_as_csv(entries: Sequence[QuestionSummary]) -> str:
    """Per question: its scale, how many replies have a human score and how many were left out."""
    return _csv(QUESTION_COLUMNS, (_question_cells(entry) for entry in entries))


def single_vs_multi_as_csv(rows: Sequence[SingleVsMultiEntry]) -> str:
    """Seed 003 Table 4: each referenced metric with one reference and with all of them."""
    return _csv(SINGLE_VS_MULTI_COLUMNS, rows)


def diversity_as_csv(diversity: DiversitySection | None) -> str:
    """Seed 003 Table 5 (header only when the study has no diversity judgments)."""
    return _csv(DIVERSITY_COLUMNS, (diversity.get("rows") if diversity else None) or [])


def pairwise_as_csv(pairwise: PairwiseSection | None) -> str:
    """The systems' win rates from pairwise judgments (stats/report/pairwise.py), best first."""
    rows = (pairwise.get("systems") if pairwise else None) or []
    return _csv(PAIRWISE_COLUMNS, ({**row, "ci_low": row["ci"][0], "ci_high": row["ci"][1]} for row in rows))


def pairwise_accuracy_as_csv(entries: Sequence[PairwiseAccuracyEntry]) -> str:
    """Pairwise accuracy per metric (issue 26): of systems (Kocmi et al.) and within contexts (acc_eq with
    tie calibration), each with its interval, epsilon and pairs."""

    def cells(level: str, fields: AccuracyFields) -> dict[str, object]:
        low, high = _interval(fields.get("ci"))
        flat: dict[str, object] = {f"{level}_{key}": value for key, value in fields.items()}
        flat[f"{level}_ci_low"], flat[f"{level}_ci_high"] = low, high
        return flat

    return _csv(
        PAIRWISE_ACCURACY_COLUMNS,
        (
            {**entry, **cells("system", entry["system"]), **cells("context", entry["context"])}
            for entry in entries
        ),
    )


def more_ratings_as_csv(entries: Sequence[MoreRatingsEntry]) -> str:
    """How many more ratings (issue 26): one line per sentence, its kind (noise, system, difference, metric,
    note)."""
    return _csv(
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


def references_curve_as_csv(curves: Sequence[ReferencesCurveEntry]) -> str:
    """Seed 003 Figure 2's data: one line per (signature, number of references)."""
    return _csv(
        REFERENCES_CURVE_COLUMNS,
        (
            {**curve, **point, "point_items": point.get("items"), "items": curve.get("items")}
            for curve in curves
            for point in curve.get("points") or []
        ),
    )


def quantiles_as_csv(entries: Sequence[QuantileEntry]) -> str:
    """Seed 000 Figure 1's data: one line per (signature, human-score group)."""
    return _csv(
        QUANTILE_COLUMNS,
        (
            {**entry, **group, "quantile": index}
            for entry in entries
            for index, group in enumerate(entry.get("groups") or [], start=1)
        ),
    )


def report_tables_csv(document: ReportDocument) -> dict[str, str]:
    """Every table of a report document as CSV: table name (a file stem) -> CSV text. Every table is
    there (header only when empty), except ``diversity`` and ``pairwise``, only when the study has such
    judgments."""
    agreement = document.get("agreement") or []
    tables = {
        "questions": questions_as_csv(document.get("questions") or []),
        "filter": filter_as_csv(document.get("filter") or []),
        "human": human_rows_as_csv(document.get("human") or []),
        "correlations": correlation_rows_as_csv(document.get("rows") or []),
        "per_system": per_system_rows_as_csv(document.get("per_system") or []),
        "metric_comparisons": metric_comparisons_as_csv(document.get("metric_comparisons") or []),
        "system_level": system_level_as_csv(document.get("system_level") or []),
        "agreement": agreement_as_csv(agreement),
        "agreement_annotators": agreement_annotators_as_csv(agreement),
        "agreement_pairs": agreement_pairs_as_csv(agreement),
        "single_vs_multi": single_vs_multi_as_csv(document.get("single_vs_multi") or []),
        "references_curve": references_curve_as_csv(document.get("references_curve") or []),
        "quantiles": quantiles_as_csv(document.get("quantiles") or []),
    }
    if "pairwise_accuracy" in document:  # issue 26's sections, in documents from it on
        tables["pairwise_accuracy"] = pairwise_accuracy_as_csv(document["pairwise_accuracy"])
    if "more_ratings" in document:
        tables["more_ratings"] = more_ratings_as_csv(document["more_ratings"])
    if "metric_names" in document:  # issue 34
        tables["metric_names"] = _csv(METRIC_NAME_COLUMNS, document["metric_names"])
    diversity, pairwise = document.get("diversity"), document.get("pairwise")
    if diversity:
        tables["diversity"] = diversity_as_csv(diversity)
    if pairwise:
        tables["pairwise"] = pairwise_as_csv(pairwise)
    return tables


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
    cells = {field: coefficient.get(field) for field in _COEFFICIENT_FIELDS}
    details = {key: value for key, value in coefficient.items() if key not in _COEFFICIENT_FIELDS}
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
    left_out = flat.get("left_out")  # system-level rows have none
    flat["no_metric_score"] = left_out.get("no_metric_score") if isinstance(left_out, Mapping) else None
    grouped = flat.get("grouped")  # issue 26, with a grouping only
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


def _interval(value: object) -> tuple[object, object]:
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        return value[0], value[1]
    return None, None


def _csv(columns: Sequence[str], rows: Iterable[Line]) -> str:
    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(_cell(row.get(column)) for column in columns)
    return buffer.getvalue()


def _cell(value: object) -> object:
    """None (and a NaN that slipped through) as an empty cell; a NumPy number as the Python number it
    is (the csv module writes a float with ``repr``: every digit); everything else as it is."""
    if value is None:
        return ""
    if isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else ""
    if hasattr(value, "item"):  # a NumPy scalar
        return _cell(value.item())
    return value

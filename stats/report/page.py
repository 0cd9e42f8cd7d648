"""One question's slice of a report document, shaped for the report page (no Django here).

The document holds every question; the page shows one at a time, with the human rows above the metric
rows and the metric rows in the paper's blocks (Tao et al., 2018, Table 2: Referenced, Unreferenced, the blends).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict, TypeVar

from stats.report.document_types import (
    AgreementEntry,
    DiversitySection,
    FilterEntry,
    HumanEntry,
    MetricComparison,
    MetricNameEntry,
    MetricRow,
    MoreRatingsEntry,
    PairwiseAccuracyEntry,
    PerSystemRow,
    QuestionSummary,
    ReferencesCurveEntry,
    ReportDocument,
    SignificanceClusterEntry,
    SingleVsMultiEntry,
    SystemLevelRow,
)
from stats.report.types import GROUP_ORDER

Entry = TypeVar("Entry", bound=Mapping[str, object])


class QuestionSlice(TypedDict):
    """What the report page's template reads as ``report`` (templates/correlation/report*.html)."""

    summary: QuestionSummary | None
    filter: FilterEntry | None
    human: list[HumanEntry]
    rows: list[MetricRow]
    blocks: list[tuple[str, list[MetricRow]]]  # the rows by group, in the paper's block order
    per_system: list[PerSystemRow]
    comparisons: list[MetricComparison]
    system_level: list[SystemLevelRow]
    references_curve: list[ReferencesCurveEntry]
    single_vs_multi: list[SingleVsMultiEntry]
    agreement: AgreementEntry | None
    diversity: DiversitySection | None
    notes: list[str]
    grouping: str | None  # the grouped columns' grouping (context, system); None: no grouped columns
    pairwise_accuracy: list[PairwiseAccuracyEntry]  # empty in documents from before it
    clusters: SignificanceClusterEntry | None
    more_ratings: list[MoreRatingsEntry]  # the question's plan (none in older documents)
    metric_names: list[MetricNameEntry]  # the legend of the display names (empty before it)


def question_slice(document: ReportDocument, question: str) -> QuestionSlice:
    """Every section of ``document`` restricted to ``question`` (``None`` where the section has no entry)."""

    def of(entries: Sequence[Entry] | None) -> list[Entry]:
        return [entry for entry in entries or [] if entry.get("question") == question]

    rows = of(document.get("rows"))
    summary = next((entry for entry in document.get("questions", []) if entry["name"] == question), None)
    filters = of(document.get("filter"))
    agreements = of(document.get("agreement"))
    clusters = of(document.get("significance_clusters"))
    return {
        "summary": summary,
        "filter": filters[0] if filters else None,
        "human": of(document.get("human")),
        "rows": rows,
        "blocks": _blocks(rows),
        "per_system": of(document.get("per_system")),
        "comparisons": of(document.get("metric_comparisons")),
        "system_level": of(document.get("system_level")),
        "references_curve": of(document.get("references_curve")),
        "single_vs_multi": of(document.get("single_vs_multi")),
        "agreement": agreements[0] if agreements else None,
        "diversity": document.get("diversity"),
        "notes": document.get("notes") or [],
        "grouping": _grouping(document),
        "pairwise_accuracy": of(document.get("pairwise_accuracy")),
        "clusters": clusters[0] if clusters else None,
        "more_ratings": of(document.get("more_ratings")),
        "metric_names": _shown(document.get("metric_names") or [], rows),
    }


def _shown(names: list[MetricNameEntry], rows: list[MetricRow]) -> list[MetricNameEntry]:
    """The legend's entries of the question's metrics, in the order of its rows."""
    by_signature = {entry["signature"]: entry for entry in names}
    return [by_signature[row["signature"]] for row in rows if row["signature"] in by_signature]


def _grouping(document: ReportDocument) -> str | None:
    grouping = document.get("options", {}).get("grouping", "none")
    return None if grouping == "none" else grouping


def _blocks(rows: list[MetricRow]) -> list[tuple[str, list[MetricRow]]]:
    grouped: dict[str, list[MetricRow]] = {}
    for row in rows:
        grouped.setdefault(row.get("group") or "Other", []).append(row)
    ordered = [group for group in GROUP_ORDER if group in grouped]
    ordered += sorted(group for group in grouped if group not in GROUP_ORDER)
    return [(group, grouped[group]) for group in ordered]

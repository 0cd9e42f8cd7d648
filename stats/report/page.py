"""One question's slice of a report document, shaped for the report page (no Django here).

The document holds every question; the page shows one at a time, with the human rows above the metric
rows and the metric rows in the paper's blocks (seed 000 Table 2: Referenced, Unreferenced, the blends).
"""

from __future__ import annotations

from typing import Any

GROUP_ORDER = ("Referenced", "Unreferenced", "Hybrid", "Other")


def question_slice(document: dict[str, Any], question: str) -> dict[str, Any]:
    """Every section of ``document`` restricted to ``question`` (``None`` where the section has no entry)."""

    def of(section: str) -> list[dict[str, Any]]:
        return [entry for entry in document.get(section) or [] if entry.get("question") == question]

    rows = of("rows")
    summary = next((entry for entry in document.get("questions", []) if entry["name"] == question), None)
    filters = of("filter")
    agreements = of("agreement")
    return {
        "summary": summary,
        "filter": filters[0] if filters else None,
        "human": of("human"),
        "rows": rows,
        "blocks": _blocks(rows),
        "per_system": of("per_system"),
        "comparisons": of("metric_comparisons"),
        "system_level": of("system_level"),
        "references_curve": of("references_curve"),
        "single_vs_multi": of("single_vs_multi"),
        "agreement": agreements[0] if agreements else None,
        "diversity": document.get("diversity"),
        "notes": document.get("notes") or [],
    }


def _blocks(rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row.get("group") or "Other", []).append(row)
    ordered = [group for group in GROUP_ORDER if group in grouped]
    ordered += sorted(group for group in grouped if group not in GROUP_ORDER)
    return [(group, grouped[group]) for group in ordered]

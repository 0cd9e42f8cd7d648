"""Views of a report document: one question's entries, in the shape the API and ``study_report`` give."""

from __future__ import annotations

import json
from typing import Any

QUESTION_SECTIONS = (
    "questions",
    "filter",
    "human",
    "agreement",
    "rows",
    "per_system",
    "metric_comparisons",
    "system_level",
    "quantiles",
    "references_curve",
    "single_vs_multi",
)


def document_for_question(document: dict[str, Any], question: str | None) -> dict[str, Any]:
    """The document with ``question`` set, its question-tagged sections limited to that question when
    one is named (the question summary is tagged by ``name``)."""
    result = dict(document)
    result["question"] = question
    if question is None:
        return result
    for section in QUESTION_SECTIONS:
        key = "name" if section == "questions" else "question"
        result[section] = [entry for entry in document.get(section) or [] if entry.get(key) == question]
    return result


def document_as_json(document: dict[str, Any]) -> str:
    """The document as indented UTF-8 JSON; a NaN that slipped through fails loudly (it is not JSON)."""
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"

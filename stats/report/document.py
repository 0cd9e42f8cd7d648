"""Views of a report document: one question's entries, in the shape the API and ``study_report`` give;
the document as JSON, and back."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TypeVar, cast

from stats.report.document_types import QuestionDocument, ReportDocument

Entry = TypeVar("Entry", bound=Mapping[str, object])


def report_document_from_json(value: object) -> ReportDocument:
    """A report document read back from JSON (a stored snapshot's ``document``): the one place where stored
    JSON becomes a :class:`ReportDocument`. The builder wrote it, under a cache key that names the document
    version and the code version, so it is taken as it is; what is checked is that there is one."""
    if not isinstance(value, dict):
        raise ValueError(f"a report document is a JSON object, not {type(value).__name__} ({value!r:.80})")
    return cast(ReportDocument, value)


def document_for_question(document: ReportDocument, question: str | None) -> QuestionDocument:
    """The document with ``question`` set, its question-tagged sections limited to that question when
    one is named (the question summary is tagged by ``name``)."""
    result: QuestionDocument = {**document, "question": question}
    if question is None:
        return result
    result["questions"] = [
        entry for entry in document.get("questions") or [] if entry.get("name") == question
    ]
    result["filter"] = _of_question(document.get("filter"), question)
    result["human"] = _of_question(document.get("human"), question)
    result["agreement"] = _of_question(document.get("agreement"), question)
    result["rows"] = _of_question(document.get("rows"), question)
    result["per_system"] = _of_question(document.get("per_system"), question)
    result["metric_comparisons"] = _of_question(document.get("metric_comparisons"), question)
    result["system_level"] = _of_question(document.get("system_level"), question)
    result["quantiles"] = _of_question(document.get("quantiles"), question)
    result["references_curve"] = _of_question(document.get("references_curve"), question)
    result["single_vs_multi"] = _of_question(document.get("single_vs_multi"), question)
    if "pairwise_accuracy" in document:  # the meta-evaluation's sections, in documents that have them
        result["pairwise_accuracy"] = _of_question(document["pairwise_accuracy"], question)
    if "significance_clusters" in document:
        result["significance_clusters"] = _of_question(document["significance_clusters"], question)
    if "more_ratings" in document:
        result["more_ratings"] = _of_question(document["more_ratings"], question)
    return result


def document_as_json(document: ReportDocument) -> str:
    """The document as indented UTF-8 JSON; a NaN that slipped through fails loudly (it is not JSON)."""
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _of_question(entries: Sequence[Entry] | None, question: str) -> list[Entry]:
    return [entry for entry in entries or [] if entry.get("question") == question]

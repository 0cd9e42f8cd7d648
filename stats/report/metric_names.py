"""The report's display names: every entry that names a metric gets its display name
(stats/display_names.py), computed once over every signature of the study, and the document gets their legend
(``metric_names``). The page, the figures, the exports and LaTeX read ``display`` (old documents: the metric's
name).

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from stats.display_names import DisplayName, display_names
from stats.report.document_types import MetricNameEntry, ReportDocument
from stats.report.types import PairwiseJudgeInputs, ReportInputs, SignatureInputs, UnvaluedMetric


def study_display_names(inputs: ReportInputs) -> dict[str, DisplayName]:
    """Every signature of the study, valued or not, and its pairwise judges': one display name each, unique
    among them."""
    return signatures_display_names(inputs.signatures, inputs.unvalued, inputs.pairwise_judges)


def signatures_display_names(
    signatures: Iterable[SignatureInputs],
    unvalued: Iterable[UnvaluedMetric] = (),
    pairwise_judges: Iterable[PairwiseJudgeInputs] = (),
) -> dict[str, DisplayName]:
    """The display names of a report's signatures (those with values, then those without, then the
    pairwise judges'), as its ``metric_names``: what the loading of a report's inputs names metrics by in
    its notes, too."""
    metrics = {signature.text: signature.name for signature in signatures}
    metrics.update((metric.text, metric.name) for metric in unvalued if metric.text not in metrics)
    metrics.update((judge.text, judge.name) for judge in pairwise_judges if judge.text not in metrics)
    return display_names(metrics)


def name_metrics(document: ReportDocument, names: Mapping[str, DisplayName]) -> None:
    """Writes ``display`` (and ``first_display`` ...) beside every signature of ``document`` and the legend."""

    def text(signature: str) -> str:
        name = names.get(signature)
        return name.text if name is not None else signature

    for row in document["rows"]:
        row["display"] = text(row["signature"])
    for system_row in document["per_system"]:
        system_row["display"] = text(system_row["signature"])
    for level in document["system_level"]:
        level["display"] = text(level["signature"])
    for quantile in document["quantiles"]:
        quantile["display"] = text(quantile["signature"])
    for curve in document["references_curve"]:
        curve["display"] = text(curve["signature"])
    for accuracy in document.get("pairwise_accuracy") or []:
        accuracy["display"] = text(accuracy["signature"])
    for comparison in document["metric_comparisons"]:
        comparison["first_display"] = text(comparison["first"])
        comparison["second_display"] = text(comparison["second"])
    for pair in document["single_vs_multi"]:
        pair["single_display"] = text(pair["single_signature"])
        pair["multi_display"] = text(pair["multi_signature"])
        pair["display"] = _pair_name(names.get(pair["single_signature"]), pair["metric"])
    _unique_pairs(document)
    for clusters in document.get("significance_clusters") or []:
        clusters["order_display"] = [text(signature) for signature in clusters["order"]]
    pairwise = document.get("pairwise")
    if pairwise is not None:
        for agreement in pairwise["metrics"]:
            agreement["display"] = text(agreement["signature"])
        for judge in pairwise.get("judges") or []:
            judge["display"] = text(judge["signature"])
    legend: list[MetricNameEntry] = [
        {"signature": signature, "metric": name.name, "detail": name.detail, "display": name.text}
        for signature, name in names.items()
    ]
    document["metric_names"] = legend


def _pair_name(single: DisplayName | None, metric: str) -> str:
    """A single-vs-multi row's name: the single signature's without the reference mode the row is about."""
    if single is None:
        return metric
    parts = [part for part in single.detail.split(", ") if part and part not in ("single", "multi")]
    return DisplayName(single.name, ", ".join(parts)).text


def _unique_pairs(document: ReportDocument) -> None:
    """Two rows of one question that still read the same show both signatures' names."""
    seen: dict[tuple[str, str], int] = {}
    for pair in document["single_vs_multi"]:
        key = (pair["question"], pair.get("display", ""))
        seen[key] = seen.get(key, 0) + 1
    for pair in document["single_vs_multi"]:
        if seen[(pair["question"], pair.get("display", ""))] > 1:
            pair["display"] = f"{pair.get('single_display', '')} / {pair.get('multi_display', '')}"


def display_of(entry: Mapping[str, object], key: str = "display", fallback: str = "metric") -> str:
    """An entry's display name, or its metric's name in a document from before display names."""
    value = entry.get(key)
    return str(value) if value else str(entry.get(fallback, ""))

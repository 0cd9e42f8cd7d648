"""The ``inputs/`` files of the reproducibility bundle and the counts the bundle states about them.

The counts are taken from the rows written, so the manifest and the README say exactly what the files
hold. Replies the researcher excluded by adjudication (annotation.models.Adjudication) are left
out of every part of the report (stats/report/adjudication.py); here they stay in the per-rating and
per-metric-value files, marked ``excluded=true`` and, for ratings, ``counted=false``, so nothing is
silently hidden and a reader who drops the marked rows has what the report used. A rating counts when the
report used it: its reply is not excluded, its value is within the question's scale (only old imports can
break this) and the rater filter kept its rater (the report's ``filter`` section names who it removed).
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass
from typing import Any

from annotation.models import Rating, Response, Study
from correlation.report.loading import study_adjudications
from correlation.selectors import study_metric_signatures
from kernel.csv_cells import FormulaSafeWriter
from scoring.models import MetricScore
from stats.report.document_types import ReportDocument
from stats.report.plot_types import ReportPlots


class BundleStale(Exception):
    """The study's data changed after the report was computed: its inputs are no longer the report's."""


@dataclass(frozen=True)
class BundleInputs:
    files: dict[str, str]  # path in the zip -> CSV text
    counts: dict[str, Any]  # what the manifest and the README state


def bundle_inputs(
    *, study: Study, data_version: int, document: ReportDocument, plots: ReportPlots
) -> BundleInputs:
    """The input files of the report ``document`` of ``study`` computed at ``data_version``.

    Ratings, metric values and adjudications are read now, so they are the report's only while the study's
    data version is the report's; otherwise :class:`BundleStale` (the page never offers such a bundle, and
    ``study_report --bundle`` computes the report first)."""
    current = Study.objects.filter(pk=study.pk).values_list("data_version", flat=True).get()
    if current != data_version:
        raise BundleStale(
            f"the data of study {study.name!r} changed after this report was computed (report of data "
            f"version {data_version}, now {current}): compute the report again, then the bundle"
        )
    excluded = study_adjudications(study=study).excluded
    ratings, rating_counts = _ratings_csv(study, document, excluded)
    metrics, metric_counts = _metric_scores_csv(study, excluded)
    replies = Response.objects.filter(context__study=study).count()
    counts = {
        "replies": {
            "in_study": replies,
            "excluded_by_researcher": len(excluded),
            "in_report": replies - len(excluded),
        },
        **rating_counts,
        "metric_scores": metric_counts,
    }
    return BundleInputs(
        files={
            "inputs/human_scores.csv": _human_scores_csv(plots),
            "inputs/metric_scores.csv": metrics,
            "inputs/ratings.csv": ratings,
        },
        counts=counts,
    )


def counts_text(counts: dict[str, Any]) -> str:
    """The counts in words, for the README."""
    replies, ratings, annotators = counts["replies"], counts["ratings"], counts["annotators"]
    metrics = counts["metric_scores"]
    return (
        f"replies: {replies['in_study']} in the study, {replies['excluded_by_researcher']} excluded by the "
        f"researcher (adjudication)\n"
        f"         and left out of every part of the report, {replies['in_report']} in the report\n"
        f"ratings: {ratings['in_file']} in inputs/ratings.csv, {ratings['counted']} counted by the report;\n"
        f"         not counted: {ratings['excluded_by_researcher']} of excluded replies (excluded=true),\n"
        f"         {ratings['left_out_by_rater_filter']} left out by the rater filter, "
        f"{ratings['outside_scale']} outside the question's scale\n"
        f"annotators: {annotators['with_ratings']} with ratings, {annotators['with_counted_ratings']} with "
        f"ratings the report counted\n"
        f"metric values: {metrics['in_file']} in inputs/metric_scores.csv, "
        f"{metrics['excluded_by_researcher']} of excluded replies (excluded=true)\n"
    )


def _human_scores_csv(plots: ReportPlots) -> str:
    """The human score of every reply the report scored (excluded replies have none: never computed)."""
    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator="\n")
    writer.writerow(["question", "response_id", "system", "human_score"])
    for question, data in sorted((plots.get("questions") or {}).items()):
        items = data.get("items") or {}
        systems = data.get("systems") or []
        for response_id, system, human in zip(
            items.get("id", []),
            items.get("system", []),
            items.get("human_exact", items.get("human", [])),
            strict=True,
        ):
            writer.writerow([question, response_id, systems[system], human])
    return buffer.getvalue()


def _metric_scores_csv(study: Study, excluded: frozenset[int]) -> tuple[str, dict[str, int]]:
    rows_of_signatures = study_metric_signatures(study=study)
    signatures = {signature.pk: signature.text for signature in rows_of_signatures}
    implementations = {signature.pk: signature.implementation for signature in rows_of_signatures}
    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator="\n")
    writer.writerow(["signature", "response_id", "value", "excluded", "implementation"])
    rows = (
        MetricScore.objects.filter(response__context__study=study)
        .order_by("signature_id", "response_id")
        .values_list("signature_id", "response_id", "value")
    )
    written = left_out = 0
    for signature_id, response_id, value in rows:
        is_excluded = response_id in excluded
        writer.writerow(
            [signatures[signature_id], response_id, value, _flag(is_excluded), implementations[signature_id]]
        )
        written += 1
        left_out += is_excluded
    return buffer.getvalue(), {"in_file": written, "excluded_by_researcher": left_out}


def _ratings_csv(
    study: Study, document: ReportDocument, excluded: frozenset[int]
) -> tuple[str, dict[str, Any]]:
    removed = {
        (entry["question"], removed["annotator"])
        for entry in document.get("filter") or []
        for removed in entry.get("removed") or []
    }
    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator="\n")
    writer.writerow(
        ["question", "annotator", "identity_known", "counted", "response_id", "value", "excluded"]
    )
    rows = (
        Rating.objects.filter(question__study=study)
        .order_by("question__position", "question_id", "annotator_id", "response_id")
        .values_list(
            "question__name",
            "question__scale_min",
            "question__scale_max",
            "annotator__pseudonym",
            "annotator__identity_known",
            "response_id",
            "value",
        )
    )
    per_question: dict[str, Counter[str]] = {}
    raters: set[str] = set()
    counted_raters: set[str] = set()
    for question, scale_min, scale_max, pseudonym, identity_known, response_id, value in rows:
        if response_id in excluded:
            outcome = "excluded_by_researcher"
        elif not scale_min <= value <= scale_max:
            outcome = "outside_scale"
        elif (question, pseudonym) in removed:
            outcome = "left_out_by_rater_filter"
        else:
            outcome = "counted"
            counted_raters.add(pseudonym)
        raters.add(pseudonym)
        tally = per_question.setdefault(question, Counter())
        tally["in_file"] += 1
        tally[outcome] += 1
        writer.writerow(
            [
                question,
                pseudonym,
                _flag(identity_known),
                _flag(outcome == "counted"),
                response_id,
                value,
                _flag(outcome == "excluded_by_researcher"),
            ]
        )
    keys = ("in_file", "counted", "excluded_by_researcher", "left_out_by_rater_filter", "outside_scale")
    questions: list[dict[str, Any]] = [
        {"question": name, **{key: tally[key] for key in keys}} for name, tally in per_question.items()
    ]
    counts = {
        "ratings": {key: sum(entry[key] for entry in questions) for key in keys},
        "ratings_per_question": questions,
        "annotators": {"with_ratings": len(raters), "with_counted_ratings": len(counted_raters)},
    }
    return buffer.getvalue(), counts


def _flag(value: bool) -> str:
    return "true" if value else "false"

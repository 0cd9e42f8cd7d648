"""The correlation report of a study as one JSON-ready document, from :class:`ReportInputs`.

The document is what the page renders, the REST API returns, ``study_report --format json`` prints and
the exports (CSV, LaTeX, the reproducibility bundle) are written from. Its sections, each a list of
entries tagged with their question:

* ``rows``: every metric against the human score (stats/report/metrics.py), imported ones marked
  external and metrics without values with their reason; ``per_system``, ``metric_comparisons``,
  ``system_level``, ``quantiles``;
* ``human``: the Human (Avg) and Human (Max) rows (Tao et al., 2018, Table 2), ``agreement`` and ``filter``
  (stats/report/human.py);
* ``references_curve`` (Gupta et al., 2019, Figure 2) and ``single_vs_multi`` (Gupta et al., 2019, Table 4);
* ``diversity`` (Gupta et al., 2019, Table 5), when diversity judgments exist;
* ``pairwise``: system win rates from pairwise judgments, when there are some
  (stats/report/pairwise.py), with each pairwise LLM judge's beside them (stats/report/pairwise_judges.py);
* the meta-evaluation statistics (stats/report/meta.py): a ``rank`` (significance cluster) and, with a
  grouping, a ``grouped`` correlation in every metric row; permutation p-values in every comparison;
  ``pairwise_accuracy``, ``significance_clusters`` and ``more_ratings``;
* LLM judges as metrics, each row and legend entry of a judge with the question it asked and its model's
  mean mass on the scale's labels (stats/report/judges.py);
* ``questions``: per question, how many replies have a human score, how many were left out and why (no
  human score; excluded by the researcher), and how many carry an adjudicated gold value.

The data behind the figures goes into a second, larger object (``plots``), served separately.

numpy's BLAS (OpenBLAS) runs with ``blas_threads`` threads while a report is built, 1 by default. The report's
matrix products are narrow (20 resamples of 100,000 replies at a time), and OpenBLAS threads that wait for work
spin: with 2 threads, the report of 100,000 replies costs 1.24x the CPU of 1 thread for 0.94x the wall time
on the 2 cores of the python machine kind (medians, interleaved; docs/benchmarks.md, Reports, the
meta-evaluation's third round). A report is one task of a worker beside others, so CPU is what it spends;
``settings.DIALEVAL_REPORT_BLAS_THREADS`` gives a worker more. One thread also keeps a report's last bits from
depending on how many cores there are.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits

from stats.correlations import pearson_with_ci, spearman_with_ci
from stats.curves import ReferenceCountPoint, reference_count_curve
from stats.human_ceiling import HumanRow
from stats.report.document_types import (
    DiversityRow,
    DiversitySection,
    HumanEntry,
    MetricRow,
    QuestionLeftOut,
    QuestionSummary,
    ReferencePointEntry,
    ReferencesCurveEntry,
    ReportDocument,
    SingleVsMultiEntry,
)
from stats.report.human import human_side
from stats.report.judges import add_judges, judge_fields
from stats.report.meta import add_to_metric_section, meta_section
from stats.report.metric_names import name_metrics, study_display_names
from stats.report.metrics import metric_section
from stats.report.pairwise import pairwise_section
from stats.report.pairwise_judges import add_pairwise_judges
from stats.report.plot_types import ReportPlots
from stats.report.types import QuestionInputs, ReportInputs, ReportOptions

Progress = Callable[[int, int], None]
# bump when a field changes meaning or the document's shape changes; fields are added, never renamed (5: LLM
# judges' ``judge`` fields, their mass on labels no longer a metric row; 6: the pairwise judges, ``judges``
# in the pairwise section)
DOCUMENT_VERSION = 6
BLAS_THREADS = 1  # numpy's BLAS threads while a report is built (see the module's docstring)


def build_report(
    inputs: ReportInputs,
    options: ReportOptions,
    progress: Progress | None = None,
    *,
    blas_threads: int = BLAS_THREADS,
) -> tuple[ReportDocument, ReportPlots]:
    """(document, plots) for every question of the study (the document's shape:
    stats/report/document_types.py), with numpy's BLAS limited to ``blas_threads`` threads."""
    if blas_threads < 1:
        raise ValueError(f"a report needs at least 1 BLAS thread, not {blas_threads}")
    with threadpool_limits(limits=blas_threads, user_api="blas"):
        return _build_report(inputs, options, progress)


def _build_report(
    inputs: ReportInputs, options: ReportOptions, progress: Progress | None
) -> tuple[ReportDocument, ReportPlots]:
    total = len(inputs.questions) * 4 + 2
    done = 0

    def advance(steps: int = 1) -> None:
        nonlocal done
        done += steps
        if progress is not None:
            progress(min(done, total), total)

    document: ReportDocument = {
        "document_version": DOCUMENT_VERSION,
        "study": inputs.study_id,
        "study_name": inputs.study_name,
        "data_version": inputs.data_version,
        "code_version": inputs.code_version,
        "options": options.as_dict(),
        "questions": [],
        "filter": [],
        "human": [],
        "agreement": [],
        "rows": [],
        "per_system": [],
        "metric_comparisons": [],
        "system_level": [],
        "quantiles": [],
        "references_curve": [],
        "single_vs_multi": [],
        "diversity": None,
        "pairwise": None,
        "notes": list(inputs.reference_notes),
        "pairwise_accuracy": [],
        "significance_clusters": [],
        "more_ratings": [],
    }
    plots: ReportPlots = {"questions": {}}
    for question in inputs.questions:
        side = human_side(question, inputs.annotators, options, inputs.study_threshold)
        advance()
        metrics = metric_section(question.name, side.scores, inputs, options)
        advance(2)
        meta = meta_section(question, side.scores, inputs, options, metrics, side.counted)  # report/meta.py
        add_to_metric_section(metrics, meta)
        advance()
        document["questions"].append(_question_summary(question, side.scores, inputs))
        document["filter"].append(side.filter)
        document["human"].extend(_human_row(question.name, row) for row in side.human_rows)
        document["agreement"].append(side.agreement)
        document["rows"].extend(metrics.rows)
        document["per_system"].extend(metrics.per_system)
        document["metric_comparisons"].extend(metrics.comparisons)
        document["system_level"].extend(metrics.system_level)
        document["quantiles"].extend(metrics.quantiles)
        document["references_curve"].extend(_reference_curves(question.name, side.scores, inputs))
        document["single_vs_multi"].extend(_single_vs_multi(question.name, metrics.rows, inputs))
        document["pairwise_accuracy"].extend(meta.accuracy)
        document["significance_clusters"].append(meta.clusters)
        document["more_ratings"].append(meta.more_ratings)
        plots["questions"][question.name] = {**metrics.plots, **side.plots}
    advance()
    document["diversity"] = _diversity_table(inputs)
    document["pairwise"] = pairwise_section(inputs, options)  # stats/report/pairwise.py
    add_pairwise_judges(document["pairwise"], inputs, options)  # stats/report/pairwise_judges.py
    name_metrics(document, study_display_names(inputs))  # stats/report/metric_names.py
    add_judges(document, judge_fields(inputs))  # stats/report/judges.py
    advance()
    return document, plots


def _question_summary(
    question: QuestionInputs, scores: dict[int, float], inputs: ReportInputs
) -> QuestionSummary:
    """Counts of one question; ``responses`` counts every reply of the study, the ones the researcher
    excluded too, which ``left_out`` then names (the key is there only when there are some)."""
    left_out: QuestionLeftOut = {"no_human_score": len(inputs.responses) - len(scores)}
    if inputs.excluded_responses:
        left_out["excluded_by_researcher"] = len(inputs.excluded_responses)
    return {
        "name": question.name,
        "scale": [question.scale_min, question.scale_max],
        "responses": len(inputs.responses) + len(inputs.excluded_responses),
        "human_scored": len(scores),
        "ratings": len(question.ratings),
        "imported_means": len(question.imported_means),
        "gold_values": len(question.gold),
        "left_out": left_out,
    }


def _human_row(question: str, row: HumanRow) -> HumanEntry:
    return {
        "question": question,
        "label": row.label,
        "pearson": row.pearson,
        "pearson_p": row.pearson_p,
        "spearman": row.spearman,
        "spearman_p": row.spearman_p,
        "raters": row.raters,
        "pearson_rater": row.pearson_rater,
        "spearman_rater": row.spearman_rater,
        "note": row.note,
    }


def _reference_curves(
    question: str, human: dict[int, float], inputs: ReportInputs
) -> list[ReferencesCurveEntry]:
    curves: list[ReferencesCurveEntry] = []
    by_id = {signature.id: signature for signature in inputs.signatures}
    for entry in inputs.reference_scores:
        signature = by_id.get(entry.signature_id)
        items = [item for item in sorted(human) if item in entry.scores]
        if signature is None or len(items) < 3 or entry.width < 2:
            continue
        matrix = np.full((len(items), entry.width), np.nan)
        for row, item in enumerate(items):
            scores = entry.scores[item]
            matrix[row, : len(scores)] = scores
        x = np.array([human[item] for item in items])
        points = reference_count_curve(x, matrix)
        stored = [inputs.metric_values.get(signature.id, {}).get(item) for item in items]
        stored_pairs = [(h, v) for h, v in zip(x, stored, strict=True) if v is not None and math.isfinite(v)]
        stored_pearson = pearson_with_ci(
            [h for h, _ in stored_pairs], [v for _, v in stored_pairs]
        ).coefficient
        curves.append(
            {
                "question": question,
                "signature": signature.text,
                "metric": signature.name,
                "items": len(items),
                "max_references": entry.width,
                "stored_multi_pearson": stored_pearson,
                "points": [_reference_point(point) for point in points],
            }
        )
    return curves


def _reference_point(point: ReferenceCountPoint) -> ReferencePointEntry:
    return {
        "references": point.references,
        "pearson_mean": point.pearson_mean,
        "pearson_sd": point.pearson_sd,
        "spearman_mean": point.spearman_mean,
        "spearman_sd": point.spearman_sd,
        "items": point.items,
    }


def _single_vs_multi(question: str, rows: list[MetricRow], inputs: ReportInputs) -> list[SingleVsMultiEntry]:
    """Gupta et al. (2019) Table 4: each referenced metric with one reference and with all of them, side by side."""
    by_text = {signature.text: signature for signature in inputs.signatures}
    paired: dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, MetricRow]] = {}
    for row in rows:
        signature = by_text.get(row["signature"])  # None: a metric with no values (no statistics to pair)
        if signature is None or signature.references not in ("single", "multi"):
            continue
        rest = tuple(sorted((k, v) for k, v in signature.parameters.items() if k not in ("refs", "refagg")))
        paired.setdefault((signature.name, rest), {})[signature.references] = row
    table: list[SingleVsMultiEntry] = []
    for (metric, _), modes in sorted(paired.items()):
        if "single" not in modes or "multi" not in modes:
            continue
        single, multi = modes["single"], modes["multi"]
        table.append(
            {
                "question": question,
                "metric": metric,
                "single_signature": single["signature"],
                "single_n": single["n"],
                "single_spearman": single["spearman"],
                "single_spearman_p": single["spearman_p"],
                "single_pearson": single["pearson"],
                "single_pearson_p": single["pearson_p"],
                "multi_signature": multi["signature"],
                "multi_n": multi["n"],
                "multi_spearman": multi["spearman"],
                "multi_spearman_p": multi["spearman_p"],
                "multi_pearson": multi["pearson"],
                "multi_pearson_p": multi["pearson_p"],
            }
        )
    return table


def _diversity_table(inputs: ReportInputs) -> DiversitySection | None:
    """Gupta et al. (2019) Table 5: diversity metrics against the raters' diversity scores, per (system, context)."""
    diversity = inputs.diversity
    if diversity is None or not diversity.human:
        return None
    keys = sorted(diversity.human)
    human = {key: math.fsum(values) / len(values) for key, values in diversity.human.items() if values}
    rows: list[DiversityRow] = []
    for name, values in sorted(diversity.metrics.items()):
        pairs = [(human[key], values[key]) for key in keys if key in human and key in values]
        x = [pair[0] for pair in pairs]
        y = [1.0 - pair[1] if name in diversity.inverted else pair[1] for pair in pairs]
        spearman, pearson = spearman_with_ci(x, y), pearson_with_ci(x, y)
        rows.append(
            {
                "metric": name,
                "inverted": name in diversity.inverted,
                "n": len(pairs),
                "spearman": spearman.coefficient,
                "spearman_p": spearman.p_value,
                "pearson": pearson.coefficient,
                "pearson_p": pearson.p_value,
                "note": spearman.note or pearson.note,
            }
        )
    judgments = sum(len(values) for values in diversity.human.values())
    return {
        "pairs": len(human),
        "judgments": judgments,
        "human_score": "mean number of different meanings among the appropriate replies, over raters",
        "rows": rows,
    }

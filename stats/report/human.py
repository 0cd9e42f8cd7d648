"""The human half of a report, for one question: which ratings count, the human score of each reply, how
much the raters agree, and how close one rater comes to the others.

* The filter (Gupta et al., 2019, section 5.1.1): raters whose agreement with the others (the weighted kappa of
  annotation/selectors/quality.py) is under the threshold are left out, as are raters the researcher
  excluded; raters the researcher included always count. Raters of unknown identity have no agreement of
  their own and are only left out by an explicit choice. The section says which filter it used and what
  it removed.
* The human score of a reply: the mean of the ratings that count (optionally of each rater's z-scores,
  :func:`stats.human_ceiling.z_normalised`); an imported mean only where no rating counts; the
  researcher's adjudicated gold value, where there is one, instead of either
  (stats/report/adjudication.py).
* Agreement (stats/agreement_coefficients.py) over the ratings that count, plus alpha before the
  filter, so the effect of the filter shows.
* Human (Avg)/(Max) and the data of Tao et al. (2018)'s Figure 4 (stats/human_ceiling.py) over the named
  raters that count.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from stats.agreement import is_included
from stats.agreement_coefficients import (
    Coefficient,
    PairKappa,
    RatedCounts,
    intraclass_correlation,
    krippendorff_alpha,
    leave_one_out_alpha,
    mean_pair_kappa,
    not_computable,
    pairwise_kappas,
)
from stats.correlations import jitter
from stats.figures.points import JITTER_SD, JITTER_SEED, compact
from stats.human_ceiling import (
    Halves,
    HumanRow,
    RaterVsRest,
    human_rows,
    median_rater,
    random_halves,
    raters_vs_rest,
    z_normalised,
)
from stats.ratings_by_item import flattened, group_by_key
from stats.report.document_types import (
    AgreementEntry,
    AnnotatorAgreement,
    CoefficientEntry,
    FilterEntry,
    RemovedAnnotator,
)
from stats.report.plot_types import (
    AgreementPlots,
    FigureFourPlots,
    HalvesPoints,
    HumanPlots,
    RaterVsRestPoints,
)
from stats.report.types import (
    FILTER_NONE,
    FILTER_STUDY,
    NORMALISE_Z,
    AnnotatorInfo,
    QuestionInputs,
    ReportOptions,
)

MAX_PAIR_RATERS = 80  # beyond this, the heat map and pairwise kappas keep the raters with most ratings
HALVES_SEED = 20170711
IDENTITY_CAVEAT = (
    "{anonymous} of these ratings come from raters whose identity is unknown (anonymous per-position scores, "
    "as in GRADE's file): they count in alpha, Fleiss' kappa and the one-way ICC, which only compare each "
    "reply's ratings, but never as one person across replies; pairwise kappas, Human (Avg)/(Max) and the "
    "per-rater rows cover the {named} named raters."
)
HALVES_CAVEAT = (
    "Tao et al. (2018), section 4.3: each point averages several raters, so its variance shrinks and the plot tends "
    "to the diagonal as raters are added; it flatters human agreement and is not the statistic to compare a "
    "metric with (Human (Avg) is)."
)


@dataclass(frozen=True)
class HumanSide:
    scores: dict[int, float]  # response id -> human score
    filter: FilterEntry
    agreement: AgreementEntry
    human_rows: tuple[HumanRow, HumanRow]
    plots: HumanPlots
    counted: CountedRatings | None = None  # the ratings sorted by the filter, for the rest of the report


@dataclass(frozen=True)
class CountedRatings:
    """One question's ratings sorted by the filter: those that count (named raters by rater, raters of
    unknown identity by reply), every named rater's, every reply's, and how many each removed rater lost."""

    kept_named: dict[int, dict[int, float]]
    kept_anonymous: dict[int, list[float]]
    all_named: dict[int, dict[int, float]]
    all_by_item: dict[int, list[float]]
    removed: dict[int, int]


def counted_ratings(
    question: QuestionInputs,
    annotators: Mapping[int, AnnotatorInfo],
    options: ReportOptions,
    threshold: float | None,
) -> CountedRatings:
    """The ratings sorted by the filter, in one pass. (Measured at 100,000 replies x 5 raters: this loop takes
    0.23 s of CPU, a numpy group-by that hands back the same dicts of Python lists 0.31 s; cProfile, which
    charges a Python loop per iteration, had made it look like the cost of the rater side.)"""
    included = {key: _counts(info, options, threshold) for key, info in annotators.items()}
    counted = CountedRatings({}, {}, {}, {}, {})
    for key, response_id, value in question.ratings:
        info = annotators[key]
        counted.all_by_item.setdefault(response_id, []).append(value)
        if info.identity_known:
            counted.all_named.setdefault(key, {})[response_id] = value
        if not included[key]:
            counted.removed[key] = counted.removed.get(key, 0) + 1
        elif info.identity_known:
            counted.kept_named.setdefault(key, {})[response_id] = value
        else:
            counted.kept_anonymous.setdefault(response_id, []).append(value)
    return counted


def human_scores(
    question: QuestionInputs,
    annotators: Mapping[int, AnnotatorInfo],
    options: ReportOptions,
    study_threshold: float | None,
) -> dict[int, float]:
    """response id -> human score (the ratings that count, averaged; an imported mean where none counts)."""
    counted = counted_ratings(question, annotators, options, options.threshold(study_threshold))
    return _human_scores(question, counted.kept_named, counted.kept_anonymous, options.normalise)[0]


def human_side(
    question: QuestionInputs,
    annotators: Mapping[int, AnnotatorInfo],
    options: ReportOptions,
    study_threshold: float | None,
) -> HumanSide:
    threshold = options.threshold(study_threshold)
    counted = counted_ratings(question, annotators, options, threshold)
    kept_named, kept_anonymous = counted.kept_named, counted.kept_anonymous
    scores, normalisation_note = _human_scores(question, kept_named, kept_anonymous, options.normalise)
    filter_section = _filter_section(
        question, annotators, options, threshold, counted.removed, normalisation_note
    )
    rated = kept_named if options.normalise != NORMALISE_Z else z_normalised(kept_named)
    comparisons = raters_vs_rest(rated, _normalised_anonymous(kept_anonymous, options.normalise))
    average, best = human_rows(comparisons)
    best = _named_best(best, annotators)
    if not question.ratings and question.imported_means:
        reason = "not computable: the human scores are imported means, with no per-rater scores"
        average, best = (replace(row, note=reason) for row in (average, best))
    agreement, agreement_plots = _agreement_section(
        question,
        annotators,
        kept_named,
        kept_anonymous,
        counted.all_named,
        counted.all_by_item,
        comparisons,
        question.points,
    )
    plots: HumanPlots = {**agreement_plots, **_figure_four(comparisons, rated, annotators)}
    return HumanSide(scores, filter_section, agreement, (average, best), plots, counted)


def _counts(info: AnnotatorInfo, options: ReportOptions, threshold: float | None) -> bool:
    if options.filter == FILTER_NONE:
        return True
    agreement = info.agreement if info.identity_known else None
    return is_included(info.inclusion, agreement, threshold)


def _human_scores(
    question: QuestionInputs,
    named: dict[int, dict[int, float]],
    anonymous: dict[int, list[float]],
    normalise: str,
) -> tuple[dict[int, float], str]:
    note = ""
    if normalise == NORMALISE_Z:
        named = z_normalised(named)
        anonymous = _normalised_anonymous(anonymous, normalise)
        note = "each rater's scores are z-scores of their own ratings"
        if anonymous:
            note += "; raters of unknown identity are normalised together, as one pool"
        if question.imported_means:
            note += "; imported means (no per-rater scores) stay on the rating scale"
        if question.gold:
            note += "; adjudicated gold values stay on the rating scale"
    keys, values = flattened(named, anonymous)
    scores = {
        response_id: float(value)
        for response_id, value in question.imported_means.items()
        if math.isfinite(value)
    }
    grouped = group_by_key(keys)
    # The mean of every reply's ratings that count: math.fsum / count, as ratings_by_item computes it.
    scores.update(zip(grouped.keys, grouped.means(values), strict=True))
    scores.update(question.gold)  # the researcher's adjudicated value replaces the mean
    return scores, note


def _normalised_anonymous(anonymous: dict[int, list[float]], normalise: str) -> dict[int, list[float]]:
    if normalise != NORMALISE_Z or not anonymous:
        return anonymous
    pool = np.array([value for values in anonymous.values() for value in values], dtype=float)
    spread = float(pool.std(ddof=1)) if pool.size > 1 else 0.0
    centre = float(pool.mean())
    return {
        item: [((value - centre) / spread if spread > 0 else 0.0) for value in values]
        for item, values in anonymous.items()
    }


def _filter_section(
    question: QuestionInputs,
    annotators: Mapping[int, AnnotatorInfo],
    options: ReportOptions,
    threshold: float | None,
    removed: dict[int, int],
    normalisation_note: str,
) -> FilterEntry:
    if options.filter == FILTER_NONE:
        description = "no filter: every rating counts"
    else:
        source = "the study's setting" if options.filter == FILTER_STUDY else "chosen for this report"
        rule = (
            f"raters whose agreement with the others (weighted Cohen's kappa) is under {threshold:g} ({source})"
            if threshold is not None
            else "no agreement threshold"
        )
        description = f"{rule}, and raters the researcher excluded, are left out"
    removed_annotators: list[RemovedAnnotator] = [
        {
            "annotator": annotators[key].pseudonym,
            "ratings": count,
            "agreement": annotators[key].agreement,
            "reason": "excluded by the researcher"
            if annotators[key].inclusion == "exclude"
            else "agreement under the threshold",
        }
        for key, count in removed.items()
    ]
    return {
        "question": question.name,
        "kind": options.filter,
        "threshold": threshold,
        "description": description,
        "annotators_removed": len(removed),
        "ratings_removed": sum(removed.values()),
        "ratings_total": len(question.ratings),
        "removed": sorted(removed_annotators, key=lambda entry: str(entry["annotator"])),
        "normalisation": options.normalise,
        "normalisation_note": normalisation_note,
    }


def _agreement_section(
    question: QuestionInputs,
    annotators: Mapping[int, AnnotatorInfo],
    kept_named: dict[int, dict[int, float]],
    kept_anonymous: dict[int, list[float]],
    all_named: dict[int, dict[int, float]],
    all_by_item: dict[int, list[float]],
    comparisons: list[RaterVsRest],
    points: list[int],
) -> tuple[AgreementEntry, AgreementPlots]:
    """The question's agreement coefficients (on the ratings that count; alpha also before the filter),
    every named rater's line, the kappa of each pair of the most active raters, and the plots of both."""
    if not question.ratings:
        return _no_agreement(question), {"raters": [], "heatmap": None}
    named_ratings = sum(len(values) for values in kept_named.values())
    anonymous_ratings = sum(len(values) for values in kept_anonymous.values())
    identity = "known" if not anonymous_ratings else ("anonymous" if not named_ratings else "mixed")
    note = ""
    if anonymous_ratings:
        note = IDENTITY_CAVEAT.format(anonymous=anonymous_ratings, named=len(kept_named))
    kept = RatedCounts.of(
        kept_named, kept_anonymous, points
    )  # shared by both alphas, Fleiss and leave-one-out
    alpha = kept.alpha("ordinal")
    pair_raters = _most_active(all_named)
    pairs = pairwise_kappas({key: all_named[key] for key in pair_raters}, points=points)
    kept_pairs = [pair for pair in pairs if pair.first in kept_named and pair.second in kept_named]
    mean_kappa = mean_pair_kappa(kept_pairs)
    left_out_of_pairs = len(all_named) - len(pair_raters)
    if left_out_of_pairs:
        mean_kappa = Coefficient(
            mean_kappa.value,
            mean_kappa.items,
            mean_kappa.ratings,
            mean_kappa.note,
            {**mean_kappa.details, "raters_left_out": left_out_of_pairs},
        )
    section: AgreementEntry = {
        "question": question.name,
        "scale": [question.scale_min, question.scale_max],
        "identity": identity,
        "note": note,
        "krippendorff_alpha_ordinal": _coefficient_entry(alpha),
        "krippendorff_alpha_interval": _coefficient_entry(kept.alpha("interval")),
        "krippendorff_alpha_ordinal_before_filter": _coefficient_entry(
            krippendorff_alpha(all_by_item, points=points, level="ordinal")
        ),
        "fleiss_kappa": _coefficient_entry(kept.fleiss()),
        "icc": _coefficient_entry(intraclass_correlation(kept_named, kept_anonymous)),
        "cohen_kappa_mean": _coefficient_entry(mean_kappa),
        "annotators": _annotator_rows(
            annotators, kept_named, kept_anonymous, all_named, comparisons, points, kept, alpha, pairs
        ),
        "pairs": [
            {
                "first": annotators[pair.first].pseudonym,
                "second": annotators[pair.second].pseudonym,
                "kappa": pair.kappa,
                "items": pair.items,
                "note": pair.note,
            }
            for pair in pairs
        ],
    }
    return section, _agreement_plots(annotators, kept_named, all_named, pair_raters, pairs)


def _no_agreement(question: QuestionInputs) -> AgreementEntry:
    """The agreement section of a question without per-rater ratings: every coefficient not computable."""
    reason = (
        "only imported means (no per-rater scores): agreement is not computable from them"
        if question.imported_means
        else "no ratings yet"
    )
    blank = _coefficient_entry(not_computable(reason))
    return {
        "question": question.name,
        "scale": [question.scale_min, question.scale_max],
        "identity": "none",
        "note": reason,
        "krippendorff_alpha_ordinal": blank,
        "krippendorff_alpha_interval": blank,
        "krippendorff_alpha_ordinal_before_filter": blank,
        "fleiss_kappa": blank,
        "icc": blank,
        "cohen_kappa_mean": blank,
        "annotators": [],
        "pairs": [],
    }


def _annotator_rows(
    annotators: Mapping[int, AnnotatorInfo],
    kept_named: dict[int, dict[int, float]],
    kept_anonymous: dict[int, list[float]],
    all_named: dict[int, dict[int, float]],
    comparisons: list[RaterVsRest],
    points: list[int],
    kept: RatedCounts,
    alpha: Coefficient,
    pairs: list[PairKappa],
) -> list[AnnotatorAgreement]:
    """One line per named rater (by pseudonym): ratings, whether they count, their kappas, alpha without
    them, and their correlation with the mean of the others."""
    loo = (
        leave_one_out_alpha(kept_named, kept_anonymous, points=points, counted=kept)
        if len(kept_named) > 1
        else {}
    )
    versus = {comparison.rater: comparison for comparison in comparisons}
    rows: list[AnnotatorAgreement] = []
    for key in sorted(all_named, key=lambda k: annotators[k].pseudonym):
        own_pairs = [p.kappa for p in pairs if key in (p.first, p.second) and p.kappa is not None]
        without = loo.get(key)
        comparison = versus.get(key)
        rows.append(
            {
                "annotator": annotators[key].pseudonym,
                "ratings": len(all_named[key]),
                "included": key in kept_named,
                "agreement_kappa": annotators[key].agreement,
                "pair_kappa_mean": math.fsum(own_pairs) / len(own_pairs) if own_pairs else None,
                "alpha_without": without.value if without else None,
                "alpha_change_without": (
                    without.value - alpha.value
                    if without and without.value is not None and alpha.value is not None
                    else None
                ),
                "pearson_vs_rest": comparison.pearson.coefficient if comparison else None,
                "pearson_vs_rest_p": comparison.pearson.p_value if comparison else None,
                "spearman_vs_rest": comparison.spearman.coefficient if comparison else None,
                "spearman_vs_rest_p": comparison.spearman.p_value if comparison else None,
                "shared_replies": comparison.pearson.n if comparison else 0,
            }
        )
    return rows


def _agreement_plots(
    annotators: Mapping[int, AnnotatorInfo],
    kept_named: dict[int, dict[int, float]],
    all_named: dict[int, dict[int, float]],
    pair_raters: list[int],
    pairs: list[PairKappa],
) -> AgreementPlots:
    """The most active raters' points and the kappa heat map between them (1 on the diagonal)."""
    names = [annotators[key].pseudonym for key in pair_raters]
    index = {key: position for position, key in enumerate(pair_raters)}
    matrix: list[list[float | None]] = [[None] * len(names) for _ in names]
    shared: list[list[int]] = [[0] * len(names) for _ in names]
    for pair in pairs:
        i, j = index[pair.first], index[pair.second]
        matrix[i][j] = matrix[j][i] = pair.kappa
        shared[i][j] = shared[j][i] = pair.items
    for key, position in index.items():
        matrix[position][position] = 1.0
        shared[position][position] = len(all_named[key])
    return {
        "raters": [
            {
                "annotator": annotators[key].pseudonym,
                "included": key in kept_named,
                "items": sorted(all_named[key]),
                "values": [all_named[key][item] for item in sorted(all_named[key])],
            }
            for key in pair_raters
        ],
        "heatmap": {"raters": names, "kappa": matrix, "shared": shared} if len(names) >= 2 else None,
    }


def _coefficient_entry(coefficient: Coefficient) -> CoefficientEntry:
    """The coefficient as the document holds it; its ``details`` are a free mapping in
    stats/agreement_coefficients.py, whose keys CoefficientEntry lists."""
    return cast(CoefficientEntry, coefficient.as_dict())


def _most_active(named: dict[int, dict[int, float]]) -> list[int]:
    ranked = sorted(named, key=lambda key: (-len(named[key]), key))
    return sorted(ranked[:MAX_PAIR_RATERS])


def _named_best(best: HumanRow, annotators: Mapping[int, AnnotatorInfo]) -> HumanRow:
    def name(key: Any) -> Any:
        return annotators[key].pseudonym if key in annotators else key

    return HumanRow(
        best.label,
        best.pearson,
        best.pearson_p,
        best.spearman,
        best.spearman_p,
        best.raters,
        best.note,
        pearson_rater=name(best.pearson_rater) if best.pearson_rater is not None else None,
        spearman_rater=name(best.spearman_rater) if best.spearman_rater is not None else None,
    )


def _figure_four(
    comparisons: list[RaterVsRest],
    rated: Mapping[int, Mapping[int, float]],
    annotators: Mapping[int, AnnotatorInfo],
) -> FigureFourPlots:
    median = median_rater(comparisons)
    halves: Halves | None = random_halves(rated, seed=HALVES_SEED)
    figure_a: RaterVsRestPoints | None = None
    if median is not None:
        figure_a = {
            "annotator": annotators[median.rater].pseudonym,
            "pearson": median.pearson.coefficient,
            "spearman": median.spearman.coefficient,
            "items": list(median.items),
            "x": compact(jitter(list(median.rest), sd=JITTER_SD, seed=JITTER_SEED)),
            "y": compact(jitter(list(median.own), sd=JITTER_SD, seed=JITTER_SEED + 1)),
            "rest": compact(median.rest),
            "own": compact(median.own),
        }
    figure_b: HalvesPoints | None = None
    if halves is not None and halves.items:
        figure_b = {
            "first": [annotators[key].pseudonym for key in halves.first],
            "second": [annotators[key].pseudonym for key in halves.second],
            "pearson": halves.pearson.coefficient,
            "spearman": halves.spearman.coefficient,
            "items": list(halves.items),
            "x": compact(halves.first_mean),
            "y": compact(halves.second_mean),
            "caveat": HALVES_CAVEAT,
        }
    return {"figure_4a": figure_a, "figure_4b": figure_b}

"""The meta-evaluation half of a report, for one question: the statistics of stats/meta on the
replies the metric half correlates (stats/report/metrics.py), with the same human scores.

* Grouped correlations (stats.meta.grouped_coefficients), when the report's ``grouping`` is context or
  system: a ``grouped`` entry in every metric row and per-system row (Pearson, Spearman, Kendall within
  each group, averaged over the groups with 2 or more replies whose scores vary; intervals: the bootstrap
  over groups; how many groups were used and left out, and why).
* Pairwise accuracy (``pairwise_accuracy``): at system level (Kocmi et al. 2021, no tie threshold) and
  within contexts (acc_eq with tie calibration, Deutsch, Foster and Freitag 2023, its epsilon reported),
  each with the bootstrap over contexts.
* Metric against metric: PERM-BOTH and PERM-INPUTS p-values (Deutsch, Dror and Roth 2021) in every
  comparison, of Pearson's r at the report's grouping, with the two statistics compared; significance clusters
  of the same statistic by PERM-BOTH (one-sided) and the WMT metrics task's rule (mt-metrics-eval's
  ``AssignRanks``), as a ``rank`` in every metric row and a ``significance_clusters`` entry saying how.
* How many more ratings (``more_ratings``): stats/report/rating_plan.py's sentences.

Permutations and resamples are the report's ``resamples`` (0: none, with a note) and its seed.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from stats.meta import (
    Clusters,
    GroupedCorrelation,
    Groups,
    Layout,
    PairwiseAccuracy,
    Statistic,
    permutation_tests,
    reply_pairwise_accuracy,
    significance_clusters,
    system_pairwise_accuracy,
    trivial_accuracy,
)
from stats.meta.clusters import SIGNIFICANCE, WMT_RULE, ranked_pairs, rule_sentence
from stats.meta.grouped import COEFFICIENTS, grouped_coefficients
from stats.meta.permutation import PERM_BOTH, PERM_INPUTS, Grouping, PermutationResult
from stats.report.document_types import (
    AccuracyFields,
    GroupedCorrelationFields,
    Interval,
    MetricComparison,
    MetricRow,
    MoreRatingsEntry,
    PairwiseAccuracyEntry,
    PerSystemRow,
    SignificanceClusterEntry,
)
from stats.report.human import CountedRatings
from stats.report.metrics import MetricSection, signature_fields
from stats.report.rating_plan import more_ratings_entry
from stats.report.types import GROUPING_NONE, QuestionInputs, ReportInputs, ReportOptions, SignatureInputs

NO_PERMUTATIONS = "no permutations: the report was asked for 0 resamples"
CLUSTER_TEST = "PERM-BOTH, one-sided"
NO_INTERVAL = "no interval: fewer than 2 contexts, no resamples, or too few defined resamples"


@dataclass(frozen=True)
class MetaSection:
    """One question's statistics, per signature column (in ``inputs.signatures`` order) where per metric."""

    grouped: list[GroupedCorrelationFields] | None  # None: grouping none
    per_system_grouped: dict[str, list[GroupedCorrelationFields]]
    ranks: list[int | None]
    clusters: SignificanceClusterEntry
    permutations: list[dict[str, object]]  # per pair of columns, in itertools.combinations order
    accuracy: list[PairwiseAccuracyEntry]
    more_ratings: MoreRatingsEntry


def statistic_label(grouping: str) -> str:
    """The statistic compared and ranked: Pearson's r at the report's grouping."""
    return "Pearson" if grouping == GROUPING_NONE else f"Pearson, grouped by {grouping}"


def meta_section(
    question: QuestionInputs,
    human: Mapping[int, float],
    inputs: ReportInputs,
    options: ReportOptions,
    metrics: MetricSection,
    counted: CountedRatings | None = None,
) -> MetaSection:
    """``metrics``: the question's metric half, whose flat Pearson's r rank the metrics at grouping none;
    ``counted``: the question's ratings as the human side sorted them (else sorted again for the plan)."""
    items, values = metrics.items, metrics.values  # the replies with a human score, and their metric matrix
    x = np.array([human[int(item)] for item in items], dtype=float)
    signatures = list(inputs.signatures)
    replies = [inputs.responses[int(item)] for item in items]
    layout = Layout.of([reply.context_key for reply in replies], [reply.system for reply in replies])
    grouping = options.grouping
    grouped: list[GroupedCorrelationFields] | None = None
    per_system: dict[str, list[GroupedCorrelationFields]] = {}
    if grouping != GROUPING_NONE:
        groups = layout.contexts if grouping == "context" else layout.systems
        grouped = grouped_fields(x, values, groups, grouping, options)
        system_codes = layout.systems.codes
        for code, system in enumerate(layout.systems.names):
            mask = system_codes == code
            within = Groups.of(groups.codes[mask])  # the system's replies, by the same groups
            per_system[str(system)] = grouped_fields(x[mask], values[mask], within, grouping, options)
    statistic = Statistic("pearson", _grouping(grouping))
    ranked = (
        [entry["pearson"] for entry in grouped]
        if grouped is not None
        else [row["pearson"] for row in metrics.rows[: values.shape[1]]]
    )
    permutations, both = _permutations(x, values, layout, statistic, ranked, options)
    clusters, cluster_note = _clusters(both, ranked, options)
    return MetaSection(
        grouped=grouped,
        per_system_grouped=per_system,
        ranks=list(clusters.ranks) if clusters is not None else [None] * len(signatures),
        clusters={
            "question": question.name,
            "statistic": statistic_label(grouping),
            "test": CLUSTER_TEST,
            "permutations": options.resamples,
            "alpha": SIGNIFICANCE,
            "rule": WMT_RULE,
            "rule_description": rule_sentence(WMT_RULE),
            "order": [signatures[column].text for column in clusters.order] if clusters is not None else [],
            "note": cluster_note,
        },
        permutations=[_permutation_fields(statistic_label(grouping), *fields) for fields in permutations],
        accuracy=_accuracy(question.name, x, values, layout, signatures, options),
        more_ratings=more_ratings_entry(inputs, question, options, counted),
    )


def add_to_metric_section(metrics: MetricSection, meta: MetaSection) -> None:
    """Writes the grouped columns, ranks and permutation p-values into the metric section's entries."""
    for column, rank in enumerate(meta.ranks):
        row: MetricRow = metrics.rows[column]
        row["rank"] = rank
        if meta.grouped is not None:
            row["grouped"] = meta.grouped[column]
    width = len(meta.ranks)
    for index, entry in enumerate(metrics.per_system):
        by_system = meta.per_system_grouped.get(entry["system"])
        if by_system is not None:
            system_row: PerSystemRow = entry
            system_row["grouped"] = by_system[index % width]
    for comparison, fields in zip(metrics.comparisons, meta.permutations, strict=True):
        _add_permutation(comparison, fields)


def _add_permutation(comparison: MetricComparison, fields: Mapping[str, object]) -> None:
    comparison.update(fields)  # type: ignore[typeddict-item]  # keys: MetricComparison's permutation fields


def grouped_fields(
    x: np.ndarray, values: np.ndarray, groups: Groups, grouping: str, options: ReportOptions
) -> list[GroupedCorrelationFields]:
    """Every column's grouped Pearson, Spearman and Kendall with their intervals over groups."""
    results = grouped_coefficients(x, values, groups, resamples=options.resamples, seed=options.seed)
    return [
        _grouped_entry(
            grouping, groups.count, *(results[coefficient][column] for coefficient in COEFFICIENTS)
        )
        for column in range(values.shape[1])
    ]


def _grouped_entry(
    grouping: str,
    total: int,
    pearson: GroupedCorrelation,
    spearman: GroupedCorrelation,
    kendall: GroupedCorrelation,
) -> GroupedCorrelationFields:
    return {
        "grouping": grouping,
        "pearson": pearson.value,
        "pearson_ci": _interval(pearson.ci),
        "spearman": spearman.value,
        "spearman_ci": _interval(spearman.ci),
        "kendall": kendall.value,
        "kendall_ci": _interval(kendall.ci),
        "groups": pearson.groups,
        "groups_total": total,
        "left_out": {reason: count for reason, count in pearson.left_out.items() if count},
        "note": pearson.note or _grouped_interval_note(pearson, total),
    }


def _grouped_interval_note(result: GroupedCorrelation, total: int) -> str:
    if result.value is None or result.ci is not None:
        return ""
    return "no interval: one group" if total == 1 else NO_INTERVAL


def _clusters(
    tests: Mapping[tuple[int, int], PermutationResult],
    ranked: Sequence[float | None],
    options: ReportOptions,
) -> tuple[Clusters | None, str]:
    """Clusters by PERM-BOTH's one-sided p-values: those of the comparisons' run, which also tested every
    pair in its ranked direction (:func:`_permutations`)."""
    if options.resamples == 0:
        return None, NO_PERMUTATIONS
    if not any(value is not None for value in ranked):
        return None, "no metric has the statistic"
    return (
        significance_clusters(ranked, lambda better, worse: tests[(better, worse)].p_value, rule=WMT_RULE),
        "",
    )


def _permutations(
    x: np.ndarray,
    values: np.ndarray,
    layout: Layout,
    statistic: Statistic,
    ranked: Sequence[float | None],
    options: ReportOptions,
) -> tuple[
    list[tuple[PermutationResult | None, PermutationResult | None, str]],
    dict[tuple[int, int], PermutationResult],
]:
    """Per pair of columns (in itertools.combinations order): its PERM-BOTH and PERM-INPUTS results and a
    note; and PERM-BOTH's results by (first, second), with every pair also in its ranked direction (better,
    worse), for the clusters. A pair and its reverse are counted in one run on the same masks (see
    stats/meta/permutation/counting.py's ``Tally``): the reverse costs only the blocks its own early stop needs."""
    pairs = list(combinations(range(values.shape[1]), 2))
    if options.resamples == 0 or not pairs:
        return [(None, None, NO_PERMUTATIONS) for _ in pairs], {}
    asked = set(pairs)
    reverse = [pair for pair in ranked_pairs(ranked) if pair not in asked]
    both = permutation_tests(
        x,
        values,
        layout,
        statistic,
        pairs + reverse,
        scheme=PERM_BOTH,
        permutations=options.resamples,
        seed=options.seed,
    )
    inputs = permutation_tests(
        x,
        values,
        layout,
        statistic,
        pairs,
        scheme=PERM_INPUTS,
        permutations=options.resamples,
        seed=options.seed,
    )
    by_pair = {(result.first, result.second): result for result in both}
    return [
        (on_both, on_inputs, on_both.note or on_inputs.note)
        for on_both, on_inputs in zip(both[: len(pairs)], inputs, strict=True)
    ], by_pair


def _permutation_fields(
    label: str, both: PermutationResult | None, inputs: PermutationResult | None, note: str
) -> dict[str, object]:
    observed = both if both is not None and both.statistic_first is not None else inputs
    return {
        "permutation_statistic": label,
        # What both tests compared: each metric's statistic on the replies both scored (the rows' values when
        # neither metric misses a reply); the same for PERM-BOTH and PERM-INPUTS, which differ in what they swap.
        "first_statistic": observed.statistic_first if observed is not None else None,
        "second_statistic": observed.statistic_second if observed is not None else None,
        "perm_both_p": both.p_two_sided if both is not None else None,
        "perm_both_permutations": both.permutations if both is not None else 0,
        "perm_inputs_p": inputs.p_two_sided if inputs is not None else None,
        "perm_inputs_permutations": inputs.permutations if inputs is not None else 0,
        "permutation_note": note,
    }


def _accuracy(
    question: str,
    x: np.ndarray,
    values: np.ndarray,
    layout: Layout,
    signatures: Sequence[SignatureInputs],
    options: ReportOptions,
) -> list[PairwiseAccuracyEntry]:
    if values.shape[1] == 0:
        return []
    system = system_pairwise_accuracy(
        x,
        values,
        layout.systems,
        contexts=layout.contexts,
        tie_calibration=False,
        resamples=options.resamples,
        seed=options.seed,
    )
    context = reply_pairwise_accuracy(
        x, values, layout.contexts, tie_calibration=True, resamples=options.resamples, seed=options.seed
    )
    return [
        {
            "question": question,
            **signature_fields(signature),
            "system": _accuracy_fields(at_system),
            "context": {
                **_accuracy_fields(at_context),
                "trivial": trivial_accuracy(x, values[:, column], layout.contexts),
            },
        }
        for column, (signature, at_system, at_context) in enumerate(
            zip(signatures, system, context, strict=True)
        )
    ]


def _accuracy_fields(result: PairwiseAccuracy) -> AccuracyFields:
    counts = result.counts
    return {
        "value": result.value,
        "epsilon": result.epsilon,
        "calibrated": result.calibrated,
        "accuracy_at_zero": result.accuracy_at_zero,
        "pairs": result.pairs,
        "groups": result.groups,
        "systems": result.systems,
        "counts": {
            "concordant": counts.concordant,
            "discordant": counts.discordant,
            "ties_human": counts.ties_human,
            "ties_metric": counts.ties_metric,
            "ties_both": counts.ties_both,
        }
        if counts is not None
        else None,
        "ci": _interval(result.ci),
        "ci_method": result.ci_method,
        "note": result.note or (NO_INTERVAL if result.ci is None and result.value is not None else ""),
    }


def _grouping(grouping: str) -> Grouping:
    if grouping == "context":
        return "context"
    if grouping == "system":
        return "system"
    return "none"


def _interval(ci: tuple[float, float] | None) -> Interval:
    return [ci[0], ci[1]] if ci is not None else [None, None]

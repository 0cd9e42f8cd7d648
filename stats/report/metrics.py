"""The metric half of a report, for one question: every metric against the human scores.

* Utterance level (Tao et al. (2018) Table 2; Ghazarian et al. (2019) Tables 3-4; Gupta et al. (2019) Table 4): Pearson, Spearman and
  Kendall's tau-b with p-values and Fisher-z intervals (stats/correlations.py), and 95% bootstrap
  intervals from resamples of the replies shared by every metric (stats/bootstrap.py); overall and
  per system.
* Metric against metric: Williams' test and the paired bootstrap of the difference
  (stats/comparisons.py), for every pair of metrics.
* System level (Gupta et al. (2019) section 5.1.2, Figure 1): each system's mean human score and mean metric value
  over the same replies, correlated across systems.
* The quantile plot of Tao et al. (2018) Figure 1 (stats/curves.py).

The report says how many replies it left out and why: no human score (counted once per question) or no
value of the metric (per row). A metric a scoring run asked for that has no value for any reply (a
referenced metric on a study without references, ...) still has its row in ``rows``: ``n`` 0, every
statistic ``None``, and ``no_values`` (also in ``note``: "no values: <reason>"); it takes no part in the
other sections. Every row says where the metric's scores come from (``origin``: builtin, plugin, or
external: computed elsewhere and imported, named "<name> (external)").

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import fmean

import numpy as np
from scipy import stats as scipy_stats

from stats.bootstrap import (
    BootstrapDraws,
    Resamples,
    bootstrap_correlations,
    bootstrap_interval_or_none,
    paired_difference_p,
)
from stats.centred import centred_columns
from stats.comparisons import williams_test
from stats.correlations import (
    TOO_FEW_ITEMS,
    CorrelationResult,
    jitter,
    kendall_with_ci,
    pearson_with_ci,
    spearman_with_ci,
)
from stats.curves import QuantileGroup, quantile_means
from stats.figures.points import HOVER_TEXT_LIMIT, JITTER_SD, JITTER_SEED, compact, compact_or_none
from stats.ratings_by_item import factorized
from stats.report.document_types import (
    ComparisonTests,
    CorrelationFields,
    MetricComparison,
    MetricRow,
    MetricStatistics,
    PerSystemRow,
    QuantileEntry,
    QuantileGroupEntry,
    SignatureFields,
    SystemLevelRow,
    SystemMeans,
)
from stats.report.plot_types import MetricPlots
from stats.report.types import ReportInputs, ReportOptions, SignatureInputs, UnvaluedMetric

FEWER_THAN_THREE_SYSTEMS = "fewer than 3 systems"
SIGNIFICANCE = 0.05
Progress = Callable[[int, int], None]
# mypy's extra checks (--strict) refuse a row built from ``**`` parts when the row has optional keys that no
# part declares: a TypedDict may carry keys it does not declare, so a part could set one. The parts unpacked
# here (signature fields, statistics, tests) are built in this module and hold only their declared keys; the
# lines that unpack them say so (``typeddict-item``).


@dataclass(frozen=True)
class MetricSection:
    rows: list[MetricRow]
    per_system: list[PerSystemRow]
    comparisons: list[MetricComparison]
    system_level: list[SystemLevelRow]
    quantiles: list[QuantileEntry]
    plots: MetricPlots
    # The replies with a human score (ascending ids) and their metric values (replies x signatures, in
    # ``inputs.signatures`` order), for the rest of the report (stats/report/meta.py)
    items: np.ndarray
    values: np.ndarray


def metric_section(
    question: str,
    human: Mapping[int, float],
    inputs: ReportInputs,
    options: ReportOptions,
    progress: Progress | None = None,
) -> MetricSection:
    items = np.array(sorted(human), dtype=np.int64)
    x = np.array([human[int(item)] for item in items], dtype=float)
    signatures = list(inputs.signatures)
    values = metric_matrix(items, signatures, inputs.metric_values)
    systems = [inputs.responses[int(item)].system for item in items]
    system_codes, system_names = factorized(systems)
    steps = 2 + len(system_names)
    step = 0

    def advance() -> None:
        nonlocal step
        step += 1
        if progress is not None:
            progress(step, steps)

    overall = _bootstrap(x, values, options, options.seed)
    advance()
    rows: list[MetricRow] = [
        {
            "question": question,
            **signature_fields(signature),
            **_statistics(x, values[:, column], overall, column),  # type: ignore[typeddict-item]  # closed parts (note at the top)
        }
        for column, signature in enumerate(signatures)
    ]
    per_system: list[PerSystemRow] = []
    for offset, system in enumerate(sorted(system_names)):
        mask = system_codes == system_names.index(system)
        draws = _bootstrap(x[mask], values[mask], options, options.seed + 1 + offset)
        for column, signature in enumerate(signatures):
            per_system.append(
                {
                    "question": question,
                    "system": system,
                    **signature_fields(signature),
                    **_statistics(x[mask], values[mask, column], draws, column),  # type: ignore[typeddict-item]  # closed parts (note at the top)
                }
            )
        advance()
    comparisons = _comparisons(question, x, values, signatures, overall, options)
    advance()
    return MetricSection(
        rows=[*rows, *(_unvalued_row(question, metric, int(items.size)) for metric in inputs.unvalued)],
        per_system=per_system,
        comparisons=comparisons,
        system_level=[
            _system_level_row(question, signature, x, values[:, column], system_codes, system_names)
            for column, signature in enumerate(signatures)
        ],
        quantiles=[
            {
                "question": question,
                "signature": signature.text,
                "metric": signature.name,
                "groups": [_quantile_group(group) for group in quantile_means(x, values[:, column])],
            }
            for column, signature in enumerate(signatures)
        ],
        plots=_scatter_data(question, items, x, values, signatures, inputs, rows),
        items=items,
        values=values,
    )


def _quantile_group(group: QuantileGroup) -> QuantileGroupEntry:
    return {
        "human_low": group.human_low,
        "human_high": group.human_high,
        "human_mean": group.human_mean,
        "metric_mean": group.metric_mean,
        "items": group.items,
    }


def metric_matrix(
    items: np.ndarray, signatures: Sequence[SignatureInputs], metric_values: Mapping[int, Mapping[int, float]]
) -> np.ndarray:
    values = np.full((items.size, len(signatures)), np.nan)
    for column, signature in enumerate(signatures):
        scores = metric_values.get(signature.id, {})
        if not scores:
            continue
        ids = np.fromiter(scores.keys(), dtype=np.int64, count=len(scores))
        data = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
        if items.size == 0:
            continue
        # ``items`` is sorted: a reply's row is where its id falls in it (replies not in it are skipped).
        rows = np.minimum(np.searchsorted(items, ids), items.size - 1)
        keep = (items[rows] == ids) & np.isfinite(data)
        values[rows[keep], column] = data[keep]
    return values


def _bootstrap(x: np.ndarray, values: np.ndarray, options: ReportOptions, seed: int) -> BootstrapDraws | None:
    if options.resamples == 0 or x.size < 3 or values.shape[1] == 0:
        return None
    return bootstrap_correlations(x, values, Resamples(n=x.size, count=options.resamples, seed=seed))


def _statistics(
    x: np.ndarray, column: np.ndarray, draws: BootstrapDraws | None, index: int
) -> MetricStatistics:
    present = np.isfinite(column)
    human, metric = x[present], column[present]
    pearson = pearson_with_ci(human, metric)
    spearman = spearman_with_ci(human, metric)
    kendall = kendall_with_ci(human, metric)
    return {
        "n": int(present.sum()),
        **_correlation_fields(pearson, spearman, kendall),
        "pearson_ci_bootstrap": bootstrap_interval_or_none(draws.pearson[index]) if draws else [None, None],
        "spearman_ci_bootstrap": bootstrap_interval_or_none(draws.spearman[index]) if draws else [None, None],
        "spearman_bootstrap": draws.spearman_method if draws else None,
        "left_out": {"no_metric_score": int((~present).sum())},
        "note": _joined_notes(pearson, spearman, kendall),
    }


def _comparisons(
    question: str,
    x: np.ndarray,
    values: np.ndarray,
    signatures: Sequence[SignatureInputs],
    overall: BootstrapDraws | None,
    options: ReportOptions,
) -> list[MetricComparison]:
    present = np.isfinite(values)
    complete = present.all(axis=0)
    # The usual case: metrics with a value for every reply share one correlation matrix (values and ranks).
    full = _correlation_matrices(x, values[:, complete]) if complete.any() and x.size >= 4 else None
    position = {int(column): index for index, column in enumerate(np.flatnonzero(complete))}
    result: list[MetricComparison] = []
    for first, second in combinations(range(len(signatures)), 2):
        both = present[:, first] & present[:, second]
        n = int(both.sum())
        pair = (question, signatures[first], signatures[second], n)
        if n < 4:
            result.append(_compared(*pair, _empty_comparison(f"only {n} replies have both metrics")))
            continue
        if full is not None and first in position and second in position:
            pearsons, spearmans = full
            i, j = position[first] + 1, position[second] + 1  # row/column 0 is the human score
        else:
            pearsons, spearmans = _correlation_matrices(x[both], values[both][:, [first, second]])
            i, j = 1, 2
        r12, r13, r23 = _entry(pearsons, 0, i), _entry(pearsons, 0, j), _entry(pearsons, i, j)
        s12, s13, s23 = _entry(spearmans, 0, i), _entry(spearmans, 0, j), _entry(spearmans, i, j)
        pearson_test, spearman_test = williams_test(r12, r13, r23, n), williams_test(s12, s13, s23, n)
        draws = _pair_draws(x, values, first, second, both, overall, options)
        bootstrap_p = paired_difference_p(draws.pearson[0], draws.pearson[1]) if draws else None
        bootstrap_p_spearman = paired_difference_p(draws.spearman[0], draws.spearman[1]) if draws else None
        difference = None if r12 is None or r13 is None else r12 - r13
        tests: ComparisonTests = {
            "pearson_difference": difference,
            "williams_t": pearson_test.t,
            "williams_p": pearson_test.p_value,
            "bootstrap_p": bootstrap_p,
            "spearman_difference": None if s12 is None or s13 is None else s12 - s13,
            "williams_p_spearman": spearman_test.p_value,
            "bootstrap_p_spearman": bootstrap_p_spearman,
            "metrics_pearson": r23,
            "winner": _winner(
                difference,
                pearson_test.p_value,
                bootstrap_p,
                signatures[first].text,
                signatures[second].text,
            ),
            "note": pearson_test.note,
        }
        result.append(_compared(*pair, tests))
    return result


def _compared(
    question: str, first: SignatureInputs, second: SignatureInputs, n: int, tests: ComparisonTests
) -> MetricComparison:
    return {
        "question": question,
        "first": first.text,
        "first_metric": first.name,
        "second": second.text,
        "second_metric": second.name,
        "n": n,
        **tests,  # type: ignore[typeddict-item]  # closed parts (note at the top)
    }


def _pair_draws(
    x: np.ndarray,
    values: np.ndarray,
    first: int,
    second: int,
    both: np.ndarray,
    overall: BootstrapDraws | None,
    options: ReportOptions,
) -> BootstrapDraws | None:
    """The two metrics' paired draws over the replies both have: the shared ones when neither misses a
    reply the other has, else a bootstrap of the common replies (same seed)."""
    if overall is None:
        return None
    present = np.isfinite(values)
    if np.array_equal(present[:, first], both) and np.array_equal(present[:, second], both):
        return BootstrapDraws(overall.pearson[[first, second]], overall.spearman[[first, second]])
    return _bootstrap(x[both], values[both][:, [first, second]], options, options.seed)


def _winner(
    difference: float | None, williams_p: float | None, bootstrap_p: float | None, first: str, second: str
) -> str | None:
    """The signature that correlates significantly better by both tests (p < 0.05), else None."""
    if difference is None or williams_p is None or bootstrap_p is None:
        return None
    if williams_p < SIGNIFICANCE and bootstrap_p < SIGNIFICANCE:
        return first if difference > 0 else second
    return None


def _empty_comparison(note: str) -> ComparisonTests:
    return {
        "pearson_difference": None,
        "williams_t": None,
        "williams_p": None,
        "bootstrap_p": None,
        "spearman_difference": None,
        "williams_p_spearman": None,
        "bootstrap_p_spearman": None,
        "metrics_pearson": None,
        "winner": None,
        "note": f"not computable: {note}",
    }


def _correlation_matrices(x: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pearson and Spearman correlation matrices of [human, metric columns...] (NaN where one is constant)."""
    data = np.column_stack([x, values])
    ranks = scipy_stats.rankdata(data, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.corrcoef(centred_columns(data), rowvar=False), np.corrcoef(ranks, rowvar=False)


def _entry(matrix: np.ndarray, i: int, j: int) -> float | None:
    value = float(matrix[i, j])
    return float(np.clip(value, -1.0, 1.0)) if math.isfinite(value) else None


def _system_level_row(
    question: str,
    signature: SignatureInputs,
    x: np.ndarray,
    column: np.ndarray,
    system_codes: np.ndarray,
    system_names: Sequence[str],
) -> SystemLevelRow:
    """``system_codes``: each reply's system as an index into ``system_names``."""
    # Both means run over the same replies, so a system is not flattered by items only one side saw.
    present = np.isfinite(column)
    code_of = {system_names[code]: code for code in np.unique(system_codes[present]).tolist()}
    names = sorted(code_of)
    rows_of = {name: np.flatnonzero(present & (system_codes == code_of[name])) for name in names}
    # fmean of Python floats: the same exact sums (math.fsum) as over numpy scalars, without their overhead.
    human_means = [fmean(x[rows_of[name]].tolist()) for name in names]
    metric_means = [fmean(column[rows_of[name]].tolist()) for name in names]
    means: list[SystemMeans] = [
        {"system": name, "human_mean": human_mean, "metric_mean": metric_mean, "n": len(rows_of[name])}
        for name, human_mean, metric_mean in zip(names, human_means, metric_means, strict=True)
    ]
    pearson = _renamed_note(pearson_with_ci(human_means, metric_means))
    spearman = _renamed_note(spearman_with_ci(human_means, metric_means))
    kendall = _renamed_note(kendall_with_ci(human_means, metric_means))
    floored = _floor_note(signature, column[present], metric_means)
    note = "; ".join(part for part in (_joined_notes(pearson, spearman), floored) if part)
    return {
        "question": question,
        **signature_fields(signature),
        "n": len(means),
        **_correlation_fields(pearson, spearman, kendall),
        "note": note,
        "systems": means,
    }


# coco-caption's sentence BLEU (nlg-eval) gives 1e-15 where a reply shares no n-gram of the order with a
# reference (a reply shorter than n words among them): such values print as 0.0000.
COCO_FLOOR = 1e-9
COCO_BLEU = re.compile(r"bleu-(\d)")


def _floor_note(signature: SignatureInputs, values: np.ndarray, means: Sequence[float]) -> str:
    """Why nlg-eval's sentence BLEU-n has system means that print as 0.0000, said once, on the rows
    where it happens: how many replies sit at coco's 1e-15 floor."""
    match = COCO_BLEU.fullmatch(signature.name)
    if match is None or signature.implementation != "nlg-eval" or values.size == 0:
        return ""
    at_floor = int(np.count_nonzero(values < COCO_FLOOR))
    if not at_floor or not any(abs(mean) < 5e-5 for mean in means):
        return ""
    return (
        f"{at_floor} of {values.size} replies have coco's sentence BLEU-{match.group(1)} floor of 1e-15 (no "
        f"{match.group(1)}-gram in common with a reference, e.g. a reply shorter than {match.group(1)} words): "
        "system means print as 0.0000"
    )


def _correlation_fields(
    pearson: CorrelationResult, spearman: CorrelationResult, kendall: CorrelationResult
) -> CorrelationFields:
    """Each coefficient with its p-value and Fisher-z interval, under the document's field names."""
    return {
        "pearson": pearson.coefficient,
        "pearson_p": pearson.p_value,
        "pearson_ci": [pearson.ci_low, pearson.ci_high],
        "spearman": spearman.coefficient,
        "spearman_p": spearman.p_value,
        "spearman_ci": [spearman.ci_low, spearman.ci_high],
        "kendall": kendall.coefficient,
        "kendall_p": kendall.p_value,
        "kendall_ci": [kendall.ci_low, kendall.ci_high],
    }


def _renamed_note(result: CorrelationResult) -> CorrelationResult:
    if result.note != TOO_FEW_ITEMS:
        return result
    return CorrelationResult(
        result.coefficient, result.p_value, result.ci_low, result.ci_high, result.n, FEWER_THAN_THREE_SYSTEMS
    )


def signature_fields(signature: SignatureInputs | UnvaluedMetric) -> SignatureFields:
    return {
        "metric": signature.name,
        "references": signature.references,
        "signature": signature.text,
        "group": signature.group,
        "origin": signature.origin,
        "implementation": signature.implementation,
    }


def _unvalued_row(question: str, metric: UnvaluedMetric, replies: int) -> MetricRow:
    """The row of a metric with no value for any reply: what a row has, nothing computed, and why."""
    none = CorrelationResult(None, None, None, None, 0, "")
    return {
        "question": question,
        **signature_fields(metric),
        "n": 0,
        **_correlation_fields(none, none, none),  # type: ignore[typeddict-item]  # closed parts (note at the top)
        "pearson_ci_bootstrap": [None, None],
        "spearman_ci_bootstrap": [None, None],
        "spearman_bootstrap": None,
        "left_out": {"no_metric_score": replies},
        "note": f"no values: {metric.reason}",
        "no_values": metric.reason,
    }


def _joined_notes(*results: CorrelationResult) -> str:
    notes = [result.note for result in results if result.note]
    return "; ".join(dict.fromkeys(notes))


def _scatter_data(
    question: str,
    items: np.ndarray,
    x: np.ndarray,
    values: np.ndarray,
    signatures: Sequence[SignatureInputs],
    inputs: ReportInputs,
    rows: Sequence[MetricRow],
) -> MetricPlots:
    """Points for the utterance-level scatter plots (RUBER Figures 4-5): response texts and systems once,
    one value list per metric; the browser builds the traces."""
    systems = sorted({inputs.responses[int(item)].system for item in items})
    index = {name: position for position, name in enumerate(systems)}
    return {
        "question": question,
        "systems": systems,
        "items": {
            "id": [int(item) for item in items],
            "text": [inputs.responses[int(item)].text[:HOVER_TEXT_LIMIT] for item in items],
            "system": [index[inputs.responses[int(item)].system] for item in items],
            "human": compact(x),
            "human_exact": [float(value) for value in x],  # full precision, for the bundle's inputs
            "x": compact(jitter(list(x), sd=JITTER_SD, seed=JITTER_SEED)),
        },
        "metrics": [
            {
                "signature": signature.text,
                "metric": signature.name,
                "references": signature.references,
                "pearson": row["pearson"],
                "spearman": row["spearman"],
                "values": compact_or_none(values[:, column]),
            }
            for column, (signature, row) in enumerate(zip(signatures, rows, strict=True))
        ],
    }

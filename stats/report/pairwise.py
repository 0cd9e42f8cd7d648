"""The ``pairwise`` section of a report document: system win rates from pairwise judgments, and how the
metrics' system scores rank the systems against them.

* ``systems``: per system, comparisons, wins, losses, ties, win rate (ties count half) and its 95% Wilson
  interval, best first (stats/pairwise.py);
* ``matrix``: the system x system win rates (row against column) and the judgments behind each cell;
* ``position``: how often a decisive judgment picked the reply on the left (a binomial test against 1/2);
* ``metrics``: for each metric signature, Spearman's rho across systems between the system's mean metric
  value, over its replies that were compared, and its win rate (Gupta et al. (2019) Figure 1 does the same with
  mean ratings). With fewer than 3 systems rho is not computed, and the note says so with n.

Judgments count under the report's rater filter, as ratings do: a rater the filter leaves out (the
researcher's "always exclude", or agreement on the ratings under the threshold) is left out here too; a
rater who only compared pairs has no agreement figure and counts. Judgments of a reply the researcher
excluded are left out. The section is ``None`` when the study has no pairwise judgment and no pairwise LLM
judge's verdict; with verdicts only (a judge run before the annotators compared any pair), it holds no
people's win rate (``judgments_total`` 0) and the judges stand alone.

Each pairwise LLM judge's win rates beside the people's (``judges``) are stats/report/pairwise_judges.py's.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import fmean

from stats.agreement import is_included
from stats.correlations import HUMAN_CONSTANT, TOO_FEW_ITEMS, spearman_with_ci
from stats.pairwise import PairwiseRecord, SystemWinRate, position_bias, win_rate_matrix, win_rates
from stats.report.pairwise_types import PairwiseMetricAgreement, PairwiseSection, PairwiseSystem
from stats.report.types import FILTER_NONE, AnnotatorInfo, ReportInputs, ReportOptions

METHOD = (
    "win rate = (wins + ties / 2) / comparisons over every judgment involving the system; "
    "95% Wilson score interval, judgments taken as independent"
)


def counted_records(
    records: Sequence[PairwiseRecord],
    annotators: Mapping[int, AnnotatorInfo],
    options: ReportOptions,
    study_threshold: float | None,
    excluded_responses: frozenset[int] = frozenset(),
) -> tuple[list[PairwiseRecord], set[int]]:
    """The judgments that count, and the raters left out by the filter."""
    threshold = options.threshold(study_threshold)
    left_out: set[int] = set()
    counted = []
    for record in records:
        if record.response_a in excluded_responses or record.response_b in excluded_responses:
            continue
        info = annotators.get(record.annotator)
        if info is not None and options.filter != FILTER_NONE:
            agreement = info.agreement if info.identity_known else None
            if not is_included(info.inclusion, agreement, threshold):
                left_out.add(record.annotator)
                continue
        counted.append(record)
    return counted, left_out


def pairwise_section(inputs: ReportInputs, options: ReportOptions) -> PairwiseSection | None:
    """The document's ``pairwise`` entry (see the module docstring)."""
    if not inputs.pairwise and not inputs.pairwise_judges:
        return None
    records, left_out = counted_records(
        inputs.pairwise, inputs.annotators, options, inputs.study_threshold, inputs.excluded_responses
    )
    rates = win_rates(records)
    systems = [rate.system for rate in rates]
    matrix, counts = win_rate_matrix(records, systems)
    bias = position_bias(records)
    return {
        "method": METHOD,
        "judgments": len(records),
        "judgments_total": len(inputs.pairwise),
        "pairs": len({(record.response_a, record.response_b) for record in records}),
        "raters": len({record.annotator for record in records}),
        "raters_left_out": len(left_out),
        "systems": [win_rate_entry(rate) for rate in rates],
        "matrix": {"systems": systems, "win_rate": matrix, "comparisons": counts},
        "position": {
            "decisive": bias.decisive,
            "left_wins": bias.left_wins,
            "left_share": bias.left_share,
            "p_value": bias.p_value,
        },
        "metrics": metric_agreement(records, {rate.system: rate.win_rate for rate in rates}, inputs),
    }


def win_rate_entry(rate: SystemWinRate) -> PairwiseSystem:
    """One system's win rate as the document holds it, with its Wilson interval."""
    return {
        "system": rate.system,
        "comparisons": rate.comparisons,
        "wins": rate.wins,
        "losses": rate.losses,
        "ties": rate.ties,
        "win_rate": rate.win_rate,
        "ci": [rate.ci_low, rate.ci_high],
    }


def metric_agreement(
    records: Sequence[PairwiseRecord], rates: Mapping[str, float], inputs: ReportInputs
) -> list[PairwiseMetricAgreement]:
    """Per signature: each system's mean metric value over its compared replies, and Spearman's rho of
    those means against the systems' win rates."""
    compared: dict[str, set[int]] = {}
    for record in records:
        compared.setdefault(record.system_a, set()).add(record.response_a)
        compared.setdefault(record.system_b, set()).add(record.response_b)
    rows: list[PairwiseMetricAgreement] = []
    for signature in inputs.signatures:
        values = inputs.metric_values.get(signature.id, {})
        means = {}
        for system in sorted(rates):
            scored = [
                values[response]
                for response in compared.get(system, ())
                if response in values and math.isfinite(values[response])
            ]
            if scored:
                means[system] = fmean(scored)
        if not means:
            continue
        names = sorted(means)
        # The win rates take the place of the human scores (x), as in the system-level table.
        result = spearman_with_ci([rates[name] for name in names], [means[name] for name in names])
        note = {
            TOO_FEW_ITEMS: f"fewer than 3 systems (n = {len(names)})",
            HUMAN_CONSTANT: "the systems' win rates are all equal",
        }.get(result.note, result.note)
        rows.append(
            {
                "signature": signature.text,
                "metric": signature.name,
                "references": signature.references,
                "n": len(names),
                "spearman": result.coefficient,
                "spearman_p": result.p_value,
                "note": note,
                "systems": [
                    {"system": name, "metric_mean": means[name], "win_rate": rates[name]} for name in names
                ],
            }
        )
    return rows

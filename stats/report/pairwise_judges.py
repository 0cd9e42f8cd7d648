"""The pairwise LLM judges in the report's ``pairwise`` section (``judges``): each judge's system win rates
beside the people's, and how far it is from them.

A pairwise judge (``llm-pairwise:<key>``; Zheng et al., 2023) gave a verdict on pairs of the study's
replies, asked in both orders (docs/metrics.md, "The pairwise judge", has the equations). Per judge,
stats/judge_pairwise.py ``judge_pairwise_comparison`` on the people's judgments that count under the report's
rater filter (the section's, :func:`stats.report.pairwise.counted_records`) and the judge's verdicts:

* ``systems``: per system, the people's win rate and the judge's, each with its 95% Wilson interval (a
  verdict is one comparison, a tie half a win, as a person's judgment);
* ``spearman``: Spearman's rho across the systems both compared, x the people's win rate and y the judge's,
  with its p-value and Fisher-z interval (``spearman_note`` says why when it is not computable);
* ``agreement``: of the people's decisive judgments of pairs the judge judged, the share whose winner the
  judge picks, and Cohen's kappa over first/second/tie, with their counts;
* ``position_bias``, ``consistent``, ``ties``: the judge's mean position bias (what asking both orders
  cancels), its share of pairs on which both orders agree, and its share of ties; ``note`` says a bias of
  :data:`LARGE_POSITION_BIAS` or more in words.

Verdicts on a reply the researcher excluded are left out, as the people's judgments of it are.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from collections.abc import Sequence

from stats.correlations import HUMAN_CONSTANT, METRIC_CONSTANT, TOO_FEW_FOR_INTERVAL, TOO_FEW_ITEMS
from stats.judge_pairwise import JudgedPair, JudgePairwiseComparison, judge_pairwise_comparison
from stats.pairwise import PairwiseRecord
from stats.report.pairwise import counted_records, win_rate_entry
from stats.report.pairwise_types import PairwiseJudgeEntry, PairwiseSection
from stats.report.types import PairwiseJudgeInputs, ReportInputs, ReportOptions

LARGE_POSITION_BIAS = 0.2  # |mean position bias| from which the judge's entry says it in words
NO_PEOPLE = "no people's judgment counts to compare with"


def add_pairwise_judges(
    section: PairwiseSection | None, inputs: ReportInputs, options: ReportOptions
) -> None:
    """Writes ``judges`` into the pairwise ``section`` (there is one whenever a judge gave a verdict),
    compared with the people's judgments the section counts (none, where nobody compared a pair yet: the
    judge's win rates then stand alone, its Spearman and agreement not computable)."""
    if section is None:
        return
    records, _ = counted_records(
        inputs.pairwise, inputs.annotators, options, inputs.study_threshold, inputs.excluded_responses
    )
    section["judges"] = [
        pairwise_judge_entry(judge, records, inputs.excluded_responses) for judge in inputs.pairwise_judges
    ]


def pairwise_judge_entry(
    judge: PairwiseJudgeInputs, records: Sequence[PairwiseRecord], excluded: frozenset[int] = frozenset()
) -> PairwiseJudgeEntry:
    """One judge beside the people's ``records`` (those that count), its verdicts on ``excluded`` replies
    left out."""
    pairs = [pair for pair in judge.pairs if not _touches(pair, excluded)]
    comparison = judge_pairwise_comparison(records, pairs)
    spearman = comparison.spearman
    summary = comparison.summary
    agreement = comparison.agreement
    return {
        "signature": judge.text,
        "metric": judge.name,
        "pairs": summary.pairs,
        "pairs_total": len(judge.pairs),
        "systems": [
            {
                "system": beside.system,
                "human": win_rate_entry(beside.human) if beside.human is not None else None,
                "judge": win_rate_entry(beside.judge) if beside.judge is not None else None,
            }
            for beside in comparison.systems
        ],
        "n": spearman.n,
        "spearman": spearman.coefficient,
        "spearman_p": spearman.p_value,
        "spearman_ci": [spearman.ci_low, spearman.ci_high],
        "spearman_note": _spearman_note(comparison) if records else NO_PEOPLE,
        "agreement": {
            "judgments": agreement.judgments,
            "decisive": agreement.decisive,
            "agreed": agreement.agreed,
            "share": agreement.share,
            "kappa": agreement.kappa,
        },
        "position_bias": summary.position_bias,
        "consistent": summary.consistent,
        "ties": summary.ties,
        "note": position_bias_note(summary.position_bias),
    }


def position_bias_note(bias: float | None) -> str:
    """The sentence a judge's entry carries when its mean position bias is 0.2 or more either way, else ""."""
    if bias is None or abs(bias) < LARGE_POSITION_BIAS:
        return ""
    favoured, other = ("first", "second") if bias > 0 else ("second", "first")
    return (
        f"the judge picks the reply shown {favoured} {abs(bias):.2f} more often than the {other}; "
        "asking both orders cancels it in its verdicts"
    )


def _touches(pair: JudgedPair, excluded: frozenset[int]) -> bool:
    return pair.response_a in excluded or pair.response_b in excluded


def _spearman_note(comparison: JudgePairwiseComparison) -> str:
    """Why the Spearman across systems is not computable, in the section's words."""
    note = comparison.spearman.note
    return {
        TOO_FEW_ITEMS: f"fewer than 3 systems (n = {comparison.spearman.n})",
        TOO_FEW_FOR_INTERVAL: f"too few systems for an interval (n = {comparison.spearman.n})",
        HUMAN_CONSTANT: "the people's win rates are all equal",
        METRIC_CONSTANT: "the judge's win rates are all equal",
    }.get(note, note)

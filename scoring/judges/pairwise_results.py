"""A pairwise judge's stored verdicts beside the people's judgments of the same study: what the report sets
beside its pairwise section (the report calls these; it computes no verdict).

For a study, :func:`pairwise_judge_signatures` lists the signatures of the pairwise judges that gave
verdicts on its pairs, and :func:`judge_pairwise_summary` compares one of them with the people
(stats/judge_pairwise.py ``judge_pairwise_comparison``): the judge's system win rates beside the people's,
their Spearman across systems, the judge's agreement with the people on the same pairs (share of decisive
judgments whose winner it picks, Cohen's kappa over first/second/tie), and its position bias and
consistency (Zheng et al., 2023).
"""

from __future__ import annotations

from annotation.models import Study
from annotation.selectors.pairwise_records import study_pairwise_records
from scoring.judge_models import PAIR_VERDICT_VALUES
from scoring.models import JudgePairVerdict, MetricSignature
from stats.judge_pairwise import JudgedPair, JudgePairwiseComparison, PairVerdict, judge_pairwise_comparison


def pairwise_judge_signatures(*, study: Study) -> list[MetricSignature]:
    """The signatures with a pairwise judge's verdicts on pairs of ``study``, by name and text."""
    judged = JudgePairVerdict.objects.filter(response_a__context__study=study).values("signature_id")
    return list(MetricSignature.objects.filter(pk__in=judged).order_by("name", "text"))


def judged_pairs(*, study: Study, signature: MetricSignature) -> list[JudgedPair]:
    """The verdicts under ``signature`` on pairs of ``study`` (one query), in pair order."""
    rows = (
        JudgePairVerdict.objects.filter(signature=signature, response_a__context__study=study)
        .order_by("response_a_id", "response_b_id")
        .values_list(
            "response_a_id",
            "response_b_id",
            "response_a__system__name",
            "response_b__system__name",
            *PAIR_VERDICT_VALUES,
        )
    )
    return [
        JudgedPair(
            a,
            b,
            system_a,
            system_b,
            PairVerdict(first, second, tie, verdict or None, bias, same, (mass_a, mass_b)),
        )
        for a, b, system_a, system_b, first, second, tie, verdict, bias, same, mass_a, mass_b in rows
    ]


def judge_pairwise_summary(*, study: Study, signature: MetricSignature) -> JudgePairwiseComparison:
    """The pairwise judge of ``signature`` beside the people's pairwise judgments of ``study`` (the module
    docstring says what it holds)."""
    return judge_pairwise_comparison(
        study_pairwise_records(study=study), judged_pairs(study=study, signature=signature)
    )

"""Reads a study's pairwise judgments for the report, as the pure records the win-rate statistics take
(stats/pairwise.py); the reading itself is annotation/selectors/pairwise_records.py, which scoring's
pairwise judges read too. And the pairwise judges' stored verdicts on the study's pairs
(scoring/judges/pairwise_results.py), which the pairwise section sets beside the people's."""

from __future__ import annotations

from annotation.models import Study
from annotation.selectors.pairwise_records import study_pairwise_records as study_pairwise_records
from scoring.judges.pairwise_results import judged_pairs, pairwise_judge_signatures
from stats.report.types import PairwiseJudgeInputs


def study_pairwise_judges(*, study: Study) -> tuple[PairwiseJudgeInputs, ...]:
    """Every pairwise judge with verdicts on pairs of ``study`` (by name and signature), with its verdicts:
    one query for the signatures and one per judge. Verdicts on replies the researcher excluded are still
    here; the pairwise section leaves them out as it leaves out the people's judgments of them."""
    return tuple(
        PairwiseJudgeInputs(
            name=signature.name,
            text=signature.text,
            pairs=tuple(judged_pairs(study=study, signature=signature)),
        )
        for signature in pairwise_judge_signatures(study=study)
    )

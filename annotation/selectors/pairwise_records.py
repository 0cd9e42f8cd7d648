"""Reads a study's pairwise judgments (one query), as the pure records the win-rate statistics take
(stats/pairwise.py): for the report's pairwise section (correlation/report/pairwise_loading.py) and for
the comparison of a pairwise judge with the people (scoring/judges/pairwise_results.py)."""

from __future__ import annotations

from annotation.models import PairwiseJudgment, Study
from stats.pairwise import PairwiseRecord


def study_pairwise_records(*, study: Study) -> tuple[PairwiseRecord, ...]:
    """Every pairwise judgment of ``study``, in the order they were given."""
    rows = (
        PairwiseJudgment.objects.filter(response_a__context__study=study)
        .order_by("pk")
        .values_list(
            "annotator_id",
            "response_a_id",
            "response_b_id",
            "response_a__system__name",
            "response_b__system__name",
            "choice",
            "shown_first_id",
        )
    )
    return tuple(
        PairwiseRecord(
            annotator=annotator,
            response_a=response_a,
            response_b=response_b,
            system_a=system_a,
            system_b=system_b,
            choice=choice,
            a_shown_left=shown_first == response_a,
        )
        for annotator, response_a, response_b, system_a, system_b, choice, shown_first in rows
    )

"""A pairwise judge's stored verdicts beside the people's judgments of the same pairs
(scoring/judges/pairwise_results.py, over stats/judge_pairwise.py)."""

from __future__ import annotations

import pytest

from annotation.models import Annotator, PairwiseJudgment
from scoring.judges.pairwise_results import judge_pairwise_summary, judged_pairs, pairwise_judge_signatures
from scoring.models import JudgePairVerdict, MetricSignature
from tests.factories import AnnotatorFactory
from tests.scoring.llm_judge.pair_studies import item_pairs, pair_study, pairwise_judge_of

pytestmark = pytest.mark.django_db


def test_the_summary_sets_the_stored_verdicts_beside_the_peoples_judgments() -> None:
    study = pair_study(contexts=1, systems=3)
    name = pairwise_judge_of(study)
    signature = MetricSignature.objects.create(text=f"{name}|version:1", name=name, version="1")
    (ab, ac, bc) = item_pairs(study)
    for (first, second), verdict, bias in ((ab, "first", 0.2), (ac, "second", -0.1), (bc, "tie", 0.0)):
        JudgePairVerdict.objects.create(
            signature=signature,
            response_a_id=first,
            response_b_id=second,
            first_better=0.6,
            second_better=0.3,
            tie=0.1,
            verdict=verdict,
            position_bias=bias,
            consistent=verdict != "tie",
            mass_first=0.9,
            mass_second=0.8,
        )
    people: list[Annotator] = AnnotatorFactory.create_batch(2, study=study)
    for annotator, (first, second), choice in (
        (people[0], ab, "a"),
        (people[1], ab, "b"),
        (people[0], ac, "b"),
    ):
        PairwiseJudgment.objects.create(
            annotator=annotator,
            response_a_id=first,
            response_b_id=second,
            choice=choice,
            shown_first_id=second,
        )
    assert pairwise_judge_signatures(study=study) == [signature]
    assert [
        (pair.judge.verdict, pair.system_a, pair.system_b)
        for pair in judged_pairs(study=study, signature=signature)
    ] == [
        ("first", "bot0", "bot1"),
        ("second", "bot0", "bot2"),
        ("tie", "bot1", "bot2"),
    ]
    summary = judge_pairwise_summary(study=study, signature=signature)
    # the judge: bot0 won and lost (1/2), bot1 lost and tied (0.5/2), bot2 won and tied (1.5/2)
    judge = {row.system: row.judge.win_rate for row in summary.systems if row.judge is not None}
    assert judge == pytest.approx({"bot0": 0.5, "bot1": 0.25, "bot2": 0.75})
    human = {row.system: row.human.win_rate for row in summary.systems if row.human is not None}
    # the people: bot0 won, lost and lost (1/3), bot1 lost and won (1/2), bot2 won (1/1)
    assert human == pytest.approx({"bot0": 1 / 3, "bot1": 0.5, "bot2": 1.0})
    assert (summary.agreement.decisive, summary.agreement.agreed) == (3, 2)  # the second person disagrees
    assert summary.summary.pairs == 3
    assert summary.summary.position_bias == pytest.approx(0.1 / 3)
    assert summary.summary.consistent == pytest.approx(2 / 3)

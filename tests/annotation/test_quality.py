"""Quality control on real rows: who is flagged (straight-lining, too fast, failed checks), who is
excluded from reports by agreement, and that the researcher's override and a threshold of None win."""

from __future__ import annotations

import pytest

from annotation.models import AttentionCheck, CheckAnswer, Rating, Reference, ReferenceOrigin
from annotation.selectors.quality import (
    AnnotatorQuality,
    excluded_annotator_ids,
    straight_lining,
    study_quality,
)
from tests.annotation.quality_builders import always_good, contrarian, rated_study

pytestmark = pytest.mark.django_db


def _by_name(rows: list[AnnotatorQuality]) -> dict[str, AnnotatorQuality]:
    return {row.pseudonym: row for row in rows}


def test_a_straight_liner_is_flagged_and_careful_raters_are_not() -> None:
    study, question, _, _ = rated_study(extra={"lazy": always_good})
    rows = _by_name(study_quality(study=study))
    lazy = rows["lazy"]
    assert lazy.straight_lined
    assert lazy.most_uniform is not None
    assert lazy.most_uniform.top_value == 2
    assert lazy.most_uniform.top_share == 1.0
    assert lazy.most_uniform.longest_run == 12
    assert lazy.agreement == pytest.approx(0.0)  # one value carries no information
    assert not rows["good-0"].straight_lined
    assert rows["good-0"].uniformity[question.name].longest_run == 1


def test_straight_lining_needs_enough_ratings_and_a_dominant_value() -> None:
    few = straight_lining(1, [2] * 9)
    assert few is not None
    assert not few.flagged  # nine are too few to say
    mostly = straight_lining(1, [2] * 18 + [1, 0])
    assert mostly is not None
    assert mostly.flagged  # 90%
    varied = straight_lining(1, [2] * 17 + [1, 0, 1])
    assert varied is not None
    assert not varied.flagged  # 85%
    assert straight_lining(1, []) is None


def test_a_too_fast_annotator_is_flagged() -> None:
    study, _, _, _ = rated_study(
        extra={"hasty": lambda i: i % 3}, seconds={"hasty": 0.4}, min_seconds_per_item=2.0
    )
    rows = _by_name(study_quality(study=study))
    assert rows["hasty"].too_fast == 12
    assert rows["hasty"].too_fast_share == 1.0
    assert rows["good-0"].too_fast == 0
    assert rows["good-0"].too_fast_share == 0.0
    assert rows["hasty"].rated_replies == 12


def test_a_disagreeing_rater_is_excluded_under_the_threshold_only() -> None:
    study, _, _, annotators = rated_study(extra={"contrary": contrarian}, kappa_threshold=0.2)
    rows = _by_name(study_quality(study=study))
    assert rows["contrary"].agreement is not None
    assert rows["contrary"].agreement < 0
    assert not rows["contrary"].included
    assert rows["good-0"].agreement == pytest.approx(1.0)
    assert rows["good-0"].included
    assert excluded_annotator_ids(study=study) == {annotators["contrary"].pk}

    study.kappa_threshold = None
    study.save()
    assert excluded_annotator_ids(study=study) == set()
    assert all(row.included for row in study_quality(study=study))


def test_the_researchers_override_beats_the_threshold() -> None:
    study, _, _, annotators = rated_study(extra={"contrary": contrarian}, kappa_threshold=0.2)
    contrary, good = annotators["contrary"], annotators["good-1"]
    contrary.report_inclusion = "include"
    contrary.save()
    good.report_inclusion = "exclude"
    good.save()
    assert excluded_annotator_ids(study=study) == {good.pk}
    rows = _by_name(study_quality(study=study))
    assert rows["contrary"].included
    assert not rows["good-1"].included
    # An excluded annotator's agreement is still computed against everyone (no cascade): unchanged.
    assert rows["good-0"].agreement == pytest.approx(1.0)
    assert Rating.objects.filter(annotator=contrary).count() == 12  # nothing deleted


def test_too_few_shared_replies_keep_an_annotator_in() -> None:
    study, _, _, _ = rated_study(extra={"contrary": contrarian}, items=4, kappa_threshold=0.2)
    rows = _by_name(study_quality(study=study))
    assert rows["contrary"].agreement is None
    assert rows["contrary"].agreements["appropriateness"].items == 4
    assert rows["contrary"].included
    assert excluded_annotator_ids(study=study) == set()


def test_checks_and_collected_references_are_counted_per_annotator() -> None:
    study, question, responses, annotators = rated_study(check_failures_allowed=1)
    careless, careful = annotators["good-0"], annotators["good-1"]
    for index in range(3):
        check = AttentionCheck.objects.create(
            study=study,
            context=responses[index].context,
            text="an unrelated reply",
            question=question,
            expected_min=0,
            expected_max=0,
            origin=AttentionCheck.Origin.DISTRACTOR,
        )
        CheckAnswer.objects.create(
            attention_check=check, annotator=careless, value=2, passed=False, seconds_spent=1.0
        )
        CheckAnswer.objects.create(
            attention_check=check, annotator=careful, value=0, passed=True, seconds_spent=4.0
        )
    context = responses[0].context
    Reference.objects.create(
        context=context,
        text="sure",
        origin=ReferenceOrigin.COLLECTED,
        author=careless,
        flags=["pasted", "too-fast"],
    )
    Reference.objects.create(
        context=context, text="why not", origin=ReferenceOrigin.COLLECTED, author=careless, flags=["pasted"]
    )
    Reference.objects.create(
        context=context, text="ok then", origin=ReferenceOrigin.COLLECTED, author=careful
    )

    rows = _by_name(study_quality(study=study))
    assert (rows["good-0"].checks_answered, rows["good-0"].checks_failed, rows["good-0"].checks_passed) == (
        3,
        3,
        0,
    )
    assert rows["good-0"].checks_flagged
    assert (rows["good-1"].checks_answered, rows["good-1"].checks_failed) == (3, 0)
    assert not rows["good-1"].checks_flagged
    # Check answers count as timed answers: 12 rated replies at 5 s plus 3 checks at 1 s (< 2 s).
    assert rows["good-0"].timed_answers == 15
    assert rows["good-0"].too_fast == 3
    assert rows["good-0"].references == 2
    assert rows["good-0"].reference_flags == {"pasted": 2, "too-fast": 1}
    assert rows["good-1"].reference_flags == {}


def test_quality_costs_a_fixed_number_of_queries(django_assert_num_queries) -> None:
    study, _, _, _ = rated_study(extra={"contrary": contrarian})
    with django_assert_num_queries(5):
        study_quality(study=study)
    with django_assert_num_queries(2):
        excluded_annotator_ids(study=study)

"""The qualification round's services: training items checked against the question's scale,
pass or fail by the study's threshold, the gate before real work, and answers that are never ratings."""

from __future__ import annotations

import pytest

from annotation.models import (
    AnnotatorOrigin,
    Question,
    Rating,
    Response,
    TrainingAnswer,
    TrainingItem,
    WorkItem,
)
from annotation.selectors.admission import admission_step, training_next, training_score
from annotation.selectors.exports import rating_rows
from annotation.services.assignment import NoWork, next_assignment
from annotation.services.qualification import (
    QualificationClosed,
    TrainingInvalid,
    qualification_reset,
    training_answer_submit,
    training_item_add,
    training_item_delete,
)
from annotation.services.submissions import rating_submit
from tests.annotation.joining_builders import EXPLANATION, training_items, training_study, volunteer
from tests.annotation.work_builders import work_study
from tests.factories import AnnotatorFactory

pytestmark = pytest.mark.django_db


def _answer_all(annotator, values: list[int]):
    feedback = None
    for item, value in zip(training_items(annotator.study), values, strict=True):
        feedback = training_answer_submit(annotator=annotator, training_item_id=item.pk, value=value)
    return feedback


# ---- training items -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold_min", "gold_max", "field"),
    [(-1, 1, "gold_min"), (0, 3, "gold_max"), (2, 1, "gold_max")],
)
def test_a_gold_range_outside_the_scale_or_upside_down_is_refused(gold_min, gold_max, field) -> None:
    study = work_study(contexts=1)
    question = Question.objects.get(study=study)
    reply = Response.objects.filter(context__study=study).first()
    assert reply is not None
    with pytest.raises(TrainingInvalid) as refused:
        training_item_add(
            study=study, response=reply, question=question, gold_min=gold_min, gold_max=gold_max
        )
    assert refused.value.field == field
    assert "0-2" in refused.value.message or "below" in refused.value.message
    assert not TrainingItem.objects.exists()


def test_training_items_take_positions_in_order_and_refuse_others_replies_and_duplicates() -> None:
    study = training_study(items=2)
    first, second = training_items(study)
    assert (first.position, second.position) == (0, 1)
    assert first.explanation == EXPLANATION
    question = Question.objects.get(study=study)
    with pytest.raises(TrainingInvalid) as duplicate:
        training_item_add(study=study, response=first.response, question=question, gold_min=0, gold_max=0)
    assert duplicate.value.field == "response"
    other = work_study(contexts=1)
    foreign = Response.objects.filter(context__study=other).first()
    assert foreign is not None
    with pytest.raises(TrainingInvalid) as not_ours:
        training_item_add(study=study, response=foreign, question=question, gold_min=0, gold_max=0)
    assert not_ours.value.field == "response"
    assert not training_item_delete(study=other, training_item_id=first.pk)  # not that study's item
    assert training_item_delete(study=study, training_item_id=first.pk)
    assert training_items(study) == [second]


# ---- pass or fail ---------------------------------------------------------------------------------


def test_feedback_after_each_answer_and_passed_at_the_threshold() -> None:
    study = training_study(items=2, threshold=0.5)
    annotator = volunteer(study)
    first, second = training_items(study)
    assert training_next(annotator=annotator) == first

    wrong = training_answer_submit(annotator=annotator, training_item_id=first.pk, value=0)
    assert (wrong.correct, wrong.value, wrong.item.gold_min, wrong.item.gold_max) == (False, 0, 2, 2)
    assert wrong.item.explanation == EXPLANATION
    assert not wrong.finished
    assert training_next(annotator=annotator) == second

    right = training_answer_submit(annotator=annotator, training_item_id=second.pk, value="2")
    assert right.correct
    assert right.finished
    assert right.qualification == "passed"  # 1 of 2 = 0.5, the threshold itself
    annotator.refresh_from_db()
    assert annotator.qualification == "passed"
    assert training_score(annotator=annotator).percent == 50


def test_below_the_threshold_fails_and_four_of_five_meets_eighty_percent() -> None:
    study = training_study(items=2, threshold=0.8)
    failing = volunteer(study)
    assert _answer_all(failing, [2, 1]).qualification == "failed"
    failing.refresh_from_db()
    assert failing.qualification == "failed"

    five = training_study(items=5, threshold=0.8)
    passing = volunteer(five)
    assert _answer_all(passing, [2, 2, 0, 2, 2]).qualification == "passed"


def test_an_answer_outside_the_scale_or_not_a_number_is_refused_and_nothing_is_stored() -> None:
    study = training_study(items=1)
    annotator = volunteer(study)
    (item,) = training_items(study)
    for value in (3, -1, "", "two", None, True):
        with pytest.raises(TrainingInvalid) as refused:
            training_answer_submit(annotator=annotator, training_item_id=item.pk, value=value)
        assert refused.value.field == "value"
    assert not TrainingAnswer.objects.exists()
    other_study_item = training_items(training_study(items=1))[0]
    with pytest.raises(TrainingInvalid) as foreign:
        training_answer_submit(annotator=annotator, training_item_id=other_study_item.pk, value=2)
    assert foreign.value.field == "training_item"


def test_answering_again_keeps_the_first_answer_and_a_closed_round_takes_no_new_answer() -> None:
    study = training_study(items=2, threshold=0.5)
    annotator = volunteer(study)
    first, second = training_items(study)
    training_answer_submit(annotator=annotator, training_item_id=first.pk, value=2)
    again = training_answer_submit(annotator=annotator, training_item_id=first.pk, value=0)
    assert (again.value, again.correct) == (2, True)
    assert TrainingAnswer.objects.filter(annotator=annotator).count() == 1

    training_answer_submit(annotator=annotator, training_item_id=second.pk, value=2)
    question = Question.objects.get(study=study)
    later = Response.objects.filter(context__study=study).order_by("-id").first()
    assert later is not None
    added = training_item_add(study=study, response=later, question=question, gold_min=0, gold_max=1)
    with pytest.raises(QualificationClosed):  # passed already: a new item changes nothing for them
        training_answer_submit(annotator=annotator, training_item_id=added.pk, value=1)


def test_a_reset_sends_a_failed_volunteer_through_the_round_again() -> None:
    study = training_study(items=2)
    annotator = volunteer(study)
    _answer_all(annotator, [0, 0])
    annotator.refresh_from_db()
    assert annotator.qualification == "failed"
    qualification_reset(annotator=annotator)
    assert annotator.qualification == "pending"
    assert not TrainingAnswer.objects.filter(annotator=annotator).exists()
    assert admission_step(annotator=annotator).step == "training"  # type: ignore[union-attr]
    assert _answer_all(annotator, [2, 2]).qualification == "passed"


# ---- the gate -------------------------------------------------------------------------------------


def test_the_gate_asks_for_consent_then_training_then_opens() -> None:
    study = training_study(items=2)
    annotator = volunteer(study, consented=False)
    assert admission_step(annotator=annotator).step == "consent"  # type: ignore[union-attr]
    annotator = volunteer(study)
    step = admission_step(annotator=annotator)
    assert step is not None
    assert (step.step, step.url_name) == ("training", "work:training")
    _answer_all(annotator, [2, 2])
    annotator.refresh_from_db()
    assert admission_step(annotator=annotator) is None

    failed = volunteer(study)
    _answer_all(failed, [0, 0])
    failed.refresh_from_db()
    assert admission_step(annotator=failed).step == "failed"  # type: ignore[union-attr]


def test_no_training_items_means_no_round_and_imported_annotators_are_never_gated() -> None:
    study = work_study(contexts=1)
    annotator = volunteer(study)
    assert annotator.qualification == "pending"
    assert admission_step(annotator=annotator) is None
    imported = AnnotatorFactory.create(study=study, origin=AnnotatorOrigin.IMPORTED, consented_at=None)
    assert imported.consented_at is None
    assert admission_step(annotator=imported) is None


# ---- never ratings --------------------------------------------------------------------------------


def test_training_answers_never_count_as_ratings() -> None:
    study = training_study(items=2, threshold=0.5)
    annotator = volunteer(study)
    _answer_all(annotator, [2, 0])
    assert TrainingAnswer.objects.filter(annotator=annotator).count() == 2
    assert not Rating.objects.filter(response__context__study=study).exists()
    assert list(rating_rows(study=study)) == []
    assert set(WorkItem.objects.filter(study=study).values_list("done", flat=True)) == {0}


def test_a_reply_met_in_training_is_not_rated_for_real_by_that_volunteer_but_by_others() -> None:
    study = training_study(items=2, threshold=0.5)
    trained = {item.response_id for item in training_items(study)}
    annotator = volunteer(study)
    _answer_all(annotator, [2, 2])
    given = []
    while True:
        try:
            handout = next_assignment(annotator=annotator)
        except NoWork:
            break
        given.append(handout.assignment.item.response_id)
        rating_submit(annotator=annotator, assignment_id=handout.assignment.pk, values={"appropriateness": 1})
    assert given
    assert trained.isdisjoint(given)
    assert len(given) == Response.objects.filter(context__study=study).count() - len(trained)
    other = AnnotatorFactory.create(study=study)  # imported annotators take no training round
    others = set()
    for _ in range(Response.objects.filter(context__study=study).count()):
        handout = next_assignment(annotator=other)
        others.add(handout.assignment.item.response_id)
        rating_submit(annotator=other, assignment_id=handout.assignment.pk, values={"appropriateness": 1})
    assert trained <= others

"""Every validation rule of the reference-collection task (Gupta et al. (2019) appendix A)."""

from __future__ import annotations

import pytest

from annotation import reference_rules
from annotation.models import AssignmentStatus, Reference, WorkKind
from annotation.services.assignment import next_assignment
from annotation.services.submissions import SubmissionInvalid, diversity_submit, rating_submit, reference_add
from tests.annotation.work_builders import annotators, first_context, shown_ago, work_study


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("Sure, see you then!", "sure see you then", True),
        ("I'm   fine.", "i m fine", True),
        ("ÉTÉ", "été", True),
        ("yes", "yes please", False),
    ],
)
def test_normalisation(first, second, same):
    assert (reference_rules.normalise(first) == reference_rules.normalise(second)) is same


def test_length_rule():
    assert reference_rules.length_problem(" a ") is not None
    assert reference_rules.length_problem("ok") is None


def test_too_fast_depends_on_length():
    assert reference_rules.is_too_fast("ok", 1.0)
    assert not reference_rules.is_too_fast("ok", 2.5)
    long_reply = "x" * 150  # 150 characters in 5 s is 30 characters per second: nobody types that fast
    assert reference_rules.is_too_fast(long_reply, 5.0)
    assert not reference_rules.is_too_fast(long_reply, 20.0)
    assert not reference_rules.is_too_fast("ok", None)


@pytest.fixture
def writer(db):
    study = work_study(contexts=2, systems=1, references_wanted=4, collection_mode="one")
    annotator = annotators(study, 1)[0]
    assignment = next_assignment(annotator=annotator, kind=WorkKind.WRITE).assignment
    return annotator, assignment


def test_references_become_references_of_the_context_at_once(writer):
    annotator, assignment = writer
    texts = ["i would love to .", "not tonight , sorry .", "what time ?", "only if you pay ."]
    for done, text in enumerate(texts, start=1):
        result = reference_add(annotator=annotator, assignment_id=assignment.pk, text=text, seconds=6.0)
        assert result.remaining == 4 - done
        collected = Reference.objects.filter(context_id=assignment.item.context_id, origin="collected")
        assert collected.count() == done  # visible to multi-reference scoring straight away
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.DONE
    assert list(collected.values_list("author_id", flat=True)) == [annotator.pk] * 4
    with pytest.raises(SubmissionInvalid):
        reference_add(annotator=annotator, assignment_id=assignment.pk, text="a fifth one", seconds=6.0)


@pytest.mark.parametrize("text", ["", " ", "x", "  y  "])
def test_too_short_reply_is_refused_and_nothing_stored(writer, text):
    annotator, assignment = writer
    with pytest.raises(SubmissionInvalid) as refused:
        reference_add(annotator=annotator, assignment_id=assignment.pk, text=text, seconds=5.0)
    assert refused.value.field == "text"
    assert "2 characters" in refused.value.message
    assert not Reference.objects.filter(author=annotator).exists()


def test_repeated_reply_after_normalisation_is_refused(writer):
    annotator, assignment = writer
    reference_add(annotator=annotator, assignment_id=assignment.pk, text="See you at eight!", seconds=5.0)
    with pytest.raises(SubmissionInvalid) as refused:
        reference_add(annotator=annotator, assignment_id=assignment.pk, text="see you at eight", seconds=5.0)
    assert "already wrote" in refused.value.message
    assert Reference.objects.filter(author=annotator).count() == 1


def test_pasted_and_too_fast_replies_are_flagged_and_warned_when_consistent(writer):
    annotator, assignment = writer
    first = reference_add(
        annotator=annotator, assignment_id=assignment.pk, text="sounds good", seconds=9.0, keystrokes=11
    )
    assert first.warnings == []  # once is not "consistently"
    second = reference_add(
        annotator=annotator,
        assignment_id=assignment.pk,
        text="no way",
        seconds=8.0,
        pasted=True,
        keystrokes=6,
    )
    assert second.warnings
    flags = list(Reference.objects.filter(author=annotator).order_by("id").values_list("flags", flat=True))
    assert flags == [["too-fast"], ["pasted", "too-fast"]]


def test_same_as_another_writers_reply_is_flagged_not_refused(db):
    study = work_study(contexts=1, systems=1, references_wanted=2, collection_mode="each")
    first, second = annotators(study, 2)
    for annotator in (first, second):
        assignment = next_assignment(annotator=annotator, kind=WorkKind.WRITE).assignment
        shown_ago(assignment.pk, 10)
        reference_add(
            annotator=annotator,
            assignment_id=assignment.pk,
            text="Yes, of course.",
            seconds=5.0,
            keystrokes=15,
        )
    assert Reference.objects.get(author=second).flags == ["same-as-existing"]


def test_someone_elses_assignment_is_refused(writer):
    annotator, assignment = writer
    stranger = annotators(annotator.study, 1)[0]
    with pytest.raises(SubmissionInvalid) as refused:
        reference_add(annotator=stranger, assignment_id=assignment.pk, text="hello there", seconds=5.0)
    assert refused.value.field == "assignment"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({}, "appropriateness"),
        ({"appropriateness": 3}, "appropriateness"),
        ({"appropriateness": "x"}, "appropriateness"),
        ({"appropriateness": 1, "fluency": 2}, "fluency"),
    ],
)
def test_rating_values_are_checked_against_the_questions(values, field):
    study = work_study(contexts=1, systems=1)
    annotator = annotators(study, 1)[0]
    assignment = next_assignment(annotator=annotator).assignment
    with pytest.raises(SubmissionInvalid) as refused:
        rating_submit(annotator=annotator, assignment_id=assignment.pk, values=values)
    assert refused.value.field == field
    assert not annotator.ratings.exists()
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE


@pytest.mark.django_db
def test_diversity_judgment_rules():
    study = work_study(contexts=1, systems=1, diversity_enabled=True)
    context = first_context(study)
    bot = context.responses.get().system
    for index in range(1, 4):
        context.responses.create(system=bot, text=f"sample reply {index}", sample_index=index)
    annotator = annotators(study, 1)[0]
    assignment = next_assignment(annotator=annotator, kind=WorkKind.DIVERSITY).assignment
    replies = list(context.responses.values_list("pk", flat=True))
    with pytest.raises(SubmissionInvalid) as refused:
        diversity_submit(
            annotator=annotator, assignment_id=assignment.pk, appropriate=replies[:2], meanings=3
        )
    assert refused.value.field == "meanings"
    with pytest.raises(SubmissionInvalid):
        diversity_submit(annotator=annotator, assignment_id=assignment.pk, appropriate=[-5], meanings=1)
    diversity_submit(annotator=annotator, assignment_id=assignment.pk, appropriate=replies[:3], meanings=2)
    judgment = annotator.diversity_judgments.get()
    assert (judgment.meanings, sorted(judgment.appropriate.values_list("pk", flat=True))) == (2, replies[:3])

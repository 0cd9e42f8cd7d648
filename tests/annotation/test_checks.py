"""Attention checks made by the researcher (a marked reply) or by the app (distractors from another
context), with their expected ranges, and handed out through the real assignment engine."""

from __future__ import annotations

import pytest

from annotation.models import AttentionCheck, DialogContext, Question, Reference, Response, WorkItem, WorkKind
from annotation.reference_rules import normalise
from annotation.services.assignment import next_assignment
from annotation.services.checks import CheckInvalid, check_mark, distractors_generate, low_end_range
from annotation.services.studies import study_create
from annotation.services.submissions import rating_submit
from annotation.services.work_items import work_items_sync
from tests.factories import (
    AnnotatorFactory,
    DialogContextFactory,
    QuestionFactory,
    ResearcherFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)

pytestmark = pytest.mark.django_db


def _study(contexts: int = 4, scale: str = "0-2", name: str = "", **fields: object):
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name=f"checks {owner.pk} {name}", scale=scale)
    for name, value in fields.items():
        setattr(study, name, value)
    study.save()
    bots = [SystemFactory.create(study=study, name=f"bot-{n}") for n in range(2)]
    for index in range(contexts):
        context = DialogContextFactory.create(
            study=study, turns=[{"speaker": "A", "text": f"what about topic {index} ?"}]
        )
        for bot in bots:
            ResponseFactory.create(context=context, system=bot, text=f"{bot.name} on topic {index}")
    work_items_sync(study=study)
    return study


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [(0, 2, (0, 0)), (1, 5, (1, 2)), (0, 4, (0, 1)), (0, 1, (0, 0)), (1, 10, (1, 3))],
)
def test_the_expected_range_of_a_distractor_is_the_low_end_of_the_scale(low, high, expected) -> None:
    assert low_end_range(Question(scale_min=low, scale_max=high)) == expected


def test_a_marked_reply_becomes_a_check_with_its_range_and_a_work_item() -> None:
    study = _study()
    reply = Response.objects.filter(context__study=study).first()
    assert reply is not None
    question = study.questions.get()
    check = check_mark(study=study, response=reply, question=question, expected_min=2, expected_max=2)
    assert check.origin == AttentionCheck.Origin.MARKED
    assert (check.text, check.context_id, check.source_response_id) == (
        reply.text,
        reply.context_id,
        reply.pk,
    )
    assert (check.expected_min, check.expected_max) == (2, 2)
    assert WorkItem.objects.filter(study=study, kind=WorkKind.CHECK, attention_check=check).exists()
    with pytest.raises(CheckInvalid) as again:
        check_mark(study=study, response=reply, question=question, expected_min=2, expected_max=2)
    assert again.value.field == "response"


@pytest.mark.parametrize(
    ("low", "high", "field"),
    [(0, 3, "expected_max"), (-1, 0, "expected_min"), (2, 1, "expected_max")],
)
def test_a_marked_check_outside_the_scale_names_the_field(low, high, field) -> None:
    study = _study()
    reply = Response.objects.filter(context__study=study).first()
    assert reply is not None
    with pytest.raises(CheckInvalid) as error:
        check_mark(
            study=study, response=reply, question=study.questions.get(), expected_min=low, expected_max=high
        )
    assert error.value.field == field
    assert not AttentionCheck.objects.exists()


def test_a_reply_or_question_of_another_study_is_refused() -> None:
    study = _study()
    stranger = ResponseFactory.create()
    with pytest.raises(CheckInvalid) as error:
        check_mark(
            study=study, response=stranger, question=study.questions.get(), expected_min=0, expected_max=0
        )
    assert error.value.field == "response"
    reply = Response.objects.filter(context__study=study).first()
    assert reply is not None
    other_question = QuestionFactory.create(study=StudyFactory.create())
    with pytest.raises(CheckInvalid) as error:
        check_mark(study=study, response=reply, question=other_question, expected_min=0, expected_max=0)
    assert error.value.field == "question"


def test_distractors_come_from_another_context_and_expect_a_low_score() -> None:
    study = _study(contexts=5, scale="1-5")
    made = distractors_generate(study=study, count=5, seed=1)
    assert len(made) == 5
    replies = {reply.pk: reply for reply in Response.objects.filter(context__study=study)}
    for check in AttentionCheck.objects.filter(study=study):
        assert check.origin == AttentionCheck.Origin.DISTRACTOR
        assert check.source_response_id is not None
        source = replies[check.source_response_id]
        assert source.context_id != check.context_id
        assert check.text == source.text
        assert (check.expected_min, check.expected_max) == (1, 2)
    # Five contexts, five checks: every context is used once before any is used twice.
    assert len({check.context_id for check in made}) == 5
    assert WorkItem.objects.filter(study=study, kind=WorkKind.CHECK).count() == 5


def test_distractors_are_reproducible_with_a_seed_and_never_repeat_a_pair() -> None:
    first = _study(contexts=4)
    second = _study(contexts=4)  # another study with the same shape
    texts = [
        [c.text for c in distractors_generate(study=study, count=6, seed=42)] for study in (first, second)
    ]
    assert texts[0] == texts[1]
    more = distractors_generate(study=first, count=200, seed=42)
    every = list(AttentionCheck.objects.filter(study=first).values_list("context_id", "source_response_id"))
    assert len(every) == len(set(every))
    # Four contexts, each can take the six replies of the other three: 24 pairs in all.
    assert len(every) == 24
    assert len(more) == 18
    with pytest.raises(CheckInvalid) as error:
        distractors_generate(study=first, count=1)
    assert error.value.field == "count"


def test_a_distractor_never_repeats_a_reply_or_reference_of_its_own_context() -> None:
    study = _study(contexts=2)
    first, second = DialogContext.objects.filter(study=study).order_by("id")
    # The second context's two replies say what the first's reference and one of its replies say (in
    # other case, spacing and punctuation): the first context can take no distractor, and the second
    # only the first context's other reply.
    Reference.objects.create(context=first, text="BOT-0 on topic 1", origin="original")
    Response.objects.filter(context=first, system__name="bot-0").update(text="Bot-1   on topic 1 !")
    made = distractors_generate(study=study, count=10, seed=3)
    assert [check.text for check in made] == ["bot-1 on topic 0"]
    for check in made:
        own = [reply.text for reply in Response.objects.filter(context_id=check.context_id)]
        own += [reference.text for reference in Reference.objects.filter(context_id=check.context_id)]
        assert normalise(check.text) not in {normalise(text) for text in own}
    assert all(check.context_id == second.pk for check in made)


def test_distractors_need_two_contexts_and_a_sane_count() -> None:
    lonely = _study(contexts=1)
    with pytest.raises(CheckInvalid) as error:
        distractors_generate(study=lonely, count=1)
    assert error.value.field == "count"
    study = _study(contexts=3)
    for count in (0, 201):
        with pytest.raises(CheckInvalid) as error:
            distractors_generate(study=study, count=count)
        assert error.value.field == "count"
    empty = StudyFactory.create()
    with pytest.raises(CheckInvalid) as error:
        distractors_generate(study=empty, count=1)
    assert error.value.field == "question"


def test_a_generated_check_reaches_annotators_and_a_high_score_fails_it() -> None:
    study = _study(contexts=3, check_interval=1)
    distractors_generate(study=study, count=1, seed=0)
    annotator = AnnotatorFactory.create(study=study)
    handout = next_assignment(annotator=annotator)
    assert handout.assignment.item.kind == WorkKind.CHECK
    result = rating_submit(
        annotator=annotator, assignment_id=handout.assignment.pk, values={"appropriateness": 2}
    )
    assert result.warnings
    check = AttentionCheck.objects.get(study=study)
    assert check.answers.get().passed is False

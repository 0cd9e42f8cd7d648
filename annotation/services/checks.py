"""Attention checks: replies whose right answer is known, mixed into the rating queue ("Quality
control"; Gupta et al. (2019) section 5.1.1 used attention checks on Mechanical Turk).

Two ways to make one:

* :func:`check_mark`: the researcher picks a reply of the study and the range of scores a careful rater
  gives it. The check is a *copy* (an :class:`AttentionCheck` holding the text), so answers to it never
  mix with the real reply's ratings.
* :func:`distractors_generate`: the app shows a context with a reply taken from a different context of
  the study, which should score low on the question (appropriateness): "unrelated" is approximated by
  "another context, and not the same text as any reply or reference of this one" (the only thing that
  can be told without reading). The expected range is the low end of the scale:
  :func:`low_end_range`.

Both bring the study's work items up to date, so the new checks are handed out at once.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from django.db import transaction

from annotation.models import AttentionCheck, DialogContext, Question, Reference, Response, Study
from annotation.reference_rules import normalise
from annotation.services.work_items import work_items_sync

MAX_DISTRACTORS_PER_CALL = 200


class CheckInvalid(Exception):
    """An attention check that cannot be made; ``field`` names the form field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def low_end_range(question: Question) -> tuple[int, int]:
    """The scores a reply from an unrelated dialog should get: the lowest quarter of the scale, and at
    least its lowest point. 0-2 (bad/borderline/good) -> [0, 0]; 1-5 -> [1, 2]; 0-4 -> [0, 1];
    1-10 -> [1, 3]. A mid-scale answer to an unrelated reply fails the check."""
    span = question.scale_max - question.scale_min
    return question.scale_min, question.scale_min + span // 4


def _study_question(study: Study, question: Question | None) -> Question:
    if question is None:
        first = Question.objects.filter(study=study).order_by("position", "id").first()
        if first is None:
            raise CheckInvalid("question", "this study asks no question yet")
        return first
    if question.study_id != study.pk:
        raise CheckInvalid("question", f"question {question.name!r} does not belong to this study")
    return question


@transaction.atomic
def check_mark(
    *,
    study: Study,
    response: Response,
    question: Question,
    expected_min: int,
    expected_max: int,
) -> AttentionCheck:
    """A copy of ``response`` becomes an attention check expecting a score in [expected_min, expected_max]."""
    if response.context.study_id != study.pk:
        raise CheckInvalid("response", f"reply {response.pk} does not belong to this study")
    question = _study_question(study, question)
    for name, value in (("expected_min", expected_min), ("expected_max", expected_max)):
        if not question.scale_min <= value <= question.scale_max:
            raise CheckInvalid(
                name,
                f"{value} is outside the scale {question.scale_min}-{question.scale_max} of {question.name}",
            )
    if expected_min > expected_max:
        raise CheckInvalid("expected_max", "the highest expected score is below the lowest")
    if AttentionCheck.objects.filter(study=study, source_response=response, question=question).exists():
        raise CheckInvalid(
            "response", f"reply {response.pk} is already an attention check for {question.name}"
        )
    check = AttentionCheck.objects.create(
        study=study,
        context=response.context,
        text=response.text,
        question=question,
        expected_min=expected_min,
        expected_max=expected_max,
        origin=AttentionCheck.Origin.MARKED,
        source_response=response,
    )
    work_items_sync(study=study)
    return check


@dataclass(frozen=True)
class _Reply:
    pk: int
    context_id: int
    text: str
    key: str  # normalised text


@transaction.atomic
def distractors_generate(
    *, study: Study, count: int, seed: int | None = None, question: Question | None = None
) -> list[AttentionCheck]:
    """``count`` distractor checks: a random context of the study shown with a reply to another context.

    ``question`` defaults to the study's first question (appropriateness in the shipped presets); the
    expected range is :func:`low_end_range`. ``seed`` makes the choice reproducible. Contexts are drawn
    without repetition while they last, and no (context, reply) pair is made twice, counting earlier
    calls; fewer than ``count`` come back only when the study has run out of pairs.
    """
    if not 1 <= count <= MAX_DISTRACTORS_PER_CALL:
        raise CheckInvalid("count", f"make between 1 and {MAX_DISTRACTORS_PER_CALL} distractors at a time")
    question = _study_question(study, question)
    expected_min, expected_max = low_end_range(question)
    contexts = list(DialogContext.objects.filter(study=study).order_by("id").values_list("pk", flat=True))
    replies = [
        _Reply(pk, context_id, text, normalise(text))
        for pk, context_id, text in Response.objects.filter(context__study=study)
        .order_by("id")
        .values_list("pk", "context_id", "text")
    ]
    if len(contexts) < 2 or len({reply.context_id for reply in replies}) < 2:
        raise CheckInvalid("count", "distractors need replies to at least two different contexts")
    own_texts: dict[int, set[str]] = {}
    for reply in replies:
        own_texts.setdefault(reply.context_id, set()).add(reply.key)
    for context_id, text in Reference.objects.filter(context__study=study).values_list("context_id", "text"):
        own_texts.setdefault(context_id, set()).add(normalise(text))
    used = set(
        AttentionCheck.objects.filter(study=study, origin=AttentionCheck.Origin.DISTRACTOR).values_list(
            "context_id", "source_response_id"
        )
    )

    rng = random.Random(seed)
    made: list[AttentionCheck] = []
    pool: list[int] = []
    exhausted: set[int] = set()
    while len(made) < count and len(exhausted) < len(contexts):
        if not pool:
            pool = [pk for pk in contexts if pk not in exhausted]
            rng.shuffle(pool)
        context_id = pool.pop()
        candidates = [
            reply
            for reply in replies
            if reply.context_id != context_id
            and reply.key not in own_texts.get(context_id, set())
            and (context_id, reply.pk) not in used
        ]
        if not candidates:
            exhausted.add(context_id)
            continue
        reply = rng.choice(candidates)
        used.add((context_id, reply.pk))
        made.append(
            AttentionCheck(
                study=study,
                context_id=context_id,
                text=reply.text,
                question=question,
                expected_min=expected_min,
                expected_max=expected_max,
                origin=AttentionCheck.Origin.DISTRACTOR,
                source_response_id=reply.pk,
            )
        )
    if not made:
        raise CheckInvalid("count", "every context already has every possible distractor")
    AttentionCheck.objects.bulk_create(made)
    work_items_sync(study=study)
    return made

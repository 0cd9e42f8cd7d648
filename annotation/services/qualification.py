"""The qualification round: training items with a known answer, shown to each new volunteer
before real work, with feedback after every answer.

The researcher marks a reply of the study as a training item for one question, with the range of scores
that counts as right (``gold_min``-``gold_max``, inside the question's scale) and an explanation
(:func:`training_item_add`). A volunteer whose ``qualification`` is "pending" answers them in position order
(:func:`training_answer_submit`); when every item is answered, the share answered right decides: at least
``Study.qualification_threshold`` -> "passed", else "failed" (:func:`qualification_decide`). Answers are
:class:`TrainingAnswer` rows, never ratings, so no report or export sees them. The researcher can send a
volunteer through the round again (:func:`qualification_reset`, which drops their training answers).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Max

from annotation.models import Annotator, Question, Response, Study, TrainingAnswer, TrainingItem
from annotation.qualification_rule import qualification_passes
from annotation.selectors.admission import TrainingScore, training_score

PENDING, PASSED, FAILED = "pending", "passed", "failed"
MAX_EXPLANATION = 2000


class TrainingInvalid(Exception):
    """A training item or answer that cannot be stored; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class QualificationClosed(Exception):
    """The annotator is not in the qualification round (they passed or failed already)."""


def _in_scale(question: Question, field: str, value: int) -> None:
    if not question.scale_min <= value <= question.scale_max:
        raise TrainingInvalid(
            field,
            f"{value} is outside the scale {question.scale_min}-{question.scale_max} of {question.name}",
        )


@transaction.atomic
def training_item_add(
    *,
    study: Study,
    response: Response,
    question: Question,
    gold_min: int,
    gold_max: int,
    explanation: str = "",
) -> TrainingItem:
    """``response`` becomes the study's next training item for ``question``, right within [gold_min, gold_max]."""
    if response.context.study_id != study.pk:
        raise TrainingInvalid("response", f"reply {response.pk} does not belong to this study")
    if question.study_id != study.pk:
        raise TrainingInvalid("question", f"question {question.name!r} does not belong to this study")
    _in_scale(question, "gold_min", gold_min)
    _in_scale(question, "gold_max", gold_max)
    if gold_min > gold_max:
        raise TrainingInvalid("gold_max", "the highest right score is below the lowest")
    explanation = explanation.strip()
    if len(explanation) > MAX_EXPLANATION:
        raise TrainingInvalid("explanation", f"at most {MAX_EXPLANATION} characters")
    if TrainingItem.objects.filter(response=response, question=question).exists():
        raise TrainingInvalid(
            "response", f"reply {response.pk} is already a training item for {question.name}"
        )
    last = TrainingItem.objects.filter(study=study).aggregate(last=Max("position"))["last"]
    return TrainingItem.objects.create(
        study=study,
        response=response,
        question=question,
        gold_min=gold_min,
        gold_max=gold_max,
        explanation=explanation,
        position=0 if last is None else last + 1,
    )


def training_item_delete(*, study: Study, training_item_id: int) -> bool:
    """Remove one of the study's training items (and the answers to it); False when there was none."""
    deleted, _ = TrainingItem.objects.filter(study=study, pk=training_item_id).delete()
    return deleted > 0


@dataclass(frozen=True)
class TrainingFeedback:
    """What the volunteer is told after a training answer, and where the round stands."""

    item: TrainingItem
    value: int
    correct: bool
    score: TrainingScore
    qualification: str  # pending while items remain; passed or failed once all are answered

    @property
    def finished(self) -> bool:
        return self.qualification != PENDING


def qualification_decide(*, annotator: Annotator) -> str:
    """Passed or failed once every training item is answered (pending before); stored on the annotator.

    Only a pending annotator changes (a conditional update), so two answers arriving at once decide once."""
    score = training_score(annotator=annotator)
    if annotator.qualification != PENDING or score.total == 0 or score.answered < score.total:
        return str(annotator.qualification)
    passed = qualification_passes(
        correct=score.correct, total=score.total, threshold=annotator.study.qualification_threshold
    )
    outcome = PASSED if passed else FAILED
    Annotator.objects.filter(pk=annotator.pk, qualification=PENDING).update(qualification=outcome)
    annotator.refresh_from_db(fields=["qualification"])
    return str(annotator.qualification)


def _feedback(annotator: Annotator, answer: TrainingAnswer) -> TrainingFeedback:
    return TrainingFeedback(
        item=answer.training_item,
        value=answer.value,
        correct=answer.correct,
        score=training_score(annotator=annotator),
        qualification=str(annotator.qualification),
    )


def training_feedback(*, annotator: Annotator, answer: TrainingAnswer) -> TrainingFeedback:
    """The feedback on an answer given earlier (the page shown after the answer, on a reload)."""
    return _feedback(annotator, answer)


@transaction.atomic
def training_answer_submit(
    *, annotator: Annotator, training_item_id: int, value: object, seconds: float | None = None
) -> TrainingFeedback:
    """Store the annotator's answer to one training item of their study and say whether it was right.

    Answering an item again returns the feedback on the first answer (a double click changes nothing).
    Raises :class:`TrainingInvalid` (``training_item``, ``value``) or :class:`QualificationClosed`."""
    item = (
        TrainingItem.objects.select_related("question", "response__context", "study")
        .filter(pk=training_item_id, study_id=annotator.study_id)
        .first()
    )
    if item is None:
        raise TrainingInvalid("training_item", "no such training item in this study")
    earlier = TrainingAnswer.objects.filter(training_item=item, annotator=annotator).first()
    if earlier is not None:
        return _feedback(annotator, earlier)
    if annotator.qualification != PENDING:
        raise QualificationClosed(f"You already {annotator.qualification} the qualification round.")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TrainingInvalid("value", f"choose a score for {item.question.name}")
    try:
        number = int(value)
    except ValueError:
        raise TrainingInvalid("value", f"choose a score for {item.question.name}") from None
    _in_scale(item.question, "value", number)
    try:
        with transaction.atomic():
            answer = TrainingAnswer.objects.create(
                training_item=item,
                annotator=annotator,
                value=number,
                correct=item.accepts(number),
                seconds_spent=seconds,
            )
    except IntegrityError:  # the same answer posted twice at once: the first one counts
        answer = TrainingAnswer.objects.get(training_item=item, annotator=annotator)
    qualification_decide(annotator=annotator)
    return _feedback(annotator, answer)


@transaction.atomic
def qualification_reset(*, annotator: Annotator) -> Annotator:
    """Send the annotator through the qualification round again: pending, their training answers dropped."""
    TrainingAnswer.objects.filter(annotator=annotator).delete()
    Annotator.objects.filter(pk=annotator.pk).update(qualification=PENDING)
    annotator.refresh_from_db(fields=["qualification"])
    return annotator

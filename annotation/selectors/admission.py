"""Whether a volunteer may start real work yet: the consent, then the qualification round.

A volunteer (``Annotator.origin == volunteer``) goes through two steps before their first item of any task:

1. *consent*: they accept the study's consent text (``Annotator.consented_at``);
2. *training*: when the study has training items and their ``qualification`` is still "pending", they answer
   the training items first, in position order, with feedback after each answer; the share answered within
   the gold range decides "passed" (real work starts) or "failed" (no work; the researcher may reset them).

Imported annotators have no account and are never gated. :func:`admission_step` is the one rule the pages
(annotation/joining/admission.py) and the annotator API (annotation/work/api.py) both apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from annotation.models import Annotator, AnnotatorOrigin, Study, TrainingAnswer, TrainingItem
from annotation.selectors.work import question_payload

CONSENT = "consent"
TRAINING = "training"
FAILED = "failed"


@dataclass(frozen=True)
class AdmissionStep:
    """What stands between a volunteer and real work: ``step`` is consent, training or failed."""

    step: str
    message: str

    @property
    def url_name(self) -> str:
        """The annotator page that deals with the step."""
        return "work:consent" if self.step == CONSENT else "work:training"


def study_has_training(*, study_id: int) -> bool:
    return TrainingItem.objects.filter(study_id=study_id).exists()


def with_training_flag(annotators: QuerySet[Annotator]) -> QuerySet[Annotator]:
    """``annotators`` with ``study_has_training`` read in the same query (for :func:`admission_step` on
    every annotator API request)."""
    return annotators.annotate(
        study_has_training=Exists(TrainingItem.objects.filter(study_id=OuterRef("study_id")))
    )


def admission_step(*, annotator: Annotator, has_training: bool | None = None) -> AdmissionStep | None:
    """The step the annotator must take before real work, or None when they may work. ``has_training``:
    whether the study has training items, when the caller read it already (:func:`with_training_flag`)."""
    if annotator.origin != AnnotatorOrigin.VOLUNTEER:
        return None
    if annotator.consented_at is None:
        return AdmissionStep(
            CONSENT, "Please read and accept the study's consent form before your first item."
        )
    if annotator.qualification == "failed":
        return AdmissionStep(
            FAILED,
            "You did not pass this study's qualification round, so it has no work for you. "
            "Thank you for your time.",
        )
    if has_training is None:
        has_training = study_has_training(study_id=annotator.study_id)
    if annotator.qualification == "pending" and has_training:
        return AdmissionStep(
            TRAINING, "Please do the short qualification round first: a few practice items with feedback."
        )
    return None


def admission_api_message(*, annotator: Annotator, step: AdmissionStep) -> str:
    """The step's message with where to deal with it, for the annotator API's 403."""
    study_id = annotator.study_id
    where = {
        CONSENT: f"Read it at /work/{study_id}/consent/ or accept it with POST /api/work/{study_id}/consent/.",
        TRAINING: f"Get the first practice item with GET /api/work/{study_id}/training/next/ "
        f"(or at /work/{study_id}/training/).",
        FAILED: "",
    }[step.step]
    return f"{step.message} {where}".strip()


def consent_text(*, study: Study) -> str:
    """What the volunteer accepts: the study's consent text, else its description and instructions."""
    if study.consent_text.strip():
        return study.consent_text
    return "\n\n".join(part for part in (study.description.strip(), study.instructions.strip()) if part)


def training_items(*, study: Study) -> QuerySet[TrainingItem]:
    """The study's training items in the order volunteers get them, with their reply, context and question."""
    return (
        TrainingItem.objects.filter(study=study)
        .select_related("response__context", "question")
        .order_by("position", "id")
    )


def training_next(*, annotator: Annotator) -> TrainingItem | None:
    """The first training item (in position order) the annotator has not answered yet."""
    return (
        TrainingItem.objects.filter(study_id=annotator.study_id)
        .exclude(answers__annotator=annotator)
        .select_related("response__context", "question")
        .order_by("position", "id")
        .first()
    )


@dataclass(frozen=True)
class TrainingScore:
    answered: int
    correct: int
    total: int  # training items of the study

    @property
    def share(self) -> float:
        """Share of the study's training items answered within the gold range (0 with no items)."""
        return self.correct / self.total if self.total else 0.0

    @property
    def percent(self) -> int:
        return round(100 * self.share)


def training_score(*, annotator: Annotator) -> TrainingScore:
    answers = TrainingAnswer.objects.filter(annotator=annotator).aggregate(
        answered=Count("id"), correct=Count("id", filter=Q(correct=True))
    )
    return TrainingScore(
        answered=int(answers["answered"]),
        correct=int(answers["correct"]),
        total=TrainingItem.objects.filter(study_id=annotator.study_id).count(),
    )


def training_answer_of(*, annotator: Annotator, training_item_id: int) -> TrainingAnswer | None:
    """The annotator's own answer to one training item of their study (None when not answered)."""
    return (
        TrainingAnswer.objects.filter(
            annotator=annotator,
            training_item_id=training_item_id,
            training_item__study_id=annotator.study_id,
        )
        .select_related("training_item__response__context", "training_item__question")
        .first()
    )


def training_item_payload(*, item: TrainingItem) -> dict[str, object]:
    """A training item as the annotator sees it: blind like a rating item (no system name), one question."""
    question = item.question
    return {
        "training_item": item.pk,
        "turns": [
            {
                "speaker": str(turn.get("speaker", "")),
                "text": str(turn.get("text", "")),
                "is_query": index == len(item.response.context.turns) - 1,
            }
            for index, turn in enumerate(item.response.context.turns)
        ],
        "reply": item.response.text,
        "question": question_payload([question])[0],
    }


@dataclass(frozen=True)
class AdmissionRow:
    """One volunteer on the researcher's page: consent, qualification and training score."""

    annotator_id: int
    pseudonym: str
    external_worker_id: str
    consented_at: datetime | None
    qualification: str
    answered: int
    correct: int


def admission_rows(*, study: Study) -> list[AdmissionRow]:
    """Every volunteer of the study with their consent and training answers (one query)."""
    rows = (
        Annotator.objects.filter(study=study, origin=AnnotatorOrigin.VOLUNTEER)
        .annotate(
            answered=Count("training_answers"),
            correct=Count("training_answers", filter=Q(training_answers__correct=True)),
        )
        .order_by("id")
    )
    return [
        AdmissionRow(
            annotator_id=row.pk,
            pseudonym=row.pseudonym,
            external_worker_id=row.external_worker_id,
            consented_at=row.consented_at,
            qualification=row.qualification,
            answered=row.answered,
            correct=row.correct,
        )
        for row in rows
    ]


def training_item_rows(*, study: Study) -> QuerySet[TrainingItem]:
    """The study's training items with how often they were answered and answered right."""
    return training_items(study=study).annotate(
        answered=Count("answers"), right=Count("answers", filter=Q(answers__correct=True))
    )

"""Studies with a qualification round and volunteers who joined them, for the joining tests,
built with the real services."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from annotation.models import Annotator, Question, Response, Study, TrainingItem
from annotation.services.annotators import annotator_join
from annotation.services.joining import annotator_consent
from annotation.services.qualification import training_item_add
from tests.annotation.work_builders import work_study
from tests.factories import UserFactory

EXPLANATION = "It answers the question and moves the conversation on."


def training_study(*, items: int = 2, threshold: float = 0.8, **settings: Any) -> Study:
    """A small rating study (0-2 scale) whose first ``items`` replies are training items, right at 2."""
    study = work_study(contexts=max(3, items), systems=2, k=2, qualification_threshold=threshold, **settings)
    question = Question.objects.get(study=study)
    for response in Response.objects.filter(context__study=study).order_by("id")[:items]:
        training_item_add(
            study=study, response=response, question=question, gold_min=2, gold_max=2, explanation=EXPLANATION
        )
    return study


def training_items(study: Study) -> list[TrainingItem]:
    return list(TrainingItem.objects.filter(study=study).order_by("position", "id"))


def volunteer(study: Study, *, consented: bool = True, user: User | None = None) -> Annotator:
    """A user who joined through the invite link (and accepted the consent unless told otherwise)."""
    annotator = annotator_join(token=study.invite_token, user=user or UserFactory.create())
    return annotator_consent(annotator=annotator) if consented else annotator

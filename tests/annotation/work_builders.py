"""Small studies for the annotation-work tests, built with the real services (no mocks)."""

from __future__ import annotations

from typing import Any

from annotation.models import Annotator, DialogContext, Study
from annotation.services.studies import study_create
from annotation.services.work_items import work_items_sync
from tests.factories import (
    AnnotatorFactory,
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
)


def work_study(
    *, contexts: int = 3, systems: int = 2, k: int = 2, check_interval: int = 0, **settings: Any
) -> Study:
    """``contexts`` contexts, each with one reply per system; k ratings wanted; no checks unless asked."""
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name=f"work study {owner.pk}", ratings_per_item=k)
    for field, value in {"check_interval": check_interval, **settings}.items():
        setattr(study, field, value)
    study.save()
    bots = [SystemFactory.create(study=study, name=f"bot-{index}") for index in range(systems)]
    for index in range(contexts):
        context = DialogContextFactory.create(
            study=study,
            turns=[{"speaker": "A", "text": f"question number {index} ?"}, {"speaker": "B", "text": "hm ?"}],
        )
        for bot in bots:
            ResponseFactory.create(context=context, system=bot, text=f"{bot.name} says answer {index}")
    work_items_sync(study=study)
    return study


def annotators(study: Study, count: int) -> list[Annotator]:
    return [AnnotatorFactory.create(study=study) for _ in range(count)]


def first_context(study: Study) -> DialogContext:
    return DialogContext.objects.filter(study=study).order_by("id").first()  # type: ignore[return-value]

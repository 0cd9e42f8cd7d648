"""Small studies for the annotation-work tests, built with the real services (no mocks)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from annotation.importers import ImportFile
from annotation.models import Annotator, AttentionCheck, DialogContext, Question, Study
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from annotation.services.work_items import work_items_sync
from tests.factories import (
    AnnotatorFactory,
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
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


def web_member(study: Study) -> tuple[Annotator, Client]:
    """A consented annotator of ``study`` and a browser client logged in as them (the work pages)."""
    user = UserFactory.create()
    annotator = Annotator.objects.create(
        study=study, user=user, pseudonym=f"p{user.pk}", consented_at=timezone.now()
    )
    client = Client()
    client.force_login(user)
    return annotator, client


def annotators(study: Study, count: int) -> list[Annotator]:
    return [AnnotatorFactory.create(study=study) for _ in range(count)]


def first_context(study: Study) -> DialogContext:
    return DialogContext.objects.filter(study=study).order_by("id").first()  # type: ignore[return-value]


def shown_ago(assignment_id: int, seconds: float) -> None:
    """As if the item had been on the annotator's screen for ``seconds``: the server measures time from
    the hand-out (a writer's next reply: from their previous one), so a test that answers at once would
    otherwise answer in a few milliseconds. Earlier replies to the item's context move back too."""
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Assignment, Reference

    then = timezone.now() - timedelta(seconds=seconds)
    Assignment.objects.filter(pk=assignment_id).update(served_at=then)
    assignment = Assignment.objects.select_related("item").get(pk=assignment_id)
    if assignment.item.context_id is not None:
        Reference.objects.filter(
            context_id=assignment.item.context_id, author_id=assignment.annotator_id, created_at__gt=then
        ).update(created_at=then)


def measured(seconds: float | None) -> float:
    """A time the server must have measured (never None)."""
    assert seconds is not None, "the server measured no time"
    return seconds


def add_distractor_check(study: Study, expected: tuple[int, int] = (0, 0)) -> AttentionCheck:
    """A distractor attention check on the study's first context (expected answer in ``expected``), with
    its work item made."""
    check = AttentionCheck.objects.create(
        study=study,
        context=first_context(study),
        text="the capital of peru is lima .",
        question=Question.objects.get(study=study),
        expected_min=expected[0],
        expected_max=expected[1],
        origin=AttentionCheck.Origin.DISTRACTOR,
    )
    work_items_sync(study=study)
    return check


def imported_rating_study(owner: User, *, replies: int = 4, raters: int = 3, k: int = 3) -> Study:
    """``replies`` replies, each imported with ``raters`` raters' ratings (the 0-2 default question)."""
    study = study_create(owner=owner, name="imported ratings", ratings_per_item=k)
    study.check_interval = 0
    study.save()
    names = [f"rater-{index}" for index in range(raters)]
    records = [
        {
            "context": [f"question {index} ?"],
            "response": f"answer {index}",
            "system": "bot",
            "ratings": {"appropriateness": [index % 3] * raters},
            "annotators": names,
        }
        for index in range(replies)
    ]
    data = "".join(json.dumps(record) + "\n" for record in records).encode()
    study_import(study=study, format="jsonl", files=[ImportFile(name="rated.jsonl", data=data)])
    return study

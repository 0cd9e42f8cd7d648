"""A small study for the judges' pages and API: two questions (0-2 with words, 1-5 without), three replies
to three contexts, and two references of the first context (one of them the corpus's original)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from annotation.models import Study
from tests.factories import (
    DialogContextFactory,
    QuestionFactory,
    ReferenceFactory,
    ResearcherFactory,
    ResponseFactory,
    StudyFactory,
)

REPLIES = ["I am fine, thanks.", "The train leaves at six.", "Bananas are yellow."]


def judged_study(owner: User | None = None, *, name: str = "judged") -> Study:
    study = StudyFactory.create(name=name, owner=owner or ResearcherFactory.create())
    QuestionFactory.create(study=study, prompt="How appropriate is the reply?")
    QuestionFactory.create(
        study=study,
        name="engagingness",
        prompt="How engaging?",
        scale_min=1,
        scale_max=5,
        labels=[],
        position=1,
    )
    for index, text in enumerate(REPLIES):
        context = DialogContextFactory.create(study=study, position=index)
        ResponseFactory.create(context=context, text=text)
        if index == 0:
            ReferenceFactory.create(context=context, text="another reference", origin="imported")
            ReferenceFactory.create(context=context, text="the original reply", origin="original")
    return study


def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client

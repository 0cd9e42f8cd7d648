"""factory_boy factories for the data model (real database rows, no mocks)."""

from __future__ import annotations

import factory
from django.contrib.auth.models import Group, User
from django.utils import timezone

from annotation.models import Annotator, DialogContext, Question, Rating, Reference, Response, Study, System
from kernel.roles import RESEARCHERS_GROUP
from scoring.models import ChunkKind, RunStatus, ScoringChunk, ScoringRun


class UserFactory(factory.django.DjangoModelFactory[User]):
    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests-123")


class ResearcherFactory(UserFactory):
    @factory.post_generation
    def researcher_group(obj: User, create: bool, extracted: object, **kwargs: object) -> None:
        if create:
            group, _ = Group.objects.get_or_create(name=RESEARCHERS_GROUP)
            obj.groups.add(group)


class StudyFactory(factory.django.DjangoModelFactory[Study]):
    class Meta:
        model = Study

    owner = factory.SubFactory(ResearcherFactory)
    name = factory.Sequence(lambda n: f"study {n}")


class QuestionFactory(factory.django.DjangoModelFactory[Question]):
    class Meta:
        model = Question

    study = factory.SubFactory(StudyFactory)
    name = "appropriateness"
    scale_min = 0
    scale_max = 2
    labels = factory.LazyFunction(lambda: ["bad", "borderline", "good"])


class DialogContextFactory(factory.django.DjangoModelFactory[DialogContext]):
    class Meta:
        model = DialogContext

    study = factory.SubFactory(StudyFactory)
    external_id = factory.Sequence(lambda n: f"ctx{n}")
    turns = factory.LazyFunction(
        lambda: [
            {"speaker": "A", "text": "hello , how are you ?"},
            {"speaker": "B", "text": "fine , and you ?"},
        ]
    )


class ReferenceFactory(factory.django.DjangoModelFactory[Reference]):
    class Meta:
        model = Reference

    context = factory.SubFactory(DialogContextFactory)
    text = "i am fine too , thanks ."
    origin = "original"


class SystemFactory(factory.django.DjangoModelFactory[System]):
    class Meta:
        model = System

    study = factory.SubFactory(StudyFactory)
    name = factory.Sequence(lambda n: f"system{n}")


class ResponseFactory(factory.django.DjangoModelFactory[Response]):
    class Meta:
        model = Response

    context = factory.SubFactory(DialogContextFactory)
    system = factory.SubFactory(SystemFactory, study=factory.SelfAttribute("..context.study"))
    text = "i am fine , thank you ."


class AnnotatorFactory(factory.django.DjangoModelFactory[Annotator]):
    class Meta:
        model = Annotator

    study = factory.SubFactory(StudyFactory)
    pseudonym = factory.Sequence(lambda n: f"rater{n}")
    # Accepted the consent, so a factory annotator given a login goes straight to the work.
    consented_at = factory.LazyFunction(timezone.now)


class RatingFactory(factory.django.DjangoModelFactory[Rating]):
    class Meta:
        model = Rating

    response = factory.SubFactory(ResponseFactory)
    annotator = factory.SubFactory(AnnotatorFactory, study=factory.SelfAttribute("..response.context.study"))
    question = factory.SubFactory(QuestionFactory, study=factory.SelfAttribute("..response.context.study"))
    value = 1


def a_running_run_chunk(*, units: int = 4, **chunk_fields: object) -> ScoringChunk:
    """A running scoring run (bleu-1 on a fresh study) with one replies chunk of ``units`` units, waiting
    unless ``chunk_fields`` say otherwise: what the lease, keeper and race tests claim."""
    run = ScoringRun.objects.create(
        study=StudyFactory.create(), status=RunStatus.RUNNING, metrics=["bleu-1"], progress_total=units
    )
    return ScoringChunk.objects.create(
        run=run,
        index=0,
        kind=ChunkKind.REPLIES,
        metrics=["bleu-1"],
        units=units,
        response_ids=[],
        **chunk_fields,
    )

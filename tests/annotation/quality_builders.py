"""A rated study for the quality-control tests: a panel of agreeing raters plus the troublemakers a
researcher wants to see flagged (real database rows through the factories)."""

from __future__ import annotations

from collections.abc import Callable

from annotation.models import Annotator, Question, Rating, Response, Study
from tests.factories import (
    DialogContextFactory,
    QuestionFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)

ITEMS = 12


def truth(index: int) -> int:
    """The score careful raters give reply ``index`` on the 0-2 scale."""
    return index % 3


def rated_study(
    *,
    agreeing: int = 5,
    extra: dict[str, Callable[[int], int]] | None = None,
    items: int = ITEMS,
    seconds: dict[str, float] | None = None,
    **study_fields: object,
) -> tuple[Study, Question, list[Response], dict[str, Annotator]]:
    """``agreeing`` raters who give :func:`truth`, and one rater per entry of ``extra`` (pseudonym ->
    score of reply i); everyone rates every reply, taking 5 s unless ``seconds`` says otherwise."""
    study = StudyFactory.create(**study_fields)
    question = QuestionFactory.create(study=study)
    system = SystemFactory.create(study=study)
    responses = [
        ResponseFactory.create(
            context=DialogContextFactory.create(study=study), system=system, text=f"reply number {i}"
        )
        for i in range(items)
    ]
    scorers: dict[str, Callable[[int], int]] = {f"good-{n}": truth for n in range(agreeing)}
    scorers.update(extra or {})
    annotators = {}
    for pseudonym, score in scorers.items():
        annotator = Annotator.objects.create(study=study, pseudonym=pseudonym)
        annotators[pseudonym] = annotator
        Rating.objects.bulk_create(
            Rating(
                annotator=annotator,
                response=response,
                question=question,
                value=score(index),
                seconds_spent=(seconds or {}).get(pseudonym, 5.0),
            )
            for index, response in enumerate(responses)
        )
    return study, question, responses, annotators


def contrarian(index: int) -> int:
    return 2 - truth(index)


def always_good(index: int) -> int:
    return 2

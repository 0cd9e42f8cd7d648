"""Small studies with the pairwise task, for the pairwise judges' tests."""

from __future__ import annotations

from annotation.models import Study, WorkItem, WorkKind
from annotation.services.work_items import work_items_sync
from scoring.judges.definitions import JudgeRequest, judge_metric_names
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)

PROMPT = "Which reply answers the question better?"
CONTEXTS = (
    ("Where is the station?", ["Two blocks north, next to the bank.", "Bananas are yellow.", "Go north."]),
    ("Do you like music?", ["I like cheese.", "Yes, mostly jazz. And you?", "Music is sound."]),
)


def pair_study(*, contexts: int = 2, systems: int = 3, items: bool = True) -> Study:
    """ "paired": ``contexts`` contexts (each with a reference) answered by ``systems`` systems ``bot0``,
    ``bot1``, ..., the pairwise task on: S(S-1)/2 pairs of replies per context, as pairwise work items when
    ``items``."""
    study = StudyFactory.create(name="paired", pairwise_enabled=True, pairwise_prompt=PROMPT)
    bots = [SystemFactory.create(study=study, name=f"bot{index}") for index in range(systems)]
    for position, (turn, replies) in enumerate(CONTEXTS[:contexts]):
        context = DialogContextFactory.create(
            study=study, position=position, turns=[{"speaker": "A", "text": turn}]
        )
        ReferenceFactory.create(context=context, text=replies[0])
        for bot, reply in zip(bots, replies, strict=False):
            ResponseFactory.create(context=context, system=bot, text=reply)
    if items:
        work_items_sync(study=study)
    return study


def item_pairs(study: Study) -> list[list[int]]:
    """The [response_a, response_b] of the study's pairwise work items, in order."""
    rows = WorkItem.objects.filter(study=study, kind=WorkKind.PAIR).values_list(
        "response_id", "response_b_id"
    )
    return sorted([first, second] for first, second in rows)


def pairwise_judge_of(study: Study) -> str:
    """The name of the study's pairwise judge with the shipped template, its definition stored."""
    (name,) = judge_metric_names(study=study, requests=[JudgeRequest("pairwise")], user=None)
    return name

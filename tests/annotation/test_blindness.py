"""Blind rating: whatever an annotator is sent — the API's next, previous and submit answers,
and the rating page's HTML — never names a system, never carries a rating item's response id, and
never shows another annotator's answer or pseudonym. An attention check looks exactly like a real item.

The study is built so that a leak is visible as text: system names are unusual words, response ids are
large numbers that appear nowhere else, and every annotator answers with a time of their own
(``seconds``) that would show if someone else's rating leaked.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from annotation.models import AttentionCheck, DialogContext, Question, Rating, Response, System
from annotation.services.studies import study_create
from annotation.services.work_items import work_items_sync
from tests.api.work_api_support import Member, members
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db

SYSTEM_NAMES = ("zorblax-generator", "quintessa-beam", "humanoid-baseline")
FIRST_RESPONSE_ID = 937_001
CONTEXTS = 6
ANNOTATORS = 5
K = 3

RATE_KEYS = {
    "assignment", "kind", "status", "sequence", "turns", "reply", "questions", "answers",
    "done", "resumed", "progress",
}  # fmt: skip
NESTED_KEYS = {
    "turns": {"speaker", "text", "is_query"},
    "questions": {"name", "prompt", "kind", "scale_min", "scale_max", "points"},
    "points": {"value", "label"},
    "progress": {"done", "total", "percent", "skipped"},
}


def _seconds_of(index: int) -> float:
    """A time only annotator ``index`` ever sends (to spot their ratings anywhere else)."""
    return 4321.0 + 111.125 * index


def _blind_study():
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="blind study", ratings_per_item=K)
    study.check_interval = 4
    study.kappa_threshold = None
    study.save()
    systems = [System.objects.create(study=study, name=name) for name in SYSTEM_NAMES]
    next_id = FIRST_RESPONSE_ID
    for index in range(CONTEXTS):
        context = DialogContext.objects.create(
            study=study,
            external_id=f"ctx-{index}",
            turns=[
                {"speaker": "A", "text": f"shall we meet at {index} ?"},
                {"speaker": "B", "text": "why ?"},
            ],
            position=index,
        )
        for system in systems:
            Response.objects.create(
                pk=next_id, context=context, system=system, text=f"a reply, number {next_id - 937_000}"
            )
            next_id += 1
    question = Question.objects.get(study=study)
    first = DialogContext.objects.get(study=study, external_id="ctx-0")
    AttentionCheck.objects.create(
        study=study,
        context=first,
        text="the moon is made of cheese .",
        question=question,
        expected_min=0,
        expected_max=0,
        origin=AttentionCheck.Origin.DISTRACTOR,
    )
    work_items_sync(study=study)
    return study


def _keys_by_path(value: Any, path: str = "") -> dict[str, set[str]]:
    """Every object's keys, by where it sits (lists flattened): the shape of a payload."""
    shapes: dict[str, set[str]] = {}
    if isinstance(value, dict):
        shapes.setdefault(path, set()).update(value)
        for key, child in value.items():
            for inner, keys in _keys_by_path(child, key).items():
                shapes.setdefault(inner, set()).update(keys)
    elif isinstance(value, list):
        for child in value:
            for inner, keys in _keys_by_path(child, path).items():
                shapes.setdefault(inner, set()).update(keys)
    return shapes


def _assert_blind(text: str, member_index: int, pseudonyms: list[str], where: str) -> None:
    for name in SYSTEM_NAMES:
        assert name not in text, f"{where}: system name {name!r} leaked"
    for response_id in range(FIRST_RESPONSE_ID, FIRST_RESPONSE_ID + CONTEXTS * len(SYSTEM_NAMES)):
        assert str(response_id) not in text, f"{where}: response id {response_id} leaked"
    for index, pseudonym in enumerate(pseudonyms):
        if index != member_index:
            assert pseudonym not in text, f"{where}: another annotator's pseudonym leaked"
            assert repr(_seconds_of(index)) not in text, f"{where}: another annotator's answer leaked"


def test_api_and_rating_pages_never_reveal_systems_ids_or_other_raters():
    study = _blind_study()
    people: list[Member] = members(study, ANNOTATORS)
    pseudonyms = [member.annotator.pseudonym for member in people]
    pages = []
    for member in people:
        browser = Client()
        browser.force_login(member.user)
        pages.append(browser)

    shapes: dict[str, dict[str, set[str]]] = {}
    answered: list[int] = [0] * ANNOTATORS
    finished: set[int] = set()
    rounds = 0
    while len(finished) < ANNOTATORS:
        rounds += 1
        assert rounds < 100, "the study never finished"
        for index, member in enumerate(people):
            if index in finished:
                continue
            got = member.next(study)
            assert got.status_code == 200
            body = got.json()
            _assert_blind(got.content.decode(), index, pseudonyms, f"next for annotator {index}")
            if body["done"]:
                finished.add(index)
                continue
            kind = "check" if body["reply"] == "the moon is made of cheese ." else "rate"
            shape = _keys_by_path(body)
            shapes.setdefault(kind, shape)
            assert shape == shapes[kind]
            assert set(body) == RATE_KEYS
            for key, allowed in NESTED_KEYS.items():
                assert shape.get(key, set()) <= allowed, (key, shape.get(key))
            assert body["answers"] is None  # never anyone's values for an item not answered yet

            html = pages[index].get(f"/work/{study.pk}/rate/")
            assert html.status_code == 200
            assert body["reply"] in html.content.decode()  # the same item, as a page
            _assert_blind(html.content.decode(), index, pseudonyms, f"rating page of annotator {index}")

            value = 0 if kind == "check" else (index + rounds) % 3
            posted = member.rate(study, body["assignment"], value=value, seconds=_seconds_of(index))
            assert posted.status_code == 200, posted.content
            _assert_blind(posted.content.decode(), index, pseudonyms, f"submit of annotator {index}")
            answered[index] += 1

            back = member.client.get(f"/api/work/{study.pk}/previous/", {"kind": "rate"})
            _assert_blind(back.content.decode(), index, pseudonyms, f"previous for annotator {index}")
            assert back.json()["answers"] == {"appropriateness": value}  # their own answer, and only it
            revisit = pages[index].get(f"/work/{study.pk}/rate/{body['assignment']}/")
            _assert_blind(revisit.content.decode(), index, pseudonyms, f"revisited page of {index}")

    # Checks came up and looked exactly like real items; the study was rated by several people per reply.
    assert set(shapes) == {"rate", "check"}
    assert shapes["rate"] == shapes["check"]
    per_reply = Rating.objects.filter(response__context__study=study).values_list("response_id", flat=True)
    assert len(set(per_reply)) == CONTEXTS * len(SYSTEM_NAMES)
    assert len(per_reply) == CONTEXTS * len(SYSTEM_NAMES) * K
    assert sum(answered) == len(per_reply) + ANNOTATORS  # every annotator answered the one check once

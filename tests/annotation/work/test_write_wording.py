"""The writing task asks for as many replies as the writer's quota, in words that fit the number (a quota of
one used to read "write 1 different replies"), and speaks of earlier replies only once there are some."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotation.models import Study
from tests.annotation.work_builders import web_member, work_study

pytestmark = pytest.mark.django_db


def _writer(references: int) -> tuple[Study, Client]:
    """A writer of a study that wants ``references`` replies per context from one writer."""
    study = work_study(contexts=1, rating_enabled=False, references_wanted=references)
    _, client = web_member(study)
    return study, client


def _text(client: Client, study: Study) -> str:
    page = client.get(f"/work/{study.pk}/write/")
    assert page.status_code == 200
    return re.sub(r"\s+", " ", page.content.decode())


def test_one_reply_asked_is_asked_for_in_the_singular() -> None:
    study, client = _writer(1)
    page = _text(client, study)
    assert "Reply 1 of 1" in page
    assert "Read the conversation, then write a reply that could come next." in page
    assert "1 different replies" not in page
    assert "Make them differ" not in page
    assert "different from your earlier ones" not in page  # there are none


def test_three_replies_asked_are_asked_for_as_different_replies() -> None:
    study, client = _writer(3)
    page = _text(client, study)
    assert "Reply 1 of 3" in page
    assert (
        "Read the conversation, then write 3 different replies that could each come next, one at a time."
        in page
    )
    assert "Make them differ in what they say, not just in wording." in page
    assert 'placeholder="Type a reply to the last turn"' in page  # no earlier ones yet

    form = re.search(rf'action="(/work/{study.pk}/write/\d+/)"', page)
    assert form is not None
    assert client.post(form.group(1), {"text": "I would love to come along."}).status_code == 302
    second = _text(client, study)
    assert "Reply 2 of 3" in second
    assert 'placeholder="Type a reply to the last turn, different from your earlier ones"' in second

"""The "Back to the previous …" control of the item pages: shown only when the annotator
has an earlier answer of the task to go back to, so the very first pair (or reply) has no Back link and
no ``data-back-url`` for the b / Backspace keys (static/annotation/pairwise.js and work.js only navigate
when it is set)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.models import Annotator, Assignment
from tests.annotation.work_builders import web_member, work_study

pytestmark = pytest.mark.django_db


def _back_url(html: str) -> str:
    [value] = re.findall(r'data-back-url="([^"]*)"', html)
    return value


def _current(annotator: Annotator) -> Assignment:
    return Assignment.objects.filter(annotator=annotator).order_by("-id").first()  # type: ignore[return-value]


def test_the_first_pair_has_no_back_and_the_next_one_has() -> None:
    study = work_study(contexts=2, systems=2, k=1, rating_enabled=False, pairwise_enabled=True)
    annotator, client = web_member(study)
    next_url = reverse("work:next", args=[study.pk, "pair"])

    first = client.get(next_url).content.decode()
    assert 'data-pair-page="1"' in first
    assert 'id="back-link"' not in first
    assert "Back to the previous pair" not in first
    assert _back_url(first) == ""  # the b key has nowhere to go
    assert "goes back to change your previous answer" not in first  # nor does the key help offer it
    answered = _current(annotator)

    sent = client.post(reverse("work:item", args=[study.pk, "pair", answered.pk]), {"choice": "left"})
    assert sent.status_code == 302
    second = client.get(next_url).content.decode()
    now = _current(annotator)
    assert now.pk != answered.pk
    back = f"{reverse('work:back', args=[study.pk, 'pair'])}?before={now.pk}"
    assert f'href="{back}"' in second
    assert "Back to the previous pair" in second
    assert _back_url(second) == back
    assert "goes back to change your previous answer" in second
    # ... and it leads to the answered pair.
    assert client.get(back)["Location"] == reverse("work:item", args=[study.pk, "pair", answered.pk])

    # Reopened, the first answer has nothing before it either.
    reopened = client.get(reverse("work:item", args=[study.pk, "pair", answered.pk])).content.decode()
    assert 'id="revisiting"' in reopened
    assert 'id="back-link"' not in reopened
    assert _back_url(reopened) == ""


def test_the_rating_page_follows_the_same_rule() -> None:
    study = work_study(contexts=2, systems=1, k=1)
    annotator, client = web_member(study)
    next_url = reverse("work:next", args=[study.pk, "rate"])
    first = client.get(next_url).content.decode()
    assert 'id="back-link"' not in first
    assert _back_url(first) == ""
    assert "goes back to change your previous answer" not in first  # the key help says so too
    question = study.questions.get()
    answered = _current(annotator)
    sent = client.post(
        reverse("work:item", args=[study.pk, "rate", answered.pk]), {f"q-{question.name}": "1"}
    )
    assert sent.status_code == 302
    second = client.get(next_url).content.decode()
    assert 'id="back-link"' in second
    assert "goes back to change your previous answer" in second
    assert _back_url(second).endswith(f"?before={_current(annotator).pk}")

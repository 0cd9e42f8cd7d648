"""What a volunteer sees on the rating page and in the qualification round is rendered text only: no piece
of template source ("{#", "{%", "{{") reaches the page (a comment spread over two lines in
templates/annotation/work/_question.html was printed above the rating buttons of every screen)."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Question, QuestionKind
from tests.annotation.joining_builders import training_items, training_study, volunteer

pytestmark = pytest.mark.django_db

TEMPLATE_SOURCE = ("{#", "{%", "{{")


def _leaks(html: str) -> list[str]:
    return [marker for marker in TEMPLATE_SOURCE if marker in html]


def _volunteer_client(study) -> Client:
    annotator = volunteer(study)
    assert annotator.user is not None
    client = Client()
    client.force_login(annotator.user)
    return client


@pytest.mark.parametrize("kind", ["ordinal", "slider"])
def test_the_qualification_round_and_the_rating_page_show_no_template_source(kind: str) -> None:
    study = training_study(items=1, threshold=0.5)
    if kind == "slider":  # the other branch of the question include
        Question.objects.filter(study=study).update(
            kind=QuestionKind.SLIDER, scale_min=0, scale_max=100, labels=["bad", "excellent"]
        )
    client = _volunteer_client(study)
    (item,) = training_items(study)

    question_page = client.get(f"/work/{study.pk}/training/")
    assert question_page.status_code == 200
    assert 'id="answer-form"' in question_page.content.decode()
    assert _leaks(question_page.content.decode()) == []

    answered = client.post(f"/work/{study.pk}/training/{item.pk}/", {"value": str(item.gold_min)})
    feedback = client.get(answered["Location"])
    assert "You passed the qualification round" in feedback.content.decode()
    assert _leaks(feedback.content.decode()) == []

    rating_page = client.get(f"/work/{study.pk}/rate/")
    assert rating_page.status_code == 200
    assert 'id="answer-form"' in rating_page.content.decode()
    assert _leaks(rating_page.content.decode()) == []

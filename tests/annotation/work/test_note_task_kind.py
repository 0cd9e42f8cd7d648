"""The note form's URL names a task: an assignment of another task under it (a pair's id
under ``rate/``) is a 404 that stores nothing, instead of a stored note and a redirect to a page that
404s. Attention checks belong to the rating task, as on the item pages (annotation.work.views.own_assignment)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Annotator, Assignment, ItemNote, Response, Study, WorkItem, WorkKind
from annotation.services.checks import check_mark
from tests.annotation.work_builders import web_member, work_study

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}


def _handed(client: Client, annotator: Annotator, study: Study, kind: str) -> Assignment:
    assert client.get(reverse("work:next", args=[study.pk, kind])).status_code == 200
    return Assignment.objects.filter(annotator=annotator).order_by("-id").first()  # type: ignore[return-value]


def _note_url(study: Study, kind: str, assignment: Assignment) -> str:
    return reverse("work:note", args=[study.pk, kind, assignment.pk])


@pytest.fixture
def rate_and_pair() -> tuple[Study, Annotator, Client, Assignment, Assignment]:
    study = work_study(contexts=1, systems=2, k=1, pairwise_enabled=True)
    annotator, client = web_member(study)
    rated = _handed(client, annotator, study, "rate")
    paired = _handed(client, annotator, study, "pair")
    assert (rated.item.kind, paired.item.kind) == (WorkKind.RATE, WorkKind.PAIR)
    return study, annotator, client, rated, paired


@pytest.mark.parametrize("headers", [{}, JSON], ids=["page", "json"])
def test_an_assignment_under_another_tasks_url_is_a_404_that_stores_nothing(rate_and_pair, headers) -> None:
    study, _, client, rated, paired = rate_and_pair
    for kind, assignment in (("rate", paired), ("pair", rated), ("diversity", rated)):
        for note in ({"kind": "comment", "text": "hello"}, {"kind": "flag", "reason": "broken"}):
            answer = client.post(_note_url(study, kind, assignment), note, **headers)
            assert answer.status_code == 404, (kind, note)
    assert not ItemNote.objects.exists()


def test_the_matching_task_still_takes_the_note_page_and_json(rate_and_pair) -> None:
    study, _, client, rated, paired = rate_and_pair
    for kind, assignment in (("rate", rated), ("pair", paired)):
        url = _note_url(study, kind, assignment)
        answer = client.post(url, {"kind": "comment", "text": f"on the {kind} item"})
        assert answer.status_code == 302
        assert answer["Location"] == reverse("work:item", args=[study.pk, kind, assignment.pk])
        shown = client.get(answer["Location"])
        assert shown.status_code == 200
        assert "your comment was recorded" in shown.content.decode()
        sent = client.post(url, {"kind": "flag", "reason": "broken"}, **JSON)
        assert (sent.status_code, sent.json()["recorded"]) == (200, True)
    assert ItemNote.objects.count() == 4
    assert ItemNote.objects.filter(response_id=rated.item.response_id, response_b=None).count() == 2  # rated
    assert ItemNote.objects.filter(response_b__isnull=False).count() == 2  # on both replies of the pair


def test_an_attention_check_is_noted_under_the_rating_task_only() -> None:
    study = work_study(contexts=2, systems=1, k=1, pairwise_enabled=False)
    reply = Response.objects.filter(context__study=study).order_by("id")[0]
    check = check_mark(
        study=study, response=reply, question=study.questions.get(), expected_min=2, expected_max=2
    )
    item = WorkItem.objects.get(attention_check=check)
    annotator, client = web_member(study)
    assignment = Assignment.objects.create(item=item, annotator=annotator, sequence=item.pk)

    assert (
        client.post(_note_url(study, "write", assignment), {"kind": "comment", "text": "x"}).status_code
        == 404
    )
    assert not ItemNote.objects.exists()
    answer = client.post(_note_url(study, "rate", assignment), {"kind": "comment", "text": "odd reply"})
    assert answer.status_code == 302
    assert client.get(answer["Location"]).status_code == 200
    assert ItemNote.objects.get().response_id == reply.pk

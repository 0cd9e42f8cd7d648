"""The annotator's own history page (/work/<study>/history/): their last answers, newest first, blind,
only their own, each open answer linked to its item page, and a bounded number of queries."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Annotator, Assignment, Response, Study, WorkKind
from annotation.selectors.history import HISTORY_LENGTH
from annotation.services.assignment import next_assignment
from annotation.services.checks import distractors_generate
from annotation.services.submissions import diversity_submit, rating_submit, reference_add
from annotation.services.work_items import work_items_sync
from tests.annotation.work_builders import work_study
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _member(study: Study) -> Annotator:
    user = UserFactory.create()
    return Annotator.objects.create(
        study=study, user=user, pseudonym=f"p{user.pk}", consented_at=timezone.now()
    )


def _client(annotator: Annotator) -> Client:
    assert annotator.user is not None
    client = Client()
    client.force_login(annotator.user)
    return client


def _reply(assignment: Assignment) -> Response:
    response = assignment.item.response
    assert response is not None
    return response


def _rate(annotator: Annotator, value: int) -> Assignment:
    assignment = next_assignment(annotator=annotator, kind=WorkKind.RATE).assignment
    rating_submit(annotator=annotator, assignment_id=assignment.pk, values={"appropriateness": value})
    return assignment


def _history(annotator: Annotator) -> str:
    page = _client(annotator).get(reverse("work:history", args=[annotator.study_id]))
    assert page.status_code == 200
    return page.content.decode()


def test_the_history_lists_ones_own_answers_newest_first_blind() -> None:
    study = work_study(contexts=3, systems=2, k=2, references_wanted=1, diversity_enabled=True)
    for reply in list(Response.objects.filter(context__study=study)):  # diversity needs several replies
        Response.objects.create(
            context=reply.context, system=reply.system, text=f"{reply.text} too", sample_index=1
        )
    work_items_sync(study=study)
    for number, system in enumerate(study.systems.all()):
        system.name = f"SecretSystem{number}"  # the builder's names are in the replies' texts
        system.save()
    me, other = _member(study), _member(study)
    first = _rate(me, 0)
    second = _rate(me, 2)
    _rate(other, 1)
    Assignment.objects.filter(pk=first.pk).update(finished_at=timezone.now() - timedelta(minutes=5))
    writing = next_assignment(annotator=me, kind=WorkKind.WRITE).assignment
    reference_add(annotator=me, assignment_id=writing.pk, text="my own written reply")
    judging = next_assignment(annotator=me, kind=WorkKind.DIVERSITY).assignment
    replies = list(Response.objects.filter(context_id=judging.item.context_id, system=judging.item.system))
    diversity_submit(annotator=me, assignment_id=judging.pk, appropriate=[replies[0].pk], meanings=1)

    html = _history(me)

    kinds = re.findall(r'class="history-entry kind-(\w+)"', html)
    assert kinds == ["diversity", "write", "rate", "rate"]
    ratings = re.findall(r'kind-rate">(.*?)</li>', html, flags=re.S)
    assert [_reply(second).text in ratings[0], _reply(first).text in ratings[1]] == [
        True,
        True,
    ]  # newest first
    assert "appropriateness: 2 (good)" in html
    assert "appropriateness: 0 (bad)" in html
    assert "appropriateness: 1" not in html  # the other annotator's answer
    assert "my own written reply" in html
    assert "1 appropriate, 1 different meaning(s)" in html
    assert _reply(second).context.query in html
    for name in study.systems.values_list("name", flat=True):
        assert name not in html  # blind: no system names
    # Ratings and diversity judgments can be changed from their item pages; written replies cannot.
    links = re.findall(r'href="([^"]+)" class="button secondary small edit-answer"', html)
    assert links == [
        reverse("work:item", args=[study.pk, "diversity", judging.pk]),
        reverse("work:item", args=[study.pk, "rate", second.pk]),
        reverse("work:item", args=[study.pk, "rate", first.pk]),
    ]
    assert "sent references are final" in html
    page = _client(me).get(links[1])
    assert page.status_code == 200
    assert 'id="revisiting"' in page.content.decode()


def test_answers_close_when_the_task_ends_or_the_annotator_is_blocked() -> None:
    study = work_study(contexts=2, systems=1, k=2)
    me = _member(study)
    _rate(me, 1)
    assert "edit-answer" in _history(me)

    study.rating_enabled = False
    study.save()
    html = _history(me)
    assert "edit-answer" not in html
    assert "this task has ended" in html

    study.rating_enabled = True
    study.save()
    me.blocked = True
    me.save()
    assert "edit-answer" not in _history(me)


def test_attention_checks_are_left_out() -> None:
    study = work_study(contexts=4, systems=2, k=2, check_interval=2)
    distractors_generate(study=study, count=2, seed=1)
    me = _member(study)
    answered = [_rate(me, 0) for _ in range(4)]
    assert any(assignment.item.kind == WorkKind.CHECK for assignment in answered)

    html = _history(me)

    real = [assignment for assignment in answered if assignment.item.kind == WorkKind.RATE]
    assert len(re.findall(r'class="history-entry', html)) == len(real)


def test_only_members_see_a_history_and_the_study_page_links_to_it() -> None:
    study = work_study(contexts=1, systems=1)
    me = _member(study)
    assert (
        _client(me)
        .get(reverse("work:study", args=[study.pk]))
        .content.decode()
        .count(reverse("work:history", args=[study.pk]))
    )
    outsider = _member(work_study(contexts=1, systems=1))
    assert _client(outsider).get(reverse("work:history", args=[study.pk])).status_code == 404
    assert "You have not answered anything" in _history(me)


def test_the_last_fifty_answers_in_a_bounded_number_of_queries(django_assert_max_num_queries) -> None:
    study = work_study(contexts=28, systems=2, k=1)
    me = _member(study)
    for _ in range(HISTORY_LENGTH + 3):
        _rate(me, 1)
    client = _client(me)
    url = reverse("work:history", args=[study.pk])
    client.get(url)
    with django_assert_max_num_queries(12):
        page = client.get(url)
    assert len(re.findall(r'class="history-entry', page.content.decode())) == HISTORY_LENGTH

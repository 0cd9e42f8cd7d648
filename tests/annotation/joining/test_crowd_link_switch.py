"""A crowd link opened by someone already logged in as another user: the researcher trying their
own Prolific link, a second participant on a shared computer. Nobody is switched to another account behind
their back: a page says who they are logged in as and asks for a POST (CSRF on) before signing them out;
the worker's own session goes straight on, and a visitor who is not logged in continues as before."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import Annotator, Study
from tests.annotation.work_builders import work_study

pytestmark = pytest.mark.django_db

WORKER = "5f3a9c1b2d"
CONFIRM = {"continue_as_crowd_worker": "1"}


def _crowd_study(**settings: Any) -> Study:
    study = work_study(contexts=1, crowd_id_parameter="PROLIFIC_PID", **settings)
    study.owner.username = "dr<i>who</i>"  # escaped wherever it is shown
    study.owner.save()
    return study


def _link(study: Study, worker_id: str = WORKER) -> str:
    return f"/work/join/{study.invite_token}/?PROLIFIC_PID={worker_id}&STUDY_ID=s-1"


def _logged_in(user: User, *, enforce_csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=enforce_csrf)
    client.force_login(user)
    return client


def _user_id(client: Client) -> int | None:
    value = client.session.get(SESSION_KEY)
    return int(value) if value is not None else None


def test_the_researcher_opening_the_link_stays_logged_in_and_is_asked_first() -> None:
    study = _crowd_study(name="Replies <b>study</b>")
    client = _logged_in(study.owner)
    users = User.objects.count()

    page = client.get(_link(study))

    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="crowd-switch"' in html
    assert '<span id="crowd-switch-user">dr&lt;i&gt;who&lt;/i&gt;</span>' in html
    assert "dr<i>who</i>" not in html
    assert "Replies &lt;b&gt;study&lt;/b&gt;" in html
    assert "PROLIFIC_PID=5f3a9c1b2d" in html
    assert "signs you out of" in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert 'name="continue_as_crowd_worker"' in html
    assert 'action="/work/join/' in html
    assert 'id="crowd-switch-back"' in html
    assert _user_id(client) == study.owner.pk
    assert User.objects.count() == users  # no account made for the worker yet
    assert not Annotator.objects.filter(study=study).exists()
    assert client.get(f"/studies/{study.pk}/").status_code == 200  # still the researcher


def test_confirming_signs_the_researcher_out_and_continues_as_the_worker() -> None:
    study = _crowd_study()
    client = _logged_in(study.owner, enforce_csrf=True)
    page = client.get(_link(study)).content.decode()
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert match is not None

    forged = client.post(_link(study), CONFIRM)  # without the token: refused, nothing changes
    assert forged.status_code == 403
    assert _user_id(client) == study.owner.pk
    assert not Annotator.objects.filter(study=study).exists()

    confirmed = client.post(_link(study), {**CONFIRM, "csrfmiddlewaretoken": match.group(1)})

    assert confirmed.status_code == 302
    assert confirmed["Location"] == f"/work/{study.pk}/consent/"
    annotator = Annotator.objects.get(study=study)
    assert annotator.external_worker_id == WORKER
    assert annotator.user is not None
    assert annotator.user_id != study.owner.pk
    assert _user_id(client) == annotator.user_id
    assert client.get(f"/work/{study.pk}/consent/").status_code == 200
    assert client.get(f"/studies/{study.pk}/").status_code != 200  # the researcher's session is over


def test_a_post_without_the_confirmation_only_shows_the_page_again() -> None:
    study = _crowd_study()
    client = _logged_in(study.owner)
    again = client.post(_link(study), {})
    assert again.status_code == 200
    assert 'id="crowd-switch"' in again.content.decode()
    assert _user_id(client) == study.owner.pk
    assert not Annotator.objects.filter(study=study).exists()


def test_the_same_worker_reopening_the_link_goes_straight_on() -> None:
    study = _crowd_study()
    client = Client()
    first = client.get(_link(study))  # not logged in: as before, no page
    assert first.status_code == 302
    assert first["Location"] == f"/work/{study.pk}/consent/"
    annotator = Annotator.objects.get(study=study)
    users = User.objects.count()

    again = client.get(_link(study))

    assert again.status_code == 302
    assert again["Location"] == f"/work/{study.pk}/consent/"
    assert _user_id(client) == annotator.user_id
    assert User.objects.count() == users
    assert Annotator.objects.filter(study=study).count() == 1


def test_another_worker_on_the_same_browser_is_asked_too() -> None:
    study = _crowd_study()
    client = Client()
    client.get(_link(study, "first-worker"))
    first = Annotator.objects.get(study=study)

    page = client.get(_link(study, "second-worker"))

    assert page.status_code == 200
    assert '<span id="crowd-switch-user">prolific_pid-first-worker</span>' in page.content.decode()
    assert _user_id(client) == first.user_id
    assert Annotator.objects.filter(study=study).count() == 1
    client.post(_link(study, "second-worker"), CONFIRM)
    second = Annotator.objects.get(study=study, external_worker_id="second-worker")
    assert _user_id(client) == second.user_id


def test_a_closed_link_refuses_a_new_worker_before_anyone_is_signed_out() -> None:
    study = _crowd_study(invites_open=False)
    client = _logged_in(study.owner)

    for refused in (client.get(_link(study)), client.post(_link(study), CONFIRM)):
        assert refused.status_code == 404
        assert "not admitting new annotators" in refused.content.decode()
        assert _user_id(client) == study.owner.pk
    assert not Annotator.objects.filter(study=study).exists()

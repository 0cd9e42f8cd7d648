"""The researcher's annotation page: who may open it, what it shows, and every action on it (POST with
CSRF, through the services)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotator, AttentionCheck, Response, Study, WorkItem, WorkKind
from annotation.services.annotators import InviteInvalid, study_for_invite
from annotation.services.assignment import next_assignment
from annotation.services.studies import study_create
from annotation.services.submissions import rating_submit
from annotation.services.work_items import work_items_sync
from tests.factories import (
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def _login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _study(owner=None, contexts: int = 3) -> Study:
    owner = owner or ResearcherFactory.create()
    study = study_create(owner=owner, name=f"progress {owner.pk}", ratings_per_item=2)
    study.check_interval = 0
    study.save()
    bot = SystemFactory.create(study=study, name="secret-bot")
    for index in range(contexts):
        context = DialogContextFactory.create(
            study=study, turns=[{"speaker": "A", "text": f"question {index} ?"}]
        )
        ResponseFactory.create(context=context, system=bot, text=f"reply <b>{index}</b>")
    work_items_sync(study=study)
    return study


def _rate(study: Study, pseudonym: str, items: int, value: int = 1) -> Annotator:
    user = UserFactory.create()
    annotator = Annotator.objects.create(study=study, user=user, pseudonym=pseudonym)
    for _ in range(items):
        handout = next_assignment(annotator=annotator)
        rating_submit(
            annotator=annotator,
            assignment_id=handout.assignment.pk,
            values={"appropriateness": value},
            seconds=3.0,
        )
    return annotator


def _url(study: Study, rest: str = "") -> str:
    return f"/studies/{study.pk}/annotation/{rest}"


def test_only_the_owner_opens_the_page() -> None:
    study = _study()
    assert _login(study.owner).get(_url(study)).status_code == 200
    assert _login(ResearcherFactory.create()).get(_url(study)).status_code == 404
    assert _login(UserFactory.create()).get(_url(study)).status_code == 403
    anonymous = Client().get(_url(study))
    assert anonymous.status_code == 302
    assert "/accounts/login/" in anonymous["Location"]


def test_other_researchers_cannot_act_on_the_study() -> None:
    study = _study()
    annotator = _rate(study, "annotator-001", 1)
    intruder = _login(ResearcherFactory.create())
    token = study.invite_token
    for rest, data in [
        ("settings/", {}),
        ("checks/", {}),
        ("checks/distractors/", {}),
        ("invite/rotate/", {}),
        (f"annotators/{annotator.pk}/inclusion/", {"report_inclusion": "exclude"}),
        (f"annotators/{annotator.pk}/unblock/", {}),
    ]:
        assert intruder.post(_url(study, rest), data).status_code == 404
    study.refresh_from_db()
    annotator.refresh_from_db()
    assert study.invite_token == token
    assert annotator.report_inclusion == "auto"
    annotator_user = _login(annotator.user)
    assert annotator_user.post(_url(study, "invite/rotate/")).status_code == 403


def test_the_page_shows_progress_annotators_and_items_escaped() -> None:
    study = _study()
    _rate(study, "annotator-<i>001</i>", 3)
    _rate(study, "annotator-002", 1)
    page = _login(study.owner).get(_url(study))
    html = page.content.decode()
    assert "4 of 6 (67%)" in html  # 3 replies x k=2 wanted, 4 ratings done
    assert "annotator-&lt;i&gt;001&lt;/i&gt;" in html
    assert "<i>001</i>" not in html
    assert "reply &lt;b&gt;0&lt;/b&gt;" in html
    assert "secret-bot" in html  # the researcher is not blind
    assert f"http://testserver/work/join/{study.invite_token}/" in html
    assert 'id="item-table"' in html
    assert "1 of 2" in html  # one reply rated once


def test_actions_need_the_csrf_token() -> None:
    study = _study()
    client = Client(enforce_csrf_checks=True)
    client.force_login(study.owner)
    token = study.invite_token
    assert client.post(_url(study, "invite/rotate/")).status_code == 403
    study.refresh_from_db()
    assert study.invite_token == token
    assert client.get(_url(study, "invite/rotate/")).status_code == 405


def _settings(**changes: object) -> dict[str, object]:
    values: dict[str, object] = {
        "rating_enabled": "on",
        "rating_enabled_present": 1,  # the hidden marker the page renders beside each checkbox
        "ratings_per_item": 2,
        "instructions": "",
        "references_wanted": 0,
        "collection_mode": "one",
        "max_items_per_annotator": "",
        "hold_minutes": 30,
        "check_interval": 0,
        "check_action": "warn",
        "check_failures_allowed": 1,
        "kappa_threshold": "0.2",
        "min_seconds_per_item": 2,
        "invites_open": "on",
        "invites_open_present": 1,
    }
    values.update(changes)
    return {f"settings-{name}": value for name, value in values.items() if value is not None}


def test_saving_settings_updates_the_study_and_its_work_items() -> None:
    study = _study()
    client = _login(study.owner)
    response = client.post(
        _url(study, "settings/"),
        _settings(
            ratings_per_item=5,
            references_wanted=4,
            collection_mode="two",
            hold_minutes=10,
            kappa_threshold="",
        ),
    )
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.ratings_per_item, study.references_wanted, study.collection_mode) == (5, 4, "two")
    assert study.hold_seconds == 600
    assert study.kappa_threshold is None
    assert set(WorkItem.objects.filter(study=study, kind=WorkKind.RATE).values_list("wanted", flat=True)) == {
        5
    }
    assert set(
        WorkItem.objects.filter(study=study, kind=WorkKind.WRITE).values_list("wanted", flat=True)
    ) == {2}
    assert client.get(_url(study)).content.decode().count('value="10.0"') == 1  # hold shown in minutes


def test_invalid_settings_are_refused_with_the_field_named() -> None:
    study = _study()
    client = _login(study.owner)
    response = client.post(_url(study, "settings/"), _settings(ratings_per_item=0))
    assert response.status_code == 400
    assert "greater than or equal to 1" in response.content.decode()
    # A rule of the service (no task at all) comes back on its field too.
    response = client.post(_url(study, "settings/"), _settings(rating_enabled=None))
    assert response.status_code == 400
    assert "turn on at least one task" in response.content.decode()
    study.refresh_from_db()
    assert study.rating_enabled
    assert study.ratings_per_item == 2


def test_the_invite_link_can_be_replaced() -> None:
    study = _study()
    old = study.invite_token
    response = _login(study.owner).post(_url(study, "invite/rotate/"))
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.invite_token != old
    with pytest.raises(InviteInvalid):
        study_for_invite(token=old)
    assert study_for_invite(token=study.invite_token) == study
    assert f"/work/join/{study.invite_token}/" in _login(study.owner).get(_url(study)).content.decode()


def test_marking_a_check_and_generating_distractors() -> None:
    study = _study(contexts=4)
    client = _login(study.owner)
    reply = Response.objects.filter(context__study=study).order_by("id")[0]
    question = study.questions.get()
    response = client.post(
        _url(study, "checks/"),
        {
            "mark-response": reply.pk,
            "mark-question": question.pk,
            "mark-expected_min": 2,
            "mark-expected_max": 2,
        },
    )
    assert response.status_code == 302
    check = AttentionCheck.objects.get(study=study)
    assert (check.origin, check.source_response_id, check.expected_min) == ("marked", reply.pk, 2)

    bad = client.post(
        _url(study, "checks/"),
        {
            "mark-response": reply.pk,
            "mark-question": question.pk,
            "mark-expected_min": 0,
            "mark-expected_max": 9,
        },
    )
    assert bad.status_code == 400
    assert "outside the scale" in bad.content.decode()
    stranger = ResponseFactory.create()
    bad = client.post(
        _url(study, "checks/"),
        {
            "mark-response": stranger.pk,
            "mark-question": question.pk,
            "mark-expected_min": 0,
            "mark-expected_max": 0,
        },
    )
    assert bad.status_code == 400
    assert "No reply of this study" in bad.content.decode()

    response = client.post(
        _url(study, "checks/distractors/"), {"distractors-count": 3, "distractors-question": question.pk}
    )
    assert response.status_code == 302
    assert AttentionCheck.objects.filter(study=study, origin="distractor").count() == 3
    page = client.get(_url(study)).content.decode()
    assert page.count('class="check"') == 4


def test_report_inclusion_and_unblocking() -> None:
    study = _study()
    annotator = _rate(study, "annotator-001", 1)
    Annotator.objects.filter(pk=annotator.pk).update(blocked=True)
    client = _login(study.owner)
    assert "unblock" in client.get(_url(study)).content.decode()

    response = client.post(
        _url(study, f"annotators/{annotator.pk}/inclusion/"), {"report_inclusion": "exclude"}
    )
    assert response.status_code == 302
    response = client.post(_url(study, f"annotators/{annotator.pk}/unblock/"))
    assert response.status_code == 302
    annotator.refresh_from_db()
    assert (annotator.report_inclusion, annotator.blocked) == ("exclude", False)

    assert (
        client.post(
            _url(study, f"annotators/{annotator.pk}/inclusion/"), {"report_inclusion": "maybe"}
        ).status_code
        == 302
    )
    annotator.refresh_from_db()
    assert annotator.report_inclusion == "exclude"
    # An annotator of another study is not reachable through this study.
    other = _rate(_study(), "annotator-001", 1)
    assert client.post(_url(study, f"annotators/{other.pk}/unblock/")).status_code == 404


def test_the_study_page_links_to_the_annotation_page() -> None:
    study = _study()
    assert _url(study) in _login(study.owner).get(f"/studies/{study.pk}/").content.decode()


def test_the_page_costs_the_same_queries_whatever_the_study_size() -> None:
    def queries(study: Study) -> int:
        client = _login(study.owner)
        with CaptureQueriesContext(connection) as captured:
            assert client.get(_url(study)).status_code == 200
        return len(captured)

    small = _study(contexts=2)
    _rate(small, "annotator-001", 1)
    large = _study(contexts=12)
    for index in range(4):
        _rate(large, f"annotator-{index:03d}", 6)
    assert queries(small) == queries(large)

"""Joining a study through the pages and the API: sign-up through the invite link, crowd workers
arriving with their platform id, the consent gate, the qualification round, the completion code, and the
researcher's side (training items, reset, settings)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Annotator, Question, Response, Study, TrainingAnswer, TrainingItem
from kernel.roles import user_is_researcher
from tests.annotation.joining_builders import EXPLANATION, training_items, training_study, volunteer
from tests.annotation.work_builders import work_study
from tests.factories import ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-enough-pass-42"


def _join_url(study: Study) -> str:
    return f"/work/join/{study.invite_token}/"


def _signup(client: Client, study: Study, username: str, password2: str = PASSWORD):
    return client.post(
        _join_url(study), {"username": username, "password1": PASSWORD, "password2": password2}
    )


def _logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


# ---- sign-up through the invite link ----------------------------------------------------------------


def test_a_new_volunteer_signs_up_is_logged_in_joined_and_sent_to_the_consent() -> None:
    study = work_study(contexts=1)
    client = Client()
    page = client.get(_join_url(study))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="signup-form"' in html
    assert 'name="password2"' in html
    assert "email" not in html.lower()
    assert f'href="/accounts/login/?next={_join_url(study)}"' in html

    response = _signup(client, study, "new-volunteer")
    assert response.status_code == 302
    assert response["Location"] == f"/work/{study.pk}/consent/"
    user = User.objects.get(username="new-volunteer")
    assert user.check_password(PASSWORD)
    assert not user_is_researcher(user)
    assert (user.is_staff, user.is_superuser, user.groups.count()) == (False, False, 0)
    annotator = Annotator.objects.get(study=study, user=user)
    assert annotator.consented_at is None
    assert client.get(f"/work/{study.pk}/").status_code == 200  # logged in
    assert client.get("/studies/").status_code == 403  # and not a researcher


def test_a_taken_username_and_mismatched_passwords_are_refused_and_nothing_is_created() -> None:
    study = work_study(contexts=1)
    UserFactory.create(username="alice")
    taken = _signup(Client(), study, "Alice")
    assert taken.status_code == 400
    assert "already exists" in taken.content.decode()
    assert User.objects.filter(username__iexact="alice").count() == 1

    mismatch = _signup(Client(), study, "bob", password2=PASSWORD + "x")
    assert mismatch.status_code == 400
    assert "didn’t match" in mismatch.content.decode()
    short = Client().post(_join_url(study), {"username": "carol", "password1": "short", "password2": "short"})
    assert short.status_code == 400
    assert "too short" in short.content.decode()
    assert not User.objects.filter(username__in=["bob", "carol"]).exists()
    assert not Annotator.objects.filter(study=study).exists()


def test_a_closed_invite_says_so_and_signs_nobody_up() -> None:
    study = work_study(contexts=1, invites_open=False)
    page = Client().get(_join_url(study))
    assert page.status_code == 404
    assert "not admitting new annotators" in page.content.decode()
    assert _signup(Client(), study, "late-comer").status_code == 404
    assert not User.objects.filter(username="late-comer").exists()
    assert Client().get("/work/join/no-such-token/").status_code == 404


def test_with_sign_up_off_visitors_log_in_instead() -> None:
    study = work_study(contexts=1, signup_open=False)
    page = Client().get(_join_url(study))
    assert page.status_code == 302
    assert page["Location"] == f"/accounts/login/?next={_join_url(study)}"
    refused = _signup(Client(), study, "would-be")
    assert refused.status_code == 403
    assert "does not take new sign-ups" in refused.content.decode()
    assert not User.objects.filter(username="would-be").exists()

    member = _logged_in(UserFactory.create())  # an existing account still joins with the button
    assert member.post(_join_url(study)).status_code == 302
    assert Annotator.objects.filter(study=study).count() == 1


# ---- crowd platforms ------------------------------------------------------------------------------


def test_a_crowd_worker_gets_one_account_from_the_id_and_comes_back_to_it() -> None:
    study = work_study(contexts=1, crowd_id_parameter="PROLIFIC_PID")
    url = f"{_join_url(study)}?PROLIFIC_PID=5f3a9c1b2d&STUDY_ID=s-1&SESSION_ID=x9"
    first = Client()
    arrived = first.get(url)
    assert arrived.status_code == 302
    assert arrived["Location"] == f"/work/{study.pk}/consent/"
    annotator = Annotator.objects.get(study=study)
    assert annotator.external_worker_id == "5f3a9c1b2d"
    assert annotator.user is not None
    assert not annotator.user.has_usable_password()
    assert annotator.user.username == "prolific_pid-5f3a9c1b2d"
    assert not user_is_researcher(annotator.user)
    assert first.get(f"/work/{study.pk}/consent/").status_code == 200  # logged in

    users = User.objects.count()
    study.invites_open = False  # a returning worker still gets back in
    study.save()
    again = Client().get(url)
    assert again.status_code == 302
    assert Annotator.objects.filter(study=study).count() == 1
    assert User.objects.count() == users
    assert Client().get(f"{_join_url(study)}?PROLIFIC_PID=someone-new").status_code == 404


@pytest.mark.parametrize("worker_id", ["bad id!", "", "{{%PROLIFIC_PID%}}", "x" * 101])
def test_an_invalid_crowd_id_is_refused_with_the_parameter_named(worker_id: str) -> None:
    study = work_study(contexts=1, crowd_id_parameter="PROLIFIC_PID")
    response = Client().get(_join_url(study), {"PROLIFIC_PID": worker_id})
    assert response.status_code == 400
    assert "PROLIFIC_PID" in response.content.decode()
    assert not Annotator.objects.filter(study=study).exists()
    assert not User.objects.exclude(pk=study.owner_id).exists()


def test_the_same_id_in_another_study_gets_an_account_of_its_own() -> None:
    one = work_study(contexts=1, crowd_id_parameter="workerId")
    two = work_study(contexts=1, crowd_id_parameter="workerId")
    Client().get(_join_url(one), {"workerId": "A1B2C3"})
    Client().get(_join_url(two), {"workerId": "A1B2C3"})
    first, second = Annotator.objects.get(study=one), Annotator.objects.get(study=two)
    assert first.user_id != second.user_id
    assert (first.external_worker_id, second.external_worker_id) == ("A1B2C3", "A1B2C3")


# ---- the consent gate -----------------------------------------------------------------------------


def test_task_pages_wait_for_the_consent_which_needs_the_box_ticked() -> None:
    study = work_study(contexts=1, consent_text="We keep your answers <b>anonymous</b>.")
    annotator = volunteer(study, consented=False)
    assert annotator.user is not None
    client = _logged_in(annotator.user)
    for url in (f"/work/{study.pk}/rate/", f"/work/{study.pk}/rate/back/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"] == f"/work/{study.pk}/consent/"
    overview = client.get(f"/work/{study.pk}/").content.decode()
    assert 'id="admission-link"' in overview

    page = client.get(f"/work/{study.pk}/consent/").content.decode()
    assert "We keep your answers &lt;b&gt;anonymous&lt;/b&gt;." in page
    refused = client.post(f"/work/{study.pk}/consent/", {})
    assert refused.status_code == 400
    assert "agree: Tick “I agree”" in refused.content.decode()
    annotator.refresh_from_db()
    assert annotator.consented_at is None

    accepted = client.post(f"/work/{study.pk}/consent/", {"agree": "on"})
    assert accepted.status_code == 302
    assert accepted["Location"] == f"/work/{study.pk}/"
    annotator.refresh_from_db()
    assert annotator.consented_at is not None
    assert client.get(f"/work/{study.pk}/rate/").status_code == 200
    assert 'id="admission"' not in client.get(f"/work/{study.pk}/").content.decode()


def test_without_a_consent_text_the_description_and_instructions_are_shown() -> None:
    study = work_study(contexts=1, description="About replies.", instructions="Rate them carefully.")
    annotator = volunteer(study, consented=False)
    assert annotator.user is not None
    page = _logged_in(annotator.user).get(f"/work/{study.pk}/consent/").content.decode()
    assert "About replies." in page
    assert "Rate them carefully." in page
    outsider = _logged_in(UserFactory.create())
    assert outsider.get(f"/work/{study.pk}/consent/").status_code == 404


def test_the_api_answers_403_until_the_consent_and_offers_an_endpoint_for_it() -> None:
    study = work_study(contexts=1)
    annotator = volunteer(study, consented=False)
    assert annotator.user is not None
    api = _api(annotator.user)
    blocked = api.get(f"/api/work/{study.pk}/next/", {"kind": "rate"})
    assert blocked.status_code == 403
    assert f"/work/{study.pk}/consent/" in blocked.json()["detail"]
    assert api.get(f"/api/work/{study.pk}/consent/").json()["consented"] is False
    refused = api.post(f"/api/work/{study.pk}/consent/", {"agree": False}, format="json")
    assert (refused.status_code, refused.json()["field"]) == (400, "agree")
    accepted = api.post(f"/api/work/{study.pk}/consent/", {"agree": True}, format="json")
    assert accepted.status_code == 200
    assert (accepted.json()["consented"], accepted.json()["next"]) == (True, "work")
    assert api.get(f"/api/work/{study.pk}/next/", {"kind": "rate"}).status_code == 200


# ---- the qualification round ----------------------------------------------------------------------


def test_the_round_gives_feedback_after_each_answer_then_opens_the_work() -> None:
    study = training_study(items=2, threshold=0.5)
    annotator = volunteer(study, consented=False)
    assert annotator.user is not None
    client = _logged_in(annotator.user)
    accepted = client.post(f"/work/{study.pk}/consent/", {"agree": "on"})
    assert accepted["Location"] == f"/work/{study.pk}/training/"
    assert client.get(f"/work/{study.pk}/rate/")["Location"] == f"/work/{study.pk}/training/"

    first, second = training_items(study)
    page = client.get(f"/work/{study.pk}/training/").content.decode()
    assert first.response.text in page
    assert EXPLANATION not in page  # no peeking
    assert "Right answers" not in page
    assert client.get(f"/work/{study.pk}/training/{second.pk}/")["Location"] == f"/work/{study.pk}/training/"

    bad = client.post(f"/work/{study.pk}/training/{first.pk}/", {"value": "7"})
    assert bad.status_code == 400
    assert "value: 7 is outside the scale 0-2" in bad.content.decode()
    answered = client.post(f"/work/{study.pk}/training/{first.pk}/", {"value": "0"})
    assert answered["Location"] == f"/work/{study.pk}/training/{first.pk}/"
    feedback = client.get(answered["Location"]).content.decode()
    assert "Not quite." in feedback
    assert EXPLANATION in feedback
    assert re.search(r'id="feedback-gold">2</strong>', feedback)
    assert 'id="training-next"' in feedback
    answer = TrainingAnswer.objects.get(annotator=annotator, training_item=first)
    assert answer.seconds_spent is not None

    client.get(f"/work/{study.pk}/training/")
    last = client.get(client.post(f"/work/{study.pk}/training/{second.pk}/", {"value": "2"})["Location"])
    html = last.content.decode()
    assert "Right!" in html
    assert "You passed the qualification round" in html
    assert f'href="/work/{study.pk}/rate/"' in html
    assert client.get(f"/work/{study.pk}/rate/").status_code == 200


def test_a_failed_volunteer_gets_a_polite_page_and_no_work_until_reset() -> None:
    study = training_study(items=2, threshold=0.8, completion_code="DONE-123")
    annotator = volunteer(study)
    assert annotator.user is not None
    client = _logged_in(annotator.user)
    for item in training_items(study):
        client.post(f"/work/{study.pk}/training/{item.pk}/", {"value": "0"})
    annotator.refresh_from_db()
    assert annotator.qualification == "failed"
    assert client.get(f"/work/{study.pk}/rate/")["Location"] == f"/work/{study.pk}/training/"
    page = client.get(f"/work/{study.pk}/training/").content.decode()
    assert "Thank you for taking part" in page
    assert "DONE-123" not in page
    api = _api(annotator.user)
    refused = api.get(f"/api/work/{study.pk}/next/", {"kind": "rate"})
    assert refused.status_code == 403
    assert "did not pass" in refused.json()["detail"]

    owner = _logged_in(study.owner)
    reset = owner.post(f"/studies/{study.pk}/annotation/annotators/{annotator.pk}/requalify/")
    assert reset.status_code == 302
    annotator.refresh_from_db()
    assert annotator.qualification == "pending"
    assert client.get(f"/work/{study.pk}/training/").status_code == 200


def test_the_training_api_serves_items_and_feedback_then_the_work() -> None:
    study = training_study(items=2, threshold=0.5)
    annotator = volunteer(study)
    assert annotator.user is not None
    api = _api(annotator.user)
    blocked = api.get(f"/api/work/{study.pk}/next/", {"kind": "rate"})
    assert blocked.status_code == 403
    assert f"/api/work/{study.pk}/training/next/" in blocked.json()["detail"]
    for value, correct in ((2, True), (1, False)):
        served = api.get(f"/api/work/{study.pk}/training/next/").json()
        assert served["done"] is False
        item = served["item"]
        assert "gold_min" not in item
        assert "explanation" not in item
        assert [point["value"] for point in item["question"]["points"]] == [0, 1, 2]
        feedback = api.post(
            f"/api/work/{study.pk}/training/{item['training_item']}/answer/", {"value": value}, format="json"
        ).json()
        assert (feedback["correct"], feedback["gold_min"], feedback["gold_max"]) == (correct, 2, 2)
        assert feedback["explanation"] == EXPLANATION
    assert (feedback["finished"], feedback["qualification"]) == (True, "passed")
    done = api.get(f"/api/work/{study.pk}/training/next/").json()
    assert (done["done"], done["qualification"], done["score"]["correct"]) == (True, "passed", 1)
    assert api.get(f"/api/work/{study.pk}/next/", {"kind": "rate"}).status_code == 200
    closed = training_items(study)[0]
    late = api.post(f"/api/work/{study.pk}/training/{closed.pk}/answer/", {"value": "x"}, format="json")
    assert (late.status_code, late.json()["field"]) == (400, "value")


# ---- the completion code --------------------------------------------------------------------------


def test_the_completion_code_is_shown_when_the_work_is_done() -> None:
    study = work_study(contexts=1, systems=1, k=1, completion_code="C0MPLETE-42")
    annotator = volunteer(study)
    assert annotator.user is not None
    client = _logged_in(annotator.user)
    page = client.get(f"/work/{study.pk}/rate/").content.decode()
    assert "C0MPLETE-42" not in page
    assert "C0MPLETE-42" not in client.get(f"/work/{study.pk}/").content.decode()
    assignment = re.search(rf'action="/work/{study.pk}/rate/(\d+)/"', page)
    assert assignment is not None
    client.post(f"/work/{study.pk}/rate/{assignment.group(1)}/", {"q-appropriateness": "1"})
    done = client.get(f"/work/{study.pk}/rate/").content.decode()
    assert 'id="completion-code">C0MPLETE-42<' in done
    assert 'id="completion-code">C0MPLETE-42<' in client.get(f"/work/{study.pk}/").content.decode()


# ---- the researcher's side ------------------------------------------------------------------------


def _training_form(reply: str, question: Question, gold_min: object, gold_max: object) -> dict[str, object]:
    return {
        "training-reply": reply,
        "training-question": question.pk,
        "training-gold_min": gold_min,
        "training-gold_max": gold_max,
        "training-explanation": "Because <i>reasons</i>.",
    }


def test_the_researcher_adds_lists_and_removes_training_items() -> None:
    study = work_study(contexts=2)
    question = Question.objects.get(study=study)
    reply = Response.objects.filter(context__study=study).order_by("id").first()
    assert reply is not None
    reply.external_id = "r-77"
    reply.save()
    owner = _logged_in(study.owner)
    url = f"/studies/{study.pk}/annotation/training/"

    out_of_scale = owner.post(url, _training_form(str(reply.pk), question, 0, 5))
    assert out_of_scale.status_code == 400
    assert "5 is outside the scale 0-2" in out_of_scale.content.decode()
    unknown = owner.post(url, _training_form("no-such-reply", question, 0, 1))
    assert unknown.status_code == 400
    assert "No reply of this study" in unknown.content.decode()
    assert not TrainingItem.objects.exists()

    added = owner.post(url, _training_form("r-77", question, 1, 2))
    assert added.status_code == 302
    item = TrainingItem.objects.get(study=study)
    assert (item.response_id, item.gold_min, item.gold_max) == (reply.pk, 1, 2)
    page = owner.get(f"/studies/{study.pk}/annotation/").content.decode()
    assert 'id="training-table"' in page
    assert "Because &lt;i&gt;reasons&lt;/i&gt;." in page

    other = _logged_in(ResearcherFactory.create())
    assert other.post(url, _training_form(str(reply.pk), question, 0, 0)).status_code == 404
    assert other.post(f"{url}{item.pk}/delete/").status_code == 404
    assert owner.post(f"{url}{item.pk}/delete/").status_code == 302
    assert not TrainingItem.objects.exists()


def test_the_progress_page_shows_consent_qualification_and_training_score() -> None:
    study = training_study(items=2, threshold=0.5)
    waiting = volunteer(study, consented=False)
    passed = volunteer(study)
    for item, value in zip(training_items(study), (2, 0), strict=True):
        _logged_in(passed.user).post(f"/work/{study.pk}/training/{item.pk}/", {"value": value})  # type: ignore[arg-type]
    page = _logged_in(study.owner).get(f"/studies/{study.pk}/annotation/").content.decode()
    rows = re.findall(r'<tr class="admission" data-annotator="([^"]+)">(.*?)</tr>', page, re.S)
    by_name = dict(rows)
    assert "not yet" in by_name[waiting.pseudonym]
    assert "pending" in by_name[waiting.pseudonym]
    assert "passed" in by_name[passed.pseudonym]
    assert "1 of 2 right" in by_name[passed.pseudonym]


def test_the_joining_settings_are_saved_and_a_bad_parameter_name_is_refused() -> None:
    from annotation.progress.forms import AnnotationSettingsForm
    from tests.form_posts import form_values

    study = work_study(contexts=1)
    owner = _logged_in(study.owner)
    values = form_values(AnnotationSettingsForm.for_study(study))
    values.update(
        {
            "settings-crowd_id_parameter": "PROLIFIC_PID",
            "settings-completion_code": "ABC123",
            "settings-qualification_threshold": "0.6",
            "settings-consent_text": "You may stop at any time.",
        }
    )
    values.pop("settings-signup_open", None)
    assert owner.post(f"/studies/{study.pk}/annotation/settings/", values).status_code == 302
    study.refresh_from_db()
    assert (study.crowd_id_parameter, study.completion_code, study.qualification_threshold) == (
        "PROLIFIC_PID",
        "ABC123",
        0.6,
    )
    assert (study.consent_text, study.signup_open) == ("You may stop at any time.", False)

    values["settings-crowd_id_parameter"] = "PROLIFIC PID?"
    refused = owner.post(f"/studies/{study.pk}/annotation/settings/", values)
    assert refused.status_code == 400
    assert "a URL parameter name" in refused.content.decode()
    values["settings-crowd_id_parameter"] = "PROLIFIC_PID"
    values["settings-qualification_threshold"] = "1.5"
    assert owner.post(f"/studies/{study.pk}/annotation/settings/", values).status_code == 400
    study.refresh_from_db()
    assert study.qualification_threshold == 0.6

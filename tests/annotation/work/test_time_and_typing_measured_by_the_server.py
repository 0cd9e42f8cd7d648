"""Time on an item and typing are the server's measures, not the client's claims (when the tool was
tried for real): a forged time is kept only as the client's claim, a second visit adds the server's time,
an instant API answer is too fast whatever it claims, and a reference's paste and speed flags come from
the key presses the page counts and the server's clock."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Assignment, Rating, Reference, Study
from tests.annotation.work_builders import annotators, measured, shown_ago, work_study
from tests.api.work_api_support import members
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_forged_time_is_stored_as_the_clients_claim_and_the_server_measures_its_own() -> None:
    study = work_study(contexts=2, systems=1, k=1)
    (member,) = members(study, 1)
    item = member.next(study).json()
    shown_ago(item["assignment"], 4.0)
    assert member.rate(study, item["assignment"], value=2, seconds=500).status_code == 200

    rating = Rating.objects.get(annotator=member.annotator)
    assert rating.client_seconds == 500
    assert 4.0 <= measured(rating.seconds_spent) < 30  # the server's clock, not the claim
    assignment = Assignment.objects.get(pk=item["assignment"])
    assert assignment.client_seconds == 500
    assert assignment.seconds_spent == pytest.approx(rating.seconds_spent)


def test_a_second_visit_adds_the_servers_time_not_the_clients() -> None:
    study = work_study(contexts=2, systems=1, k=1)
    (member,) = members(study, 1)
    item = member.next(study).json()
    shown_ago(item["assignment"], 3.0)
    member.rate(study, item["assignment"], value=2, seconds=500)
    first = measured(Rating.objects.get(annotator=member.annotator).seconds_spent)

    back = member.client.get(f"/api/work/{study.pk}/previous/", {"kind": "rate"}).json()
    assert back["assignment"] == item["assignment"]
    shown_ago(item["assignment"], 2.0)
    member.rate(study, item["assignment"], value=1, seconds=3)
    rating = Rating.objects.get(annotator=member.annotator)
    assert rating.value == 1
    assert rating.client_seconds == 503  # the claims add up, and are only kept
    assert first + 2.0 <= measured(rating.seconds_spent) < first + 30


def test_an_instant_api_answer_is_too_fast_whatever_time_it_claims() -> None:
    from annotation.selectors.quality import study_quality  # the researcher's QC table

    study = work_study(contexts=4, systems=1, k=1, min_seconds_per_item=2.0)
    (member,) = members(study, 1)
    for _ in range(3):
        item = member.next(study).json()
        member.rate(study, item["assignment"], value=2, seconds=60)
    (row,) = [row for row in study_quality(study=study) if row.annotator_id == member.annotator.pk]
    assert row.too_fast_share == 1.0


def _writer(study: Study):
    (member,) = members(study, 1)
    item = member.next(study, kind="write").json()
    return member, item["assignment"]


def _write(member, study: Study, assignment: int, text: str, **fields) -> Reference:
    response = member.post(study, assignment, "reference", {"text": text, **fields})
    assert response.status_code == 200, response.content
    return Reference.objects.filter(author=member.annotator).latest("id")


def test_pasted_false_is_not_believed_when_the_key_presses_do_not_add_up() -> None:
    study = work_study(contexts=1, systems=1, rating_enabled=False, references_wanted=3)
    member, assignment = _writer(study)
    shown_ago(assignment, 60)
    text = "Sure, I can meet you at the station at eight."
    typed = _write(member, study, assignment, text, pasted=False, keystrokes=len(text) + 4, seconds=20)
    assert typed.flags == []
    assert typed.keystrokes == len(text) + 4
    assert typed.client_seconds == 20

    shown_ago(assignment, 60)
    filled = _write(member, study, assignment, "No thanks, I already have other plans tonight.", pasted=False,
                    keystrokes=3, seconds=20)  # fmt: skip
    assert "pasted" in filled.flags  # autofill, dictation: text without key presses

    shown_ago(assignment, 60)
    silent = _write(member, study, assignment, "Maybe another day then, call me.", pasted=False)
    assert "no-keystrokes" in silent.flags  # a client that measures nothing gets no benefit of the doubt


def test_a_reference_written_faster_than_anyone_types_is_flagged_by_the_servers_clock() -> None:
    study = work_study(contexts=1, systems=1, rating_enabled=False, references_wanted=2)
    member, assignment = _writer(study)
    text = "This is a long and thoughtful reply that nobody types in a second."
    reference = _write(member, study, assignment, text, keystrokes=len(text), seconds=300)
    assert "too-fast" in reference.flags
    assert measured(reference.seconds_spent) < 5 < measured(reference.client_seconds)


def test_the_page_counts_key_presses_and_the_view_passes_them_on() -> None:
    study = work_study(contexts=1, systems=1, rating_enabled=False, references_wanted=2)
    (annotator,) = annotators(study, 1)
    annotator.user = UserFactory.create()
    annotator.save()
    client = Client()
    client.force_login(annotator.user)
    page = client.get(f"/work/{study.pk}/write/")
    assert b'name="keystrokes"' in page.content
    assignment = Assignment.objects.get(annotator=annotator)
    shown_ago(assignment.pk, 60)
    text = "I would love to come along."
    client.post(f"/work/{study.pk}/write/{assignment.pk}/", {"text": text, "keystrokes": "2", "pasted": ""})
    assert Reference.objects.get(author=annotator).flags == ["pasted"]

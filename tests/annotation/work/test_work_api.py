"""The annotators' REST API (annotation/work/api.py) on a real database: join, next, answer, skip, back;
the error shapes (400 naming the field, 404 for what is not yours, 409 for a lost slot)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, AssignmentStatus, DiversityJudgment, Rating, Reference, WorkItem
from annotation.services.work_items import work_items_sync
from tests.annotation.work_builders import shown_ago, work_study
from tests.api.work_api_support import add_samples, client_for, members
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_join_by_token_is_idempotent_and_a_bad_token_names_the_field():
    study = work_study(contexts=1)
    user = UserFactory.create()
    client = client_for(user)
    joined = client.post("/api/work/join/", {"token": study.invite_token}, format="json")
    assert joined.status_code == 200, joined.content
    body = joined.json()
    assert (body["study"], body["name"], body["tasks"]) == (study.pk, study.name, ["rate"])
    assert body["annotator"].startswith("annotator-")
    again = client.post("/api/work/join/", {"token": study.invite_token}, format="json")
    assert again.json()["annotator"] == body["annotator"]
    assert study.annotators.count() == 1

    bad = client.post("/api/work/join/", {"token": "not-a-token"}, format="json")
    assert bad.status_code == 404  # no study has it (a well-formed request for nothing)
    assert bad.json()["field"] == "token"
    missing = client.post("/api/work/join/", {}, format="json")
    assert (missing.status_code, missing.json()["field"]) == (400, "token")
    study.invites_open = False
    study.save()
    closed = client_for(UserFactory.create()).post(
        "/api/work/join/", {"token": study.invite_token}, format="json"
    )
    assert closed.status_code == 400
    assert "not admitting" in closed.json()["detail"]


def test_next_gives_a_blind_item_with_progress_and_the_same_item_on_reload():
    study = work_study(contexts=2, systems=2, k=2)
    (member,) = members(study, 1)
    first = member.next(study)
    assert first.status_code == 200, first.content
    item = first.json()
    assert item["done"] is False
    assert item["resumed"] is False
    assert item["kind"] == "rate"
    assert item["progress"] == {"done": 0, "total": 4, "percent": 0, "skipped": 0}
    assert [point["value"] for point in item["questions"][0]["points"]] == [0, 1, 2]
    assert item["turns"][-1]["is_query"] is True
    assert item["reply"].startswith("bot-")  # the reply text, which the test study words this way
    again = member.next(study).json()
    assert again["assignment"] == item["assignment"]
    assert again["resumed"] is True


def test_rating_is_stored_and_progress_moves():
    study = work_study(contexts=2, systems=1, k=1)
    (member,) = members(study, 1)
    item = member.next(study).json()
    answered = member.rate(study, item["assignment"], value=2, seconds=4.5)
    assert answered.status_code == 200, answered.content
    assert answered.json() == {
        "warnings": [],
        "blocked": False,
        "remaining": 0,
        "progress": {"done": 1, "total": 2, "percent": 50, "skipped": 0},
    }
    rating = Rating.objects.get(annotator=member.annotator)
    assert (rating.value, rating.client_seconds, rating.question.name) == (2, 4.5, "appropriateness")
    assert rating.seconds_spent is not None  # the server's own measure (a few ms here)
    assignment = Assignment.objects.get(pk=item["assignment"])
    assert assignment.status == AssignmentStatus.DONE
    assert rating.response_id == assignment.item.response_id


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"values": {}}, "appropriateness"),
        ({"values": {"appropriateness": 3}}, "appropriateness"),
        ({"values": {"appropriateness": -1}}, "appropriateness"),
        ({"values": {"appropriateness": "good"}}, "appropriateness"),
        ({"values": {"appropriateness": 1.5}}, "appropriateness"),
        ({"values": {"appropriateness": 1, "fluency": 3}}, "fluency"),
        ({"values": [1]}, "values"),
        ({}, "values"),
        ({"values": {"appropriateness": 1}, "seconds": -2}, "seconds"),
        ({"values": {"appropriateness": 1}, "seconds": "slow"}, "seconds"),
    ],
)
def test_invalid_rating_is_a_400_naming_the_field_and_stores_nothing(body, field):
    study = work_study(contexts=1, systems=1, k=1)
    (member,) = members(study, 1)
    item = member.next(study).json()
    rejected = member.post(study, item["assignment"], "rating", body)
    assert rejected.status_code == 400, rejected.content
    assert rejected.json()["field"] == field
    assert rejected.json()["detail"]
    assert not Rating.objects.exists()
    assert Assignment.objects.get(pk=item["assignment"]).status == AssignmentStatus.ACTIVE


def test_other_peoples_items_and_studies_are_404():
    study = work_study(contexts=2, systems=1, k=2)
    owner_of_item, other = members(study, 2)
    item = owner_of_item.next(study).json()
    assert other.rate(study, item["assignment"]).status_code == 404
    assert other.post(study, item["assignment"], "skip").status_code == 404
    assert not Rating.objects.exists()

    other_study = work_study(contexts=1)
    assert owner_of_item.next(other_study).status_code == 404  # not a member
    assert owner_of_item.rate(other_study, item["assignment"]).status_code == 404  # right id, wrong study
    researcher = client_for(study.owner)  # owning the study does not make one an annotator of it
    assert researcher.get(f"/api/work/{study.pk}/next/").status_code == 404
    anonymous = APIClient().get(f"/api/work/{study.pk}/next/")
    assert anonymous.status_code in (401, 403)


def test_unknown_or_absent_task_kind_is_a_400():
    study = work_study(contexts=1)
    (member,) = members(study, 1)
    assert member.next(study, kind="dance").json()["field"] == "kind"
    no_collection = member.next(study, kind="write")
    assert no_collection.status_code == 400
    assert no_collection.json() == {"field": "kind", "detail": "this study has no write task"}


def test_nothing_left_says_done_with_a_reason():
    study = work_study(contexts=1, systems=1, k=1)
    first, second = members(study, 2)
    item = first.next(study).json()
    busy = second.next(study).json()
    assert (busy["done"], busy["reason"]) == (True, "busy")
    first.rate(study, item["assignment"])
    finished = first.next(study).json()
    assert finished["done"] is True
    assert finished["reason"] == "done"
    assert finished["message"]
    assert finished["progress"]["done"] == 1
    assert second.next(study).json()["reason"] == "done"


def test_late_answer_after_the_item_went_to_someone_else_is_a_409():
    study = work_study(contexts=1, systems=1, k=1, hold_seconds=60)
    slow, fast = members(study, 2)
    held = slow.next(study).json()["assignment"]
    Assignment.objects.filter(pk=held).update(handed_at=timezone.now() - timedelta(seconds=61))
    taken = fast.next(study).json()
    assert taken["done"] is False  # the stale hold was swept and the item handed on
    late = slow.rate(study, held)
    assert late.status_code == 409
    assert "given to other annotators" in late.json()["detail"]
    assert not Rating.objects.filter(annotator=slow.annotator).exists()
    assert fast.rate(study, taken["assignment"]).status_code == 200


def test_skip_returns_the_item_to_the_pool_and_it_comes_back_last():
    study = work_study(contexts=2, systems=1, k=1)
    (member,) = members(study, 1)
    first = member.next(study).json()["assignment"]
    skipped = member.post(study, first, "skip")
    assert skipped.status_code == 200
    assert skipped.json() == {"skipped": True}
    assert member.post(study, first, "skip").status_code == 409  # only an item one holds
    skipped_item = Assignment.objects.get(pk=first).item
    assert skipped_item.taken == 0
    second = member.next(study).json()
    assert Assignment.objects.get(pk=second["assignment"]).item_id != skipped_item.pk
    assert second["progress"]["skipped"] == 1
    member.rate(study, second["assignment"])
    again = member.next(study).json()  # nothing new is left: the skipped item comes back
    assert again["assignment"] == first
    member.rate(study, first)
    assert member.next(study).json()["reason"] == "done"


def test_back_shows_the_earlier_answer_and_a_new_answer_replaces_it():
    study = work_study(contexts=3, systems=1, k=1)
    (member,) = members(study, 1)
    first = member.next(study).json()["assignment"]
    member.rate(study, first, value=0)
    second = member.next(study).json()["assignment"]
    member.rate(study, second, value=2)
    third = member.next(study).json()["assignment"]

    url = f"/api/work/{study.pk}/previous/"
    back = member.client.get(url, {"kind": "rate", "before": third}).json()
    assert (back["assignment"], back["answers"]) == (second, {"appropriateness": 2})
    back_again = member.client.get(url, {"kind": "rate", "before": second}).json()
    assert (back_again["assignment"], back_again["answers"]) == (first, {"appropriateness": 0})
    assert member.client.get(url, {"kind": "rate", "before": first}).json()["assignment"] is None
    assert member.client.get(url, {"before": "x"}).json()["field"] == "before"

    changed = member.rate(study, first, value=1)
    assert changed.status_code == 200
    assert changed.json()["progress"]["done"] == 2  # an edit is not a new item
    values = sorted(Rating.objects.filter(annotator=member.annotator).values_list("value", flat=True))
    assert values == [1, 2]
    assert member.next(study).json()["assignment"] == third  # still held


def test_references_one_at_a_time_with_the_collection_rules():
    study = work_study(contexts=1, systems=1, references_wanted=2, collection_mode="one")
    (member,) = members(study, 1)
    item = member.next(study, kind="write").json()
    assert (item["kind"], item["quota"], item["remaining"], item["written"]) == ("write", 2, 2, [])
    assignment = item["assignment"]

    short = member.post(study, assignment, "reference", {"text": "a", "seconds": 9})
    assert (short.status_code, short.json()["field"]) == (400, "text")
    shown_ago(assignment, 30)
    first = member.post(
        study, assignment, "reference", {"text": "let us make pasta .", "seconds": 9, "keystrokes": 19}
    )
    assert first.status_code == 200, first.content
    assert first.json()["remaining"] == 1
    repeated = member.post(study, assignment, "reference", {"text": "Let us make PASTA!", "seconds": 9})
    assert (repeated.status_code, repeated.json()["field"]) == (400, "text")
    assert "already wrote" in repeated.json()["detail"]
    shown_ago(assignment, 30)
    pasted = member.post(
        study,
        assignment,
        "reference",
        {"text": "how about soup ?", "seconds": 8, "pasted": True, "keystrokes": 16},
    )
    assert pasted.json()["remaining"] == 0
    assert pasted.json()["progress"]["done"] == 1
    references = list(Reference.objects.filter(author=member.annotator).order_by("id"))
    assert [r.text for r in references] == ["let us make pasta .", "how about soup ?"]
    assert [r.flags for r in references] == [[], ["pasted"]]
    assert member.next(study, kind="write").json()["reason"] == "done"
    assert (
        member.post(study, assignment, "reference", {"text": "a third one", "seconds": 9}).status_code == 400
    )


def test_diversity_judgment_checks_the_replies_and_the_number_of_meanings():
    study = work_study(contexts=1, systems=1, diversity_enabled=True)
    replies = add_samples(study)
    work_items_sync(study=study)
    (member,) = members(study, 1)
    item = member.next(study, kind="diversity").json()
    assert item["kind"] == "diversity"
    assert [reply["id"] for reply in item["replies"]] == [reply.pk for reply in replies]
    assignment = item["assignment"]
    chosen = [replies[0].pk, replies[2].pk]

    too_many = member.post(study, assignment, "diversity", {"appropriate": chosen, "meanings": 3})
    assert (too_many.status_code, too_many.json()["field"]) == (400, "meanings")
    foreign = member.post(study, assignment, "diversity", {"appropriate": [10**9], "meanings": 1})
    assert (foreign.status_code, foreign.json()["field"]) == (400, "appropriate")
    not_ids = member.post(study, assignment, "diversity", {"appropriate": ["x"], "meanings": 1})
    assert (not_ids.status_code, not_ids.json()["field"]) == (400, "appropriate.0")
    assert member.post(study, assignment, "rating", {"values": {"appropriateness": 1}}).json()["field"] == (
        "assignment"
    )

    judged = member.post(study, assignment, "diversity", {"appropriate": chosen, "meanings": 2, "seconds": 7})
    assert judged.status_code == 200, judged.content
    judgment = DiversityJudgment.objects.get(annotator=member.annotator)
    assert (judgment.meanings, judgment.client_seconds) == (2, 7.0)
    assert sorted(judgment.appropriate.values_list("pk", flat=True)) == sorted(chosen)


def test_token_authentication_and_csrf_on_session_posts():
    study = work_study(contexts=1, systems=1, k=1)
    (member,) = members(study, 1)
    token = Token.objects.create(user=member.user)
    by_token = APIClient()
    by_token.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    item = by_token.get(f"/api/work/{study.pk}/next/").json()
    assert item["done"] is False

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(member.user)
    url = f"/api/work/{study.pk}/assignments/{item['assignment']}/rating/"
    forged = browser.post(url, {"values": {"appropriateness": 1}}, content_type="application/json")
    assert forged.status_code == 403  # a session POST without the CSRF token
    assert not Rating.objects.exists()
    assert WorkItem.objects.get(study=study).done == 0


def test_no_references_for_a_context_after_skipping_it_once_another_writer_has_it():
    study = work_study(contexts=1, systems=1, references_wanted=2, collection_mode="one")
    quitter, writer = members(study, 2)
    skipped = quitter.next(study, kind="write").json()["assignment"]
    assert quitter.post(study, skipped, "skip").status_code == 200
    taken = writer.next(study, kind="write").json()["assignment"]
    late = quitter.post(study, skipped, "reference", {"text": "written after skipping", "seconds": 9})
    assert late.status_code == 409
    assert not Reference.objects.filter(author=quitter.annotator).exists()
    for text in ("one reply", "another reply"):
        assert writer.post(study, taken, "reference", {"text": text, "seconds": 9}).status_code == 200
    assert Reference.objects.filter(context__study=study, origin="collected").count() == 2  # N, not more

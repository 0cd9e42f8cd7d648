"""The defects seen when the tool was tried for real (issue 13), each with the test that failed before:
time and paste flags the client could fake, skipped items that never came back, scales too wide to rate by
keys, invisible references, study names that leaked across researchers, and rough edges of the pages."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.test import Client
from rest_framework.test import APIClient

from annotation import reference_rules
from annotation.models import Assignment, AssignmentStatus, Question, Rating, Reference, Study, WorkKind
from annotation.scales import question_specs_from_text, scale_problem
from annotation.selectors.work import annotator_progress
from annotation.services.assignment import NoWork, assignment_skip, next_assignment
from annotation.services.studies import study_create
from annotation.services.submissions import SubmissionInvalid, rating_submit, reference_add
from tests.annotation.work_builders import annotators, measured, shown_ago, work_study
from tests.api.work_api_support import members
from tests.factories import ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db


# ---- time and paste flags come from the server ----


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


# ---- skipped items come back ----


def test_a_skipped_item_comes_back_at_the_end_and_the_count_says_so() -> None:
    study = work_study(contexts=3, systems=1, k=1)
    (annotator,) = annotators(study, 1)
    first = next_assignment(annotator=annotator).assignment
    assignment_skip(annotator=annotator, assignment_id=first.pk)
    progress = annotator_progress(annotator=annotator, kind=WorkKind.RATE)
    assert (progress.done, progress.total, progress.skipped) == (0, 3, 1)

    seen = []
    for _ in range(3):
        handout = next_assignment(annotator=annotator).assignment
        seen.append(handout.item_id)
        rating_submit(annotator=annotator, assignment_id=handout.pk, values={"appropriateness": 1})
    assert seen[-1] == first.item_id  # the skip came back last
    assert len(set(seen)) == 3
    progress = annotator_progress(annotator=annotator, kind=WorkKind.RATE)
    assert (progress.done, progress.total, progress.skipped) == (3, 3, 0)
    with pytest.raises(NoWork) as finished:
        next_assignment(annotator=annotator)
    assert finished.value.reason == "done"


def test_a_skipped_item_that_others_filled_leaves_the_count_complete() -> None:
    study = work_study(contexts=2, systems=1, k=1)
    me, other = annotators(study, 2)
    mine = next_assignment(annotator=me).assignment
    assignment_skip(annotator=me, assignment_id=mine.pk)
    rest = next_assignment(annotator=me).assignment  # the other item
    rating_submit(annotator=me, assignment_id=rest.pk, values={"appropriateness": 2})
    theirs = next_assignment(annotator=other).assignment
    assert theirs.item_id == mine.item_id  # the skipped item went back to the pool, and only it is left
    rating_submit(annotator=other, assignment_id=theirs.pk, values={"appropriateness": 0})
    progress = annotator_progress(annotator=me, kind=WorkKind.RATE)
    assert (progress.done, progress.total, progress.skipped) == (1, 1, 0)  # not "1 of 2"
    with pytest.raises(NoWork) as finished:
        next_assignment(annotator=me)
    assert finished.value.reason == "done"


def test_the_page_shows_the_skipped_count() -> None:
    study = work_study(contexts=3, systems=1, k=1)
    (annotator,) = annotators(study, 1)
    annotator.user = UserFactory.create()
    annotator.save()
    client = Client()
    client.force_login(annotator.user)
    client.get(f"/work/{study.pk}/rate/")
    held = Assignment.objects.get(annotator=annotator)
    client.post(f"/work/{study.pk}/rate/{held.pk}/skip/")
    page = client.get(f"/work/{study.pk}/rate/").content.decode()
    assert "1 skipped: it comes back at the end" in page


# ---- scales: at most 11 ordinal points, sliders for wide ranges ----


def test_ordinal_scales_stop_at_eleven_points_and_wider_ones_are_sliders() -> None:
    assert scale_problem(0, 10) is None
    assert "at most 11" in (scale_problem(1, 100) or "")
    assert scale_problem(0, 100, "slider") is None
    (slider,) = question_specs_from_text("overall 0-100 slider bad / excellent")
    assert (slider.kind, slider.labels) == ("slider", ("bad", "excellent"))
    with pytest.raises(ValueError, match=r"line 1: .*use a slider"):
        question_specs_from_text("overall 1-100")
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="q", scale="0-2")
    with pytest.raises(IntegrityError), transaction.atomic():
        Question.objects.create(study=study, name="wide", scale_min=1, scale_max=100)


def test_the_api_refuses_a_hundred_point_ordinal_question_and_takes_a_slider() -> None:
    client = APIClient()
    client.force_authenticate(ResearcherFactory.create())
    wide = {"name": "wide", "questions": [{"name": "overall", "scale_min": 1, "scale_max": 100}]}
    refused = client.post("/api/studies/", wide, format="json")
    assert refused.status_code == 400
    assert "use a slider" in str(refused.json())
    slider = {"name": "slider", "questions": [{"name": "overall", "scale_min": 0, "scale_max": 100,
                                              "kind": "slider", "labels": ["bad", "excellent"]}]}  # fmt: skip
    assert client.post("/api/studies/", slider, format="json").status_code == 201
    assert Question.objects.get(study__name="slider").kind == "slider"


def test_a_slider_question_is_rated_on_the_page_and_by_the_api() -> None:
    study = work_study(contexts=2, systems=1, k=1)
    Question.objects.filter(study=study).update(
        kind="slider", scale_min=0, scale_max=100, labels=["bad", "good"]
    )
    (member,) = members(study, 1)
    client = Client()
    client.force_login(member.user)
    page = client.get(f"/work/{study.pk}/rate/").content.decode()
    assert 'type="range"' in page
    assert 'name="q-appropriateness"' in page
    assert 'type="number"' in page
    held = Assignment.objects.get(annotator=member.annotator)
    missing = client.post(f"/work/{study.pk}/rate/{held.pk}/", {"q-appropriateness": ""})
    assert missing.status_code == 400
    client.post(f"/work/{study.pk}/rate/{held.pk}/", {"q-appropriateness": "73"})
    assert Rating.objects.get(annotator=member.annotator).value == 73
    item = member.next(study).json()
    assert item["questions"][0]["kind"] == "slider"
    assert item["questions"][0]["ends"] == ["bad", "good"]
    refused = member.post(study, item["assignment"], "rating", {"values": {"appropriateness": 101}})
    assert refused.status_code == 400


def test_a_ten_point_scale_gets_keys_for_every_point() -> None:
    study = work_study(contexts=1, systems=1, k=1)
    Question.objects.filter(study=study).update(scale_min=0, scale_max=10, labels=[])
    (member,) = members(study, 1)
    client = Client()
    client.force_login(member.user)
    page = client.get(f"/work/{study.pk}/rate/").content.decode()
    keys = re.findall(r'data-key="(\d+)"', page)
    assert keys == [str(value) for value in range(11)]


# ---- references of invisible characters ----


@pytest.mark.parametrize(
    "text",
    ["\u200b\u200b\u200b", "\u200b \u200c\u200d\ufeff", "a\u200b", "\u2060\u00ad\u200e", " \u3000 "],
)
def test_references_of_invisible_characters_are_refused(text: str) -> None:
    assert reference_rules.length_problem(text) is not None
    study = work_study(contexts=1, systems=1, rating_enabled=False, references_wanted=2)
    (annotator,) = annotators(study, 1)
    handout = next_assignment(annotator=annotator, kind=WorkKind.WRITE).assignment
    with pytest.raises(SubmissionInvalid) as refused:
        reference_add(annotator=annotator, assignment_id=handout.pk, text=text, keystrokes=3)
    assert refused.value.field == "text"
    assert not Reference.objects.filter(author=annotator).exists()


def test_invisible_characters_do_not_make_a_repeat_new() -> None:
    assert reference_rules.repeat_problem("see\u200b you", ["see you"]) is not None


# ---- study names are unique per owner ----


def test_two_researchers_may_both_call_a_study_pilot() -> None:
    alice, bob = ResearcherFactory.create(), ResearcherFactory.create()
    study_create(owner=alice, name="Pilot")
    client = Client()
    client.force_login(bob)
    response = client.post("/studies/new/", {"name": "Pilot", "language": "en", "scale": "0-2",
                                             "ratings_per_item": 3})  # fmt: skip
    assert response.status_code == 302
    assert Study.objects.filter(name="Pilot").count() == 2
    again = client.post("/studies/new/", {"name": "Pilot", "language": "en", "scale": "0-2",
                                          "ratings_per_item": 3})  # fmt: skip
    assert again.status_code == 200
    assert "You already have a study with this name" in again.content.decode()

    api = APIClient()
    api.force_authenticate(alice)
    assert api.post("/api/studies/", {"name": "Pilot"}, format="json").status_code == 400
    carol = APIClient()
    carol.force_authenticate(ResearcherFactory.create())
    assert carol.post("/api/studies/", {"name": "Pilot"}, format="json").status_code == 201


def test_a_command_given_an_ambiguous_name_asks_for_the_id() -> None:
    alice, bob = ResearcherFactory.create(), ResearcherFactory.create()
    study_create(owner=alice, name="Pilot")
    bobs = study_create(owner=bob, name="Pilot")
    with pytest.raises(CommandError, match="2 studies are named 'Pilot'"):
        call_command("study_report", "Pilot")
    with pytest.raises(CommandError, match="2 studies are named 'Pilot'"):
        call_command("export_annotations", "Pilot")
    from annotation.selectors.studies import study_by_name_or_id

    assert study_by_name_or_id(str(bobs.pk)) == bobs
    assert study_by_name_or_id("Pilot", owner=bob.username) == bobs


# ---- the pages ----


def _ids(html: str) -> Counter[str]:
    return Counter(re.findall(r'\sid="([^"]+)"', html))


def test_the_study_page_has_no_duplicate_ids_and_prints_import_errors_once() -> None:
    owner = ResearcherFactory.create()
    study = work_study(contexts=2, systems=2, k=1)
    study.owner = owner
    study.save()
    client = Client()
    client.force_login(owner)
    page = client.get(f"/studies/{study.pk}/").content.decode()
    duplicates = [name for name, count in _ids(page).items() if count > 1]
    assert duplicates == []

    bad = SimpleUploadedFile("bad.jsonl", b'{"context": ["hi"], "response": 5, "system": "s"}\n')
    rejected = client.post(f"/studies/{study.pk}/import/", {"format": "jsonl", "files": [bad]})
    assert rejected.status_code == 400
    html = rejected.content.decode()
    assert html.count("The import was rejected and nothing was changed") == 1
    assert html.count("bad.jsonl, line 1") == 1  # one problem, listed once
    assert [name for name, count in _ids(html).items() if count > 1] == []


def test_the_import_message_reads_as_words() -> None:
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="words", scale="0-2")
    client = Client()
    client.force_login(owner)
    rows = b'{"context": ["hi ?"], "response": "hello", "system": "s"}\n'
    response = client.post(f"/studies/{study.pk}/import/",
                           {"format": "jsonl", "files": [SimpleUploadedFile("a.jsonl", rows)]}, follow=True)  # fmt: skip
    text = response.content.decode()
    assert "1 new context, 1 new system, 1 new response" in text
    assert "_created" not in text


def test_forbidden_and_missing_pages_are_the_apps_own(settings) -> None:
    annotator_user = UserFactory.create()  # not a researcher
    client = Client()
    client.force_login(annotator_user)
    forbidden = client.get("/studies/")
    assert forbidden.status_code == 403
    assert "You cannot open this page" in forbidden.content.decode()
    assert annotator_user.username in forbidden.content.decode()
    missing = client.get("/no/such/page/")
    assert missing.status_code == 404
    assert "Page not found" in missing.content.decode()


def test_debug_is_off_for_make_run_unless_asked_for(monkeypatch) -> None:
    import importlib

    import config.settings.local as local

    monkeypatch.delenv("DJANGO_DEBUG", raising=False)
    assert importlib.reload(local).DEBUG is False
    monkeypatch.setenv("DJANGO_DEBUG", "1")
    assert importlib.reload(local).DEBUG is True
    monkeypatch.delenv("DJANGO_DEBUG")
    importlib.reload(local)


def test_a_stale_assignment_keeps_its_status_after_the_skip_came_back() -> None:
    study = work_study(contexts=1, systems=1, k=1)
    (annotator,) = annotators(study, 1)
    held = next_assignment(annotator=annotator).assignment
    assignment_skip(annotator=annotator, assignment_id=held.pk)
    back = next_assignment(annotator=annotator).assignment
    assert back.pk == held.pk
    assert back.status == AssignmentStatus.ACTIVE
    assert back.served_at is not None

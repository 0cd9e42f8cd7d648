"""The annotator pages through Django's test client: joining by invite, rating (skip, back and change,
several questions), writing references, judging diversity; only one's own queue, and blind."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from annotation.models import (
    Annotator,
    Assignment,
    AssignmentStatus,
    AttentionCheck,
    DialogContext,
    DiversityJudgment,
    Question,
    Rating,
    Reference,
    ReferenceOrigin,
    Response,
    Study,
)
from annotation.services.annotators import annotator_join
from annotation.services.joining import annotator_consent
from annotation.services.studies import QuestionSpec, study_create
from annotation.services.work_items import work_items_sync
from tests.annotation.work_builders import measured, shown_ago
from tests.factories import (
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

SYSTEM_NAMES = ("SecretBotAlpha", "SecretBotBeta")


def _study(
    *,
    contexts: int = 3,
    replies_per_system: int = 1,
    questions: list[QuestionSpec] | None = None,
    **fields: Any,
) -> Study:
    """Contexts each with replies from two systems whose names appear nowhere in the replies' text."""
    owner = ResearcherFactory.create()
    study = study_create(
        owner=owner,
        name=f"work pages {owner.pk}",
        description="Rate how well replies fit.",
        ratings_per_item=2,
        questions=questions,
    )
    for name, value in {"check_interval": 0, **fields}.items():
        setattr(study, name, value)
    study.save()
    bots = [SystemFactory.create(study=study, name=name) for name in SYSTEM_NAMES]
    for index in range(contexts):
        context = DialogContextFactory.create(
            study=study,
            turns=[
                {"speaker": "Ann", "text": f"how was day {index} ?"},
                {"speaker": "Bob", "text": f"tell me about day {index} ."},
            ],
        )
        for number, bot in enumerate(bots):
            for sample in range(replies_per_system):
                ResponseFactory.create(
                    context=context,
                    system=bot,
                    sample_index=sample,
                    text=f"reply {number}.{sample} about day {index}",
                )
    work_items_sync(study=study)
    return study


def _member(study: Study) -> tuple[Client, Annotator]:
    user = UserFactory.create()
    annotator = annotator_consent(annotator=annotator_join(token=study.invite_token, user=user))
    client = Client()
    client.force_login(user)
    return client, annotator


def _assignment_id(html: str, study: Study, kind: str) -> int:
    """The assignment the page's answer form posts to."""
    match = re.search(rf'action="/work/{study.pk}/{kind}/(\d+)/"', html)
    assert match, "the page has no answer form"
    return int(match.group(1))


def _reply_of(assignment_id: int) -> Response:
    response = Assignment.objects.get(pk=assignment_id).item.response
    assert response is not None
    return response


# ---- joining -------------------------------------------------------------------------------------


def test_an_invite_link_shows_the_study_and_joins_on_post() -> None:
    study = _study()
    url = f"/work/join/{study.invite_token}/"
    anonymous = Client().get(url)  # sign-up is on: the sign-up form, and a way to log in instead
    assert anonymous.status_code == 200
    assert f'href="/accounts/login/?next={url}"' in anonymous.content.decode()
    study.signup_open = False
    study.save()
    anonymous = Client().get(url)
    assert anonymous.status_code == 302
    assert anonymous["Location"] == f"/accounts/login/?next={url}"

    user = UserFactory.create()
    client = Client()
    client.force_login(user)
    page = client.get(url)
    assert page.status_code == 200
    assert study.name in page.content.decode()
    assert "Rate how well replies fit." in page.content.decode()
    assert not Annotator.objects.filter(user=user).exists()  # looking is not joining

    joined = client.post(url)
    assert joined.status_code == 302
    assert joined["Location"] == f"/work/{study.pk}/"
    annotator = Annotator.objects.get(study=study, user=user)
    assert annotator.pseudonym == "annotator-001"
    assert client.post(url).status_code == 302  # joining twice is harmless
    assert Annotator.objects.filter(study=study, user=user).count() == 1

    overview = client.get(f"/work/{study.pk}/").content.decode()
    assert f'href="/work/{study.pk}/rate/"' in overview
    assert "Write references" not in overview  # the study collects no references


def test_a_bad_or_closed_invite_gets_a_friendly_404() -> None:
    study = _study(contexts=1)
    user = UserFactory.create()
    client = Client()
    client.force_login(user)
    bad = client.get("/work/join/not-a-token/")
    assert bad.status_code == 404
    assert "not valid" in bad.content.decode()

    study.invites_open = False
    study.save()
    closed = client.post(f"/work/join/{study.invite_token}/")
    assert closed.status_code == 404
    assert "not admitting new annotators" in closed.content.decode()
    assert not Annotator.objects.filter(user=user).exists()


def test_join_needs_the_csrf_token() -> None:
    study = _study(contexts=1)
    client = Client(enforce_csrf_checks=True)
    client.force_login(UserFactory.create())
    assert client.post(f"/work/join/{study.invite_token}/").status_code == 403


# ---- only one's own queue --------------------------------------------------------------------------


def test_pages_of_a_study_are_404_for_non_members_and_for_others_items() -> None:
    study = _study()
    member, _ = _member(study)
    html = member.get(f"/work/{study.pk}/rate/").content.decode()
    mine = _assignment_id(html, study, "rate")

    outsider = Client()
    outsider.force_login(UserFactory.create())
    for url in (f"/work/{study.pk}/", f"/work/{study.pk}/rate/", f"/work/{study.pk}/rate/{mine}/"):
        assert outsider.get(url).status_code == 404, url

    other_member, _ = _member(study)
    assert other_member.get(f"/work/{study.pk}/rate/{mine}/").status_code == 404
    stolen = other_member.post(f"/work/{study.pk}/rate/{mine}/", {"q-appropriateness": "2"})
    assert stolen.status_code == 404
    assert other_member.post(f"/work/{study.pk}/rate/{mine}/skip/").status_code == 404
    assert Rating.objects.count() == 0
    assert Assignment.objects.get(pk=mine).status == AssignmentStatus.ACTIVE
    # A task the study does not have, and a kind that is no task at all.
    assert member.get(f"/work/{study.pk}/write/").status_code == 404
    assert member.get(f"/work/{study.pk}/check/").status_code == 404


# ---- rating ----------------------------------------------------------------------------------------


def test_a_rating_post_stores_the_rating_with_seconds_and_redirects_to_the_next_item() -> None:
    study = _study()
    client, annotator = _member(study)
    page = client.get(f"/work/{study.pk}/rate/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "0 of 6" in html
    assert 'data-autoshow="1"' in html  # instructions open before the first item
    first = _assignment_id(html, study, "rate")
    assert _reply_of(first).text in html

    shown_ago(first, 4.0)
    done = client.post(f"/work/{study.pk}/rate/{first}/", {"q-appropriateness": "2", "seconds": "3.25"})
    assert done.status_code == 302
    assert done["Location"] == f"/work/{study.pk}/rate/"
    rating = Rating.objects.get(annotator=annotator)
    assert (rating.response, rating.value, rating.client_seconds) == (_reply_of(first), 2, 3.25)
    assert 4.0 <= measured(rating.seconds_spent) < 30  # the server's own clock

    following = client.get(done["Location"]).content.decode()
    assert "1 of 6" in following
    assert _assignment_id(following, study, "rate") != first
    assert 'data-autoshow="1"' not in following


def test_a_missing_question_is_named_and_nothing_is_stored() -> None:
    study = _study(
        questions=[
            QuestionSpec("appropriateness", 0, 2, ("bad", "borderline", "good")),
            QuestionSpec("fluency", 1, 5, ("very poor", "poor", "fair", "good", "very good")),
        ]
    )
    client, annotator = _member(study)
    html = client.get(f"/work/{study.pk}/rate/").content.decode()
    assert "keys <kbd>0–2</kbd>" in html
    assert "keys <kbd>1–5</kbd>" in html
    assert re.search(r'<span class="key">0</span> <span class="point-text">bad</span>', html)
    item = _assignment_id(html, study, "rate")

    response = client.post(f"/work/{study.pk}/rate/{item}/", {"q-appropriateness": "1", "seconds": "2"})
    assert response.status_code == 400
    text = response.content.decode()
    assert "fluency: choose a score" in text
    assert re.search(r'name="q-appropriateness" value="1" data-key="1" checked', text)  # kept
    assert not Rating.objects.filter(annotator=annotator).exists()

    out_of_scale = client.post(f"/work/{study.pk}/rate/{item}/", {"q-appropriateness": "1", "q-fluency": "9"})
    assert out_of_scale.status_code == 400
    assert "outside the scale 1-5" in out_of_scale.content.decode()

    client.post(f"/work/{study.pk}/rate/{item}/", {"q-appropriateness": "1", "q-fluency": "4"})
    values = dict(
        Rating.objects.filter(annotator=annotator).values_list("question__name", "value").order_by("id")
    )
    assert values == {"appropriateness": 1, "fluency": 4}
    assert Rating.objects.filter(annotator=annotator, client_seconds__isnull=True).count() == 2  # no JS
    assert not Rating.objects.filter(annotator=annotator, seconds_spent__isnull=True).exists()  # the server's


def test_skip_passes_the_item_on_and_serves_another() -> None:
    study = _study()
    client, _ = _member(study)
    first = _assignment_id(client.get(f"/work/{study.pk}/rate/").content.decode(), study, "rate")
    skipped = client.post(f"/work/{study.pk}/rate/{first}/skip/")
    assert skipped.status_code == 302
    assert Assignment.objects.get(pk=first).status == AssignmentStatus.SKIPPED
    following = client.get(skipped["Location"]).content.decode()
    assert "Skipped" in following
    assert _assignment_id(following, study, "rate") != first
    assert client.get(f"/work/{study.pk}/rate/{first}/skip/").status_code == 405  # POST only


def test_back_reopens_the_last_answer_and_resubmitting_replaces_it() -> None:
    study = _study()
    client, annotator = _member(study)
    first = _assignment_id(client.get(f"/work/{study.pk}/rate/").content.decode(), study, "rate")
    shown_ago(first, 4.0)
    client.post(f"/work/{study.pk}/rate/{first}/", {"q-appropriateness": "0", "seconds": "4"})
    first_visit = measured(Rating.objects.get(annotator=annotator).seconds_spent)
    second = _assignment_id(client.get(f"/work/{study.pk}/rate/").content.decode(), study, "rate")

    back = client.get(f"/work/{study.pk}/rate/back/?before={second}")
    assert back.status_code == 302
    assert back["Location"] == f"/work/{study.pk}/rate/{first}/"
    html = client.get(back["Location"]).content.decode()
    assert "changing an earlier answer" in html
    assert re.search(r'name="q-appropriateness" value="0" data-key="0" checked', html)
    assert "skip-form" not in html  # an answered item cannot be skipped

    shown_ago(first, 1.5)  # the reopened item has been on screen for 1.5 s
    changed = client.post(f"/work/{study.pk}/rate/{first}/", {"q-appropriateness": "2", "seconds": "1.5"})
    assert changed["Location"] == f"/work/{study.pk}/rate/"
    rating = Rating.objects.get(annotator=annotator)  # replaced, not added
    assert (rating.value, rating.client_seconds) == (2, 5.5)  # the time of both visits
    assert first_visit + 1.5 <= measured(rating.seconds_spent) < first_visit + 30
    # Back where they were: the item they had been given before going back.
    assert _assignment_id(client.get(changed["Location"]).content.decode(), study, "rate") == second
    # Nothing before the first answer.
    nothing = client.get(f"/work/{study.pk}/rate/back/?before={first}")
    assert nothing["Location"] == f"/work/{study.pk}/rate/"


def test_the_rating_page_is_blind() -> None:
    study = _study(show_reference=True)
    context = DialogContext.objects.filter(study=study).first()
    assert context is not None
    Reference.objects.create(context=context, text="the original reply", origin=ReferenceOrigin.ORIGINAL)
    first_client, first_annotator = _member(study)
    item = _assignment_id(first_client.get(f"/work/{study.pk}/rate/").content.decode(), study, "rate")
    first_client.post(f"/work/{study.pk}/rate/{item}/", {"q-appropriateness": "2"})

    # A second rater gets the same reply (fewest ratings first is not guaranteed, so look at every item).
    second_client, _ = _member(study)
    pages = []
    for _ in range(6):
        page = second_client.get(f"/work/{study.pk}/rate/").content.decode()
        pages.append(page)
        current = _assignment_id(page, study, "rate")
        second_client.post(f"/work/{study.pk}/rate/{current}/", {"q-appropriateness": "1"})
    assert any(_reply_of(item).text in page for page in pages)
    for page in pages:
        for name in SYSTEM_NAMES:
            assert name not in page
        assert first_annotator.pseudonym not in page
        assert " checked" not in page  # nothing pre-selected: no one else's value shows through
    assert any("A reference reply, for comparison" in page and "the original reply" in page for page in pages)


def test_an_attention_check_failure_is_a_message_on_the_next_page() -> None:
    study = _study(contexts=2, check_interval=1)
    question = Question.objects.get(study=study)
    AttentionCheck.objects.create(
        study=study,
        context=DialogContext.objects.filter(study=study).earliest("id"),
        text="the moon is made of cheese",
        question=question,
        expected_min=0,
        expected_max=0,
        origin=AttentionCheck.Origin.DISTRACTOR,
    )
    work_items_sync(study=study)
    client, _ = _member(study)
    html = client.get(f"/work/{study.pk}/rate/").content.decode()
    assert "the moon is made of cheese" in html
    item = _assignment_id(html, study, "rate")
    answered = client.post(f"/work/{study.pk}/rate/{item}/", {"q-appropriateness": "2"}, follow=True)
    assert "attention check" in answered.content.decode()
    assert not Rating.objects.exists()  # a check answer is not a rating


def test_a_study_that_blocks_says_so_after_the_failed_check() -> None:
    study = _study(contexts=2, check_interval=1, check_action="block", check_failures_allowed=0)
    AttentionCheck.objects.create(
        study=study,
        context=DialogContext.objects.filter(study=study).earliest("id"),
        text="the moon is made of cheese",
        question=Question.objects.get(study=study),
        expected_min=0,
        expected_max=0,
        origin=AttentionCheck.Origin.DISTRACTOR,
    )
    work_items_sync(study=study)
    client, annotator = _member(study)
    item = _assignment_id(client.get(f"/work/{study.pk}/rate/").content.decode(), study, "rate")
    answered = client.post(f"/work/{study.pk}/rate/{item}/", {"q-appropriateness": "2"}, follow=True)
    page = answered.content.decode()
    assert "You missed too many attention checks" in page  # the submission's warning
    assert "reason-blocked" in page  # and no next item
    assert 'id="answer-form"' not in page
    annotator.refresh_from_db()
    assert annotator.blocked


def test_when_everything_is_rated_the_page_says_so() -> None:
    study = _study(contexts=1)
    client, _ = _member(study)
    for _ in range(2):
        item = _assignment_id(client.get(f"/work/{study.pk}/rate/").content.decode(), study, "rate")
        client.post(f"/work/{study.pk}/rate/{item}/", {"q-appropriateness": "1"})
    done = client.get(f"/work/{study.pk}/rate/")
    assert done.status_code == 200
    assert "nothing more for you to do" in done.content.decode()
    assert "2 of 2" in done.content.decode()


def test_the_annotator_home_links_each_task_with_progress() -> None:
    study = _study(references_wanted=2)
    client, _ = _member(study)
    home = client.get("/").content.decode()
    assert study.name in home
    assert f'href="/work/{study.pk}/rate/"' in home
    assert f'href="/work/{study.pk}/write/"' in home
    assert "Judge diversity" not in home
    assert "0 of 6" in home  # replies to rate
    assert "0 of 3" in home  # contexts to write for


# ---- writing references ----------------------------------------------------------------------------


def test_writing_validates_each_reply_and_moves_on_when_the_context_is_done() -> None:
    study = _study(contexts=2, rating_enabled=False, references_wanted=2)
    client, annotator = _member(study)
    html = client.get(f"/work/{study.pk}/write/").content.decode()
    assert "Reply 1 of 2 — 2 remaining" in html
    item = _assignment_id(html, study, "write")
    context = Assignment.objects.get(pk=item).item.context
    url = f"/work/{study.pk}/write/{item}/"

    short = client.post(url, {"text": " a ", "seconds": "3"})
    assert short.status_code == 400
    assert "at least 2 characters" in short.content.decode()

    shown_ago(item, 30)
    assert (
        client.post(url, {"text": "Sounds <b>great</b>!", "seconds": "6", "keystrokes": "20"}).status_code
        == 302
    )
    html = client.get(f"/work/{study.pk}/write/").content.decode()
    assert "Reply 2 of 2 — 1 remaining" in html
    assert "Sounds &lt;b&gt;great&lt;/b&gt;!" in html  # listed, escaped

    repeated = client.post(url, {"text": "sounds  <B>GREAT</B>", "seconds": "6"})
    assert repeated.status_code == 400
    assert "You already wrote this reply" in repeated.content.decode()
    assert "sounds  &lt;B&gt;GREAT&lt;/B&gt;" in repeated.content.decode()  # the text comes back to fix

    shown_ago(item, 30)
    last = client.post(
        url, {"text": "not today, sorry", "seconds": "7", "pasted": "1", "keystrokes": "16"}, follow=True
    )
    page = last.content.decode()
    assert "your replies to that conversation are saved" in page
    assert _assignment_id(page, study, "write") != item
    rows = list(
        Reference.objects.filter(
            context=context, author=annotator, origin=ReferenceOrigin.COLLECTED
        ).values_list("text", "client_seconds", "keystrokes", "flags")
    )
    assert rows == [("Sounds <b>great</b>!", 6.0, 20, []), ("not today, sorry", 7.0, 16, ["pasted"])]
    assert Assignment.objects.get(pk=item).status == AssignmentStatus.DONE
    # The finished context's page now leads on to the next one.
    assert client.get(url)["Location"] == f"/work/{study.pk}/write/"


def test_replies_written_too_fast_again_and_again_get_a_warning() -> None:
    study = _study(contexts=1, rating_enabled=False, references_wanted=3)
    client, _ = _member(study)
    item = _assignment_id(client.get(f"/work/{study.pk}/write/").content.decode(), study, "write")
    url = f"/work/{study.pk}/write/{item}/"
    first = client.post(
        url, {"text": "a fairly long reply written in no time", "seconds": "0.2"}, follow=True
    )
    assert "very quickly" not in first.content.decode()  # once is not "consistently"
    second = client.post(
        url, {"text": "another long reply, also far too quick", "seconds": "0.2"}, follow=True
    )
    assert "very quickly" in second.content.decode()
    assert all("too-fast" in flags for flags in Reference.objects.values_list("flags", flat=True))


# ---- diversity -------------------------------------------------------------------------------------


def test_diversity_marks_appropriate_replies_and_counts_meanings() -> None:
    study = _study(contexts=1, replies_per_system=3, rating_enabled=False, diversity_enabled=True)
    client, annotator = _member(study)
    html = client.get(f"/work/{study.pk}/diversity/").content.decode()
    item = _assignment_id(html, study, "diversity")
    group = Assignment.objects.get(pk=item).item
    replies = list(
        Response.objects.filter(context=group.context, system=group.system).order_by("sample_index")
    )
    for number, reply in enumerate(replies, start=1):
        assert f'data-key="{number}"' in html
        assert reply.text in html
    for name in SYSTEM_NAMES:
        assert name not in html

    url = f"/work/{study.pk}/diversity/{item}/"
    chosen = [str(replies[0].pk), str(replies[2].pk)]
    too_many = client.post(url, {"appropriate": chosen, "meanings": "3"})
    assert too_many.status_code == 400
    assert "the number of meanings is 1-2" in too_many.content.decode()
    missing = client.post(url, {"appropriate": chosen, "meanings": ""})
    assert missing.status_code == 400
    assert "meanings" in missing.content.decode()
    foreign = client.post(url, {"appropriate": ["abc"], "meanings": "1"})
    assert foreign.status_code == 400

    shown_ago(item, 12)
    assert client.post(url, {"appropriate": chosen, "meanings": "2", "seconds": "9"}).status_code == 302
    judgment = DiversityJudgment.objects.get(annotator=annotator)
    assert judgment.meanings == 2
    assert judgment.client_seconds == 9.0
    assert 12 <= measured(judgment.seconds_spent) < 40
    assert sorted(judgment.appropriate.values_list("pk", flat=True)) == sorted(int(pk) for pk in chosen)

    # Back to it: the earlier answer is shown ticked, and can be changed.
    back = client.get(f"/work/{study.pk}/diversity/back/", follow=True).content.decode()
    assert re.search(rf'value="{replies[0].pk}" data-key="1" checked', back)
    assert not re.search(rf'value="{replies[1].pk}" data-key="2" checked', back)
    client.post(url, {"meanings": "0"})
    judgment.refresh_from_db()
    assert (judgment.meanings, judgment.appropriate.count()) == (0, 0)

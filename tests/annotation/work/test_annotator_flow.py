"""An annotator's work in a real browser, keyboard only after logging in: join by invite, read the
instructions, rate five replies (going back once to change an answer), then write four references."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.models import (
    Annotator,
    DialogContext,
    DiversityJudgment,
    Rating,
    Reference,
    ReferenceOrigin,
    Response,
    Study,
    System,
)
from annotation.services.annotators import annotator_join
from annotation.services.joining import annotator_consent
from annotation.services.studies import study_create
from annotation.services.work_items import work_items_sync
from tests.browser_fixtures import ARTIFACTS
from tests.factories import (
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser]

PASSWORD = "pw-for-tests-123"  # tests.factories.UserFactory's
READING_MS = 250  # a pause before each answer, so that every item takes measurable time


def _study(*, contexts: int, **fields: Any) -> Study:
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name=f"browser work {owner.pk}", ratings_per_item=1)
    for name, value in {"check_interval": 0, **fields}.items():
        setattr(study, name, value)
    study.save()
    bots = [SystemFactory.create(study=study, name=name) for name in ("HiddenBotOne", "HiddenBotTwo")]
    for index in range(contexts):
        context = DialogContextFactory.create(
            study=study,
            turns=[
                {"speaker": "A", "text": f"shall we meet on day {index} ?"},
                {"speaker": "B", "text": f"what time on day {index} ?"},
            ],
        )
        for number, bot in enumerate(bots):
            ResponseFactory.create(context=context, system=bot, text=f"answer {number} for day {index}")
    work_items_sync(study=study)
    return study


def _log_in(page: Any, username: str) -> None:
    """On the login page (perhaps reached through a redirect), fill the form and press Enter."""
    page.wait_for_selector("input[name=username]")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def _answer(page: Any, key: str) -> str:
    """Rate the reply on screen with ``key`` and Enter; returns the reply's text."""
    reply = page.locator("#reply").inner_text()
    page.keyboard.press(key)
    page.wait_for_timeout(READING_MS)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    return reply


def test_annotator_joins_and_rates_five_items_with_the_keyboard(page, live_server, transactional_db):
    study = _study(contexts=4, signup_open=False)  # the link sends people without a session to log in
    user = UserFactory.create(username="keyboard-rater")
    invite = f"{live_server.url}/work/join/{study.invite_token}/"

    page.goto(invite)  # not logged in: the login page, which comes back here
    _log_in(page, user.username)
    page.wait_for_selector(f"h1:has-text('{study.name}')")
    with page.expect_navigation():
        page.keyboard.press("Enter")  # the Join button has the focus
    annotator = Annotator.objects.get(study=study, user=user)
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'admission-link'")
    with page.expect_navigation():
        page.keyboard.press("Enter")  # "Read and accept" (the consent) has the focus
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'agree'")
    page.keyboard.press("Space")  # tick "I agree"
    page.keyboard.press("Tab")
    with page.expect_navigation():
        page.keyboard.press("Enter")  # Continue: back to the study page
    page.wait_for_selector("a:has-text('Rate replies')")
    with page.expect_navigation():
        page.keyboard.press("Enter")  # the first task's link has the focus

    # The instructions come first, with worked examples for this study's 0-2 scale.
    dialog = page.locator("#instructions")
    dialog.wait_for(state="visible")
    assert "A good reply" in dialog.inner_text()
    assert "2 (good)" in dialog.inner_text()
    assert "0 (bad)" in dialog.inner_text()
    page.wait_for_timeout(1500)  # reading them does not count as time on the first item
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert page.locator("#progress-text").inner_text() == "0 of 8"

    expected: dict[str, int] = {}
    for key in ("2", "0", "1"):
        expected[_answer(page, key)] = int(key)
    assert page.locator("#progress-text").inner_text() == "3 of 8"

    # Back to the third answer: shown pre-selected, changed to 2, then on to where we were.
    fourth = page.locator("#reply").inner_text()
    with page.expect_navigation():
        page.keyboard.press("b")
    third = page.locator("#reply").inner_text()
    assert expected[third] == 1
    assert page.locator("#revisiting").is_visible()
    assert page.locator('input[name="q-appropriateness"][value="1"]').is_checked()
    expected[_answer(page, "2")] = 2
    assert page.locator("#reply").inner_text() == fourth

    # "?" reopens the instructions; Enter with no score picked names the question and stays.
    page.keyboard.press("?")
    dialog.wait_for(state="visible")
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    page.keyboard.press("Enter")
    assert "Choose a score for “appropriateness”" in page.locator("#form-message").inner_text()
    assert page.locator("#reply").inner_text() == fourth

    expected[_answer(page, "1")] = 1
    expected[_answer(page, "0")] = 0
    assert page.locator("#progress-text").inner_text() == "5 of 8"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "annotator-rating.png"), full_page=True)

    ratings = list(Rating.objects.filter(annotator=annotator).select_related("response").order_by("id"))
    assert {rating.response.text: rating.value for rating in ratings} == expected
    assert len(ratings) == 5
    assert all(rating.seconds_spent is not None and rating.seconds_spent > 0 for rating in ratings)
    first = ratings[0]
    assert first.client_seconds is not None
    assert first.client_seconds < 1.2  # the page left out the 1.5 s with the instructions open
    assert first.seconds_spent is not None
    assert first.seconds_spent >= first.client_seconds + 1.4  # the server counts from the hand-out
    for name in ("HiddenBotOne", "HiddenBotTwo"):
        assert name not in page.content()


def test_annotator_writes_four_references_with_the_keyboard(page, live_server, transactional_db):
    study = _study(contexts=2, rating_enabled=False, references_wanted=4)
    user = UserFactory.create(username="keyboard-writer")
    annotator_consent(annotator=annotator_join(token=study.invite_token, user=user))
    page.goto(f"{live_server.url}/work/{study.pk}/write/")
    _log_in(page, user.username)

    dialog = page.locator("#instructions")
    dialog.wait_for(state="visible")
    assert "Good replies" in dialog.inner_text()
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'reply-text'")
    counter = page.locator("#counter")
    assert counter.inner_text() == "Reply 1 of 4 — 4 remaining"
    context_text = page.locator(".turn.query").inner_text()
    context = next(c for c in DialogContext.objects.filter(study=study) if c.query in context_text)

    def write(text: str) -> None:
        page.keyboard.type(text)
        with page.expect_navigation():
            page.keyboard.press("Enter")

    replies = ["Ten o'clock works for me.", "How about after lunch?"]
    write(replies[0])
    assert counter.inner_text() == "Reply 2 of 4 — 3 remaining"
    assert page.locator("#written").inner_text() == replies[0]

    # Pasting is blocked, with a note; nothing arrives in the box.
    page.evaluate(
        """() => {
            const box = document.getElementById("reply-text");
            const data = new DataTransfer();
            data.setData("text/plain", "pasted words");
            box.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
        }"""
    )
    assert page.locator("#paste-note").is_visible()
    assert "pasting is turned off" in page.locator("#paste-note").inner_text()
    assert page.locator("#reply-text").input_value() == ""

    write(replies[1])
    # Typed by a machine, so far too fast twice in a row: the server's warning shows.
    assert "very quickly" in page.locator(".messages").inner_text()

    # The first reply again, differently cased and punctuated: refused here, nothing sent.
    page.keyboard.type("ten o clock WORKS for me")
    page.keyboard.press("Enter")
    assert "You already wrote this reply" in page.locator("#form-message").inner_text()
    assert counter.inner_text() == "Reply 3 of 4 — 2 remaining"
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")

    replies += ["I can't, I'm busy all day.", "Any time after six!\nI finish work late."]
    for reply in replies[2:]:
        if "\n" in reply:
            first_line, second_line = reply.split("\n")
            page.keyboard.type(first_line)
            page.keyboard.press("Shift+Enter")  # a new line, not a submit
            write(second_line)
        else:
            write(reply)

    # Four written: the next context, and a thank-you.
    assert "saved" in page.locator(".messages").inner_text()
    assert counter.inner_text() == "Reply 1 of 4 — 4 remaining"
    assert context.query not in page.locator(".turn.query").inner_text()
    collected = list(
        Reference.objects.filter(context=context, origin=ReferenceOrigin.COLLECTED).order_by("id")
    )
    assert [reference.text for reference in collected] == replies
    assert all(reference.author is not None for reference in collected)
    assert all("pasted" not in reference.flags for reference in collected)
    assert all(reference.seconds_spent is not None and reference.seconds_spent > 0 for reference in collected)

    # Text that arrives without key presses (inserted, not typed) is flagged as pasted.
    page.keyboard.insert_text("sure, see you then")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    flagged = Reference.objects.exclude(context=context).get(origin=ReferenceOrigin.COLLECTED)
    assert "pasted" in flagged.flags


def test_annotator_judges_diversity_with_the_keyboard(page, live_server, transactional_db):
    study = _study(contexts=1, rating_enabled=False, diversity_enabled=True)
    context = DialogContext.objects.get(study=study)
    system = System.objects.filter(study=study).order_by("name").first()
    for sample in range(1, 4):
        ResponseFactory.create(context=context, system=system, sample_index=sample, text=f"variant {sample}")
    work_items_sync(study=study)
    user = UserFactory.create(username="keyboard-judge")
    annotator = annotator_consent(annotator=annotator_join(token=study.invite_token, user=user))
    page.goto(f"{live_server.url}/work/{study.pk}/diversity/")
    _log_in(page, user.username)
    page.locator("#instructions").wait_for(state="visible")
    page.keyboard.press("Escape")

    replies = list(Response.objects.filter(context=context, system=system).order_by("sample_index", "id"))
    for key in ("1", "3", "4", "2", "2"):  # 2 on and off again
        page.keyboard.press(key)
    page.keyboard.press("Enter")  # no number of meanings yet: named, nothing sent
    assert "the number of meanings is 1 to 3" in page.locator("#form-message").inner_text()
    page.keyboard.press("2")  # the message put the focus on the number box
    page.wait_for_timeout(READING_MS)
    with page.expect_navigation():
        page.keyboard.press("Enter")

    judgment = DiversityJudgment.objects.get(annotator=annotator)
    assert judgment.meanings == 2
    assert sorted(judgment.appropriate.values_list("pk", flat=True)) == sorted(
        replies[index].pk for index in (0, 2, 3)
    )
    assert judgment.seconds_spent is not None
    assert judgment.seconds_spent > 0
    assert "nothing more for you to do" in page.locator("#no-work").inner_text()

"""A new volunteer in headless Chromium: opens the invite link, signs up, accepts the consent, does
a two-item qualification round with feedback after each answer, passes and reaches the first real item."""

from __future__ import annotations

import pytest

from annotation.models import Annotator, Rating, TrainingAnswer
from tests.annotation.joining_builders import EXPLANATION, training_items, training_study
from tests.browser_fixtures import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-enough-pass-42"


def test_a_new_volunteer_signs_up_consents_qualifies_and_reaches_the_first_item(page, live_server) -> None:
    study = training_study(items=2, threshold=0.5, consent_text="Your answers are stored under a pseudonym.")
    first, second = training_items(study)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    page.goto(f"{live_server.url}/work/join/{study.invite_token}/")
    page.fill("input[name=username]", "fresh-volunteer")
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    with page.expect_navigation():
        page.click("#signup-submit")

    # The consent: the study's text, and "I agree" before anything else.
    assert "Your answers are stored under a pseudonym." in page.locator("#consent-text").inner_text()
    page.check("#agree")
    with page.expect_navigation():
        page.click("#consent-submit")

    # Practice item 1, answered wrong: the feedback says so, with the right range and the explanation.
    assert page.locator("#reply").inner_text() == first.response.text
    page.locator("label.point", has_text="0").click()
    with page.expect_navigation():
        page.click("#submit-answer")
    assert page.locator("#feedback-verdict").inner_text() == "Not quite."
    assert page.locator("#feedback-gold").inner_text() == "2"
    assert EXPLANATION in page.locator("#feedback-explanation").inner_text()
    with page.expect_navigation():
        page.click("#training-next")

    # Practice item 2, answered right: 1 of 2 meets the study's 50%.
    assert page.locator("#reply").inner_text() == second.response.text
    page.locator("label.point", has_text="2").click()
    with page.expect_navigation():
        page.click("#submit-answer")
    assert page.locator("#feedback-verdict").inner_text() == "Right!"
    assert "You passed" in page.locator("#training-result").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "join-qualified.png"), full_page=True)

    with page.expect_navigation():
        page.locator("#training-result a", has_text="Rate replies").click()
    page.locator("#reply").wait_for()
    assert page.url.endswith(f"/work/{study.pk}/rate/")
    assert page.locator("#answer-form").is_visible()

    annotator = Annotator.objects.get(study=study, user__username="fresh-volunteer")
    assert annotator.consented_at is not None
    assert annotator.qualification == "passed"
    assert TrainingAnswer.objects.filter(annotator=annotator).count() == 2
    assert not Rating.objects.filter(annotator=annotator).exists()
    assert errors == []

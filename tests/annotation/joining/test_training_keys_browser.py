"""The qualification round works from the keyboard like the rating page: number keys pick the
score, Enter submits, and on the feedback page Enter goes on to the next practice item; ``?`` opens the
instructions on both."""

from __future__ import annotations

import pytest

from annotation.models import TrainingAnswer
from tests.annotation.joining_builders import training_items, training_study, volunteer
from tests.browser_fixtures import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_qualification_round_is_answered_with_number_keys_and_enter(page, live_server) -> None:
    study = training_study(items=2, threshold=0.5, instructions="Rate how appropriate the reply is.")
    first, second = training_items(study)
    annotator = volunteer(study)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, annotator.user)

    page.goto(f"{live_server.url}/work/{study.pk}/training/")
    assert page.locator("#reply").inner_text() == first.response.text
    page.keyboard.press("?")
    assert page.locator("#instructions").is_visible()
    assert "Rate how appropriate" in page.locator("#instructions").inner_text()
    page.keyboard.press("Escape")
    page.keyboard.press("2")
    assert page.locator('input[name="value"]:checked').get_attribute("value") == "2"
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator("#feedback-verdict").inner_text() == "Right!"

    page.keyboard.press("?")  # the feedback page has the instructions too
    assert page.locator("#instructions").is_visible()
    page.keyboard.press("Escape")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator("#reply").inner_text() == second.response.text
    page.keyboard.press("0")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator("#feedback-verdict").inner_text() == "Not quite."
    answers = TrainingAnswer.objects.filter(annotator=annotator)
    assert sorted(answers.values_list("value", flat=True)) == [0, 2]
    assert errors == []

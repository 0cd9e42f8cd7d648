"""What the pages say: the reference-writing task's "How to write replies" dialog is about
writing, not the study's rating instructions; the invite card tells volunteers they sign up (or log in)."""

from __future__ import annotations

import pytest

from tests.annotation.joining_builders import volunteer
from tests.annotation.work_builders import work_study
from tests.browser_fixtures import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RATING_INSTRUCTIONS = "Rate how appropriate the reply is to the conversation."


def test_the_writing_dialog_does_not_open_with_the_rating_instructions(page, live_server) -> None:
    study = work_study(contexts=1, references_wanted=2, instructions=RATING_INSTRUCTIONS)
    annotator = volunteer(study)
    log_in(page, live_server, annotator.user)
    page.goto(f"{live_server.url}/work/{study.pk}/write/")
    dialog = page.locator("#instructions")
    dialog.wait_for()  # opens before the first item
    assert dialog.locator("h2").first.inner_text() == "How to write replies"
    assert RATING_INSTRUCTIONS not in dialog.inner_text()
    page.goto(f"{live_server.url}/work/{study.pk}/rate/")  # where they belong
    assert RATING_INSTRUCTIONS in page.locator("#instructions").inner_text()


def test_the_invite_card_says_sign_up(page, live_server) -> None:
    study = work_study(contexts=1)
    log_in(page, live_server, study.owner)
    page.goto(f"{live_server.url}/studies/{study.pk}/annotation/")
    text = page.locator("#invite").inner_text()
    assert "sign up" in text
    assert "sign in" not in text

"""Keyboard rating on the 0-10 and 0-100 scales, in headless Chromium: a 0-10 scale whose 10 is typed as
1 then 0, and a 0-100 slider moved with End, the arrow keys and typed digits."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.models import Rating
from annotation.scales import QuestionSpec
from annotation.services.annotators import annotator_join
from annotation.services.joining import annotator_consent
from annotation.services.studies import study_create
from annotation.services.work_items import work_items_sync
from tests.browser_fixtures import log_in
from tests.factories import (
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser]


def _answer_with_enter(page: Any) -> None:
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_ten_is_typed_digit_by_digit_and_a_slider_moves_by_keys(page, live_server, transactional_db) -> None:
    study = study_create(
        owner=ResearcherFactory.create(),
        name="keys",
        ratings_per_item=1,
        questions=[
            QuestionSpec("overall", 0, 10),
            QuestionSpec("engaging", 0, 100, ("dull", "gripping"), kind="slider"),
        ],
    )
    study.check_interval = 0
    study.save()
    bot = SystemFactory.create(study=study, name="HiddenBot")
    for index in range(2):
        context = DialogContextFactory.create(
            study=study, turns=[{"speaker": "A", "text": f"hello {index} ?"}]
        )
        ResponseFactory.create(context=context, system=bot, text=f"answer {index}")
    work_items_sync(study=study)
    user = UserFactory.create()
    annotator = annotator_consent(annotator=annotator_join(token=study.invite_token, user=user))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, user)

    page.goto(f"{live_server.url}/work/{study.pk}/rate/")
    page.keyboard.press("Escape")  # the instructions open before the first item
    page.keyboard.press("1")
    page.keyboard.press("0")
    page.wait_for_timeout(900)  # "1" could have been the answer: the page waits for a second digit
    assert page.locator('input[name="q-overall"]:checked').get_attribute("value") == "10"
    assert page.locator("fieldset.slider-question").get_attribute("aria-current") == "true"
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    assert page.locator('input[name="q-engaging"]').input_value() == "99"
    assert page.locator("input.slider-range").input_value() == "99"
    _answer_with_enter(page)

    page.keyboard.press("7")  # no point starts with 7 and goes on: picked at once
    assert page.locator('input[name="q-overall"]:checked').get_attribute("value") == "7"
    page.keyboard.press("4")
    page.keyboard.press("2")
    assert page.locator('input[name="q-engaging"]').input_value() == "42"
    _answer_with_enter(page)
    assert "nothing more for you to do" in page.content()

    stored = sorted(
        (rating.response.text, rating.question.name, rating.value)
        for rating in Rating.objects.filter(annotator=annotator).select_related("response", "question")
    )
    assert stored == [
        ("answer 0", "engaging", 99),
        ("answer 0", "overall", 10),
        ("answer 1", "engaging", 42),
        ("answer 1", "overall", 7),
    ] or stored == [
        ("answer 0", "engaging", 42),
        ("answer 0", "overall", 7),
        ("answer 1", "engaging", 99),
        ("answer 1", "overall", 10),
    ]  # the order of items is the annotator's own shuffle
    assert errors == []

"""The comment / flag box on the pairwise page in headless Chromium: a volunteer picks a reply, presses f,
flags the pair and leaves a comment while typing the page's own keys (t, 1, 2, s, b, Backspace, Enter) into
the box, and the pick, the item and the page stay as they were; then the researcher's item browser, flagged
replies only, shows the flag and the comment on both replies of the pair."""

from __future__ import annotations

import pytest
from django.utils import timezone

from annotation.models import Annotator, Assignment, ItemNote, PairwiseJudgment, WorkItem
from tests.annotation.work_builders import work_study
from tests.browser_fixtures import ARTIFACTS, log_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_volunteer_flags_and_comments_on_a_pair_and_the_researcher_sees_both(page, live_server) -> None:
    study = work_study(contexts=2, systems=2, k=1, rating_enabled=False, pairwise_enabled=True)
    volunteer = UserFactory.create()
    annotator = Annotator.objects.create(
        study=study, user=volunteer, pseudonym="volunteer", consented_at=timezone.now()
    )
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    log_in(page, live_server, volunteer, replacing=True)
    page.goto(f"{live_server.url}/work/{study.pk}/pair/")
    page.wait_for_selector("#instructions[open]")  # the first item opens the instructions
    page.keyboard.press("Escape")
    page.wait_for_selector("#instructions", state="hidden")
    item_url = page.url
    left_text = page.locator('[data-reply="left"]').inner_text()
    page.keyboard.press("ArrowRight")  # Reply B, not submitted yet
    assert page.locator('input[name="choice"][value="right"]').is_checked()

    # f opens the box; the pair page's keys typed there are text, not a tie, a skip or "back".
    page.keyboard.press("f")
    page.wait_for_selector("#note-reason:focus")
    page.select_option("#note-reason", "broken")
    page.click("#note-text")
    page.keyboard.type("t 1 2 s b")
    page.keyboard.press("Backspace")
    page.keyboard.press("Enter")
    page.keyboard.type("A is cut off")
    assert page.locator("#note-text").input_value() == "t 1 2 s \nA is cut off"
    assert page.locator('input[name="choice"][value="right"]').is_checked()  # still Reply B
    page.click("#note-flag")
    page.wait_for_selector("#note-status.ok")
    assert "flag was recorded" in page.locator("#note-status").inner_text()

    # A comment only, sent the same way.
    page.click("#note-text")
    page.keyboard.type("hard to choose, 0 or t?")
    page.click("#note-comment")
    page.wait_for_function(
        "() => document.querySelector('#note-status').textContent.includes('comment was recorded')"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "pairwise-flag.png"), full_page=True)

    assert page.url == item_url  # never left the pair
    assert page.locator('[data-reply="left"]').inner_text() == left_text
    assert page.locator('input[name="choice"][value="right"]').is_checked()
    assert not PairwiseJudgment.objects.exists()
    assignment = Assignment.objects.get(annotator=annotator)
    assert assignment.status == "active"
    pair = (assignment.item.response_id, assignment.item.response_b_id)
    notes = list(
        ItemNote.objects.order_by("id").values_list("kind", "reason", "text", "response_id", "response_b_id")
    )
    assert notes == [
        ("flag", "broken", "t 1 2 s \nA is cut off", *pair),
        ("comment", "", "hard to choose, 0 or t?", *pair),
    ]

    # The box gives the keys back: Enter now submits the pick made before the notes.
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#progress-text') && document.querySelector('#progress-text').textContent.startsWith('1 of')"
    )
    assert PairwiseJudgment.objects.get(annotator=annotator).shown_first_id is not None
    assert errors == []

    # The researcher: flagged replies only; both replies of the flagged pair, each with both notes.
    item = WorkItem.objects.get(pk=assignment.item_id)
    log_in(page, live_server, study.owner, replacing=True)
    page.goto(f"{live_server.url}/studies/{study.pk}/items/")
    assert page.locator("tr.item-row").count() == 4  # two contexts, two replies each
    page.check("#id_flagged")
    with page.expect_navigation():
        page.click("#apply-filters")
    rows = page.locator("tr.item-row")
    assert rows.count() == 2
    shown = {int(rows.nth(index).get_attribute("data-response") or 0) for index in range(2)}
    assert shown == {item.response_id, item.response_b_id}
    for index in range(2):
        notes_cell = rows.nth(index).locator("td.notes-cell").inner_text()
        assert "⚑ broken or unreadable" in notes_cell
        assert "A is cut off" in notes_cell
        assert "hard to choose, 0 or t?" in notes_cell
        assert "(on the pair with bot-" in notes_cell  # the other reply's system
        assert "(on the conversation)" not in notes_cell
        assert "volunteer" in notes_cell
    page.screenshot(path=str(ARTIFACTS / "pairwise-flag-researcher.png"), full_page=True)

"""Flag to adjudication in a real browser: an annotator flags the reply on screen with the f key (the
digits typed in the comment rate nothing), then the researcher opens the item browser, shows the flagged
replies only, excludes that reply and sees it marked excluded."""

from __future__ import annotations

import pytest
from django.utils import timezone

from annotation.models import Adjudication, Annotator, Assignment, ItemNote, Rating
from annotation.services.studies import study_create
from annotation.services.work_items import work_items_sync
from tests.browser_fixtures import ARTIFACTS, log_in
from tests.factories import (
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser]


def test_an_annotator_flags_with_f_and_the_researcher_excludes_the_flagged_reply(
    page, live_server, transactional_db
):
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="flag and exclude", ratings_per_item=2)
    study.check_interval = 0
    study.save()
    bot = SystemFactory.create(study=study, name="HiddenBot")
    for index in range(3):
        context = DialogContextFactory.create(
            study=study, turns=[{"speaker": "A", "text": f"where is the station {index} ?"}]
        )
        ResponseFactory.create(context=context, system=bot, text=f"reply number {index}")
    work_items_sync(study=study)
    volunteer = UserFactory.create()
    Annotator.objects.create(study=study, user=volunteer, pseudonym="volunteer", consented_at=timezone.now())

    # The annotator: f opens the flag form on the item shown; the note goes without leaving the item.
    log_in(page, live_server, volunteer, replacing=True)
    page.goto(f"{live_server.url}/work/{study.pk}/rate/")
    page.keyboard.press("Escape")  # the instructions open on the first item
    page.wait_for_selector("#instructions", state="hidden")
    flagged_text = page.locator("#reply").inner_text()
    page.keyboard.press("f")
    page.wait_for_selector("#note-reason:focus")
    page.select_option("#note-reason", "offensive")
    page.click("#note-text")
    page.keyboard.type("insults in line 2")
    page.click("#note-flag")
    page.wait_for_selector("#note-status.ok")
    assert "recorded" in page.locator("#note-status").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "annotator-flag.png"), full_page=True)
    assert page.locator('input[name="q-appropriateness"]:checked').count() == 0  # "2" was text, not a score
    assert page.locator("#reply").inner_text() == flagged_text  # still on the same item
    note = ItemNote.objects.get()
    assert (note.reason, note.text) == ("offensive", "insults in line 2")
    assert not Rating.objects.exists()
    assert Assignment.objects.get().status == "active"

    # The researcher: flagged replies only, then exclude the one there.
    log_in(page, live_server, owner, replacing=True)
    page.goto(f"{live_server.url}/studies/{study.pk}/items/")
    assert page.locator("tr.item-row").count() == 3
    page.check("#id_flagged")
    with page.expect_navigation():
        page.click("#apply-filters")
    rows = page.locator("tr.item-row")
    assert rows.count() == 1
    row = rows.first
    assert flagged_text in row.inner_text()
    assert "offensive" in row.inner_text()
    assert "insults in line 2" in row.inner_text()
    with page.expect_navigation():
        row.get_by_role("button", name="Exclude").click()

    assert "flagged=on" in page.url  # back to the same filtered list
    row = page.locator("tr.item-row").first
    assert row.get_attribute("data-excluded") == "1"
    assert "excluded" in (row.get_attribute("class") or "")
    assert row.locator(".excluded-tag").inner_text() == "excluded"
    assert row.get_by_role("button", name="Include again").is_visible()
    page.screenshot(path=str(ARTIFACTS / "item-browser.png"), full_page=True)
    assert Adjudication.objects.get(response=note.response).excluded

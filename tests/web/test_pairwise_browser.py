"""Pairwise comparison in headless Chromium: a volunteer compares two pairs of replies with the keyboard
only (→ then t, Enter each time), then the researcher opens the report and finds the win-rate table."""

from __future__ import annotations

import pytest
from django.utils import timezone

from annotation.models import Annotator, Assignment, PairwiseJudgment, Response
from annotation.services.annotators import annotator_join
from annotation.services.studies import study_create
from annotation.services.work_items import work_items_sync
from tests.browser_fixtures import ARTIFACTS, log_in
from tests.factories import DialogContextFactory, ResponseFactory, SystemFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_volunteer_compares_by_keyboard_and_the_report_shows_win_rates(
    page, live_server, researcher, chromium_browser
) -> None:
    study = study_create(owner=researcher, name="pairwise browser", ratings_per_item=1)
    study.pairwise_enabled = True
    study.check_interval = 0
    study.save()
    systems = [SystemFactory.create(study=study, name=name) for name in ("HiddenBotOne", "HiddenBotTwo")]
    for index in range(2):
        context = DialogContextFactory.create(
            study=study, turns=[{"speaker": "A", "text": f"what is for dinner on day {index} ?"}]
        )
        for number, system in enumerate(systems):
            ResponseFactory.create(context=context, system=system, text=f"answer {number} for day {index}")
    work_items_sync(study=study)
    volunteer = UserFactory.create(username="volunteer")
    annotator = annotator_join(token=study.invite_token, user=volunteer)
    Annotator.objects.filter(pk=annotator.pk).update(consented_at=timezone.now())  # joined earlier
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, volunteer)

    page.goto(f"{live_server.url}/work/{study.pk}/pair/")
    page.wait_for_selector("#instructions[open]")  # the first item opens the instructions
    page.keyboard.press("Escape")
    assert page.locator("#pair-prompt").text_content() == study.pairwise_prompt
    labels = page.locator(".pair-label").all_text_contents()
    assert labels == ["Reply A", "Reply B"]
    assert "HiddenBot" not in (page.locator("main").text_content() or "")
    right_text = page.locator('[data-reply="right"]').text_content()
    page.keyboard.press("ArrowRight")
    assert page.locator('input[name="choice"][value="right"]').is_checked()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "pairwise-item.png"), full_page=True)
    first_url = page.url
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#progress-text') && document.querySelector('#progress-text').textContent.startsWith('1 of')"
    )
    assert page.url == first_url  # post/redirect/get back to the task's address, with the next pair
    page.keyboard.press("t")
    assert page.locator('input[name="choice"][value="tie"]').is_checked()
    page.keyboard.press("Enter")
    page.wait_for_selector("#no-work")

    judgments = list(PairwiseJudgment.objects.filter(annotator=annotator).order_by("id"))
    assert len(judgments) == 2
    first, second = judgments
    winner = first.response_a if first.choice == "a" else first.response_b
    assert first.choice in ("a", "b")
    assert winner.text == right_text
    assert first.shown_first_id != winner.pk  # the reply on the right won
    assert second.choice == "tie"
    assert Assignment.objects.filter(annotator=annotator, status="done").count() == 2
    assert errors == []

    # The researcher's report: a Pairwise tab with each system's win rate.
    report = chromium_browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    report.set_default_timeout(20_000)
    log_in(report, live_server, researcher)
    report.goto(f"{live_server.url}/reports/{study.pk}/?resamples=0")
    report.locator('#report-tabs a[data-tab="pairwise"]').click()
    table = report.locator("#pairwise-table")
    table.wait_for()
    rows = {
        (report.locator(f"#pairwise-table tr[data-system='{name}'] td.system").text_content() or ""): (
            report.locator(f"#pairwise-table tr[data-system='{name}'] td.win-rate").text_content() or ""
        )
        for name in ("HiddenBotOne", "HiddenBotTwo")
    }
    winner_system = Response.objects.get(pk=winner.pk).system.name
    loser_system = next(name for name in rows if name != winner_system)
    assert rows[winner_system].startswith("0.750")  # one win and one tie of two
    assert rows[loser_system].startswith("0.250")
    report.wait_for_function(
        "() => document.querySelector('div.plot[data-figure=\"pairwise-win-rates\"] .main-svg') !== null"
    )
    report.screenshot(path=str(ARTIFACTS / "pairwise-report.png"), full_page=True)
    report.context.close()

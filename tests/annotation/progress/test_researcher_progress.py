"""The researcher watches annotation progress in headless Chromium: two annotators have rated through the
real engine (next_assignment + rating_submit); the page shows them, their counts and the progress bar,
and the researcher excludes one of them from reports with the page's own control."""

from __future__ import annotations

import pytest

from annotation.models import Annotator
from annotation.services.assignment import next_assignment
from annotation.services.studies import study_create
from annotation.services.submissions import rating_submit
from annotation.services.work_items import work_items_sync
from tests.browser_fixtures import ARTIFACTS
from tests.factories import (
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _rate(annotator: Annotator, items: int) -> None:
    for index in range(items):
        handout = next_assignment(annotator=annotator)
        rating_submit(
            annotator=annotator,
            assignment_id=handout.assignment.pk,
            values={"appropriateness": index % 3},
            seconds=4.0,
        )


def test_the_researcher_sees_who_rated_what(live_server, page) -> None:
    owner = ResearcherFactory.create(username="prof")
    study = study_create(owner=owner, name="Progress in the browser", ratings_per_item=2)
    study.check_interval = 0
    study.save()
    bot = SystemFactory.create(study=study, name="bot")
    for index in range(5):
        context = DialogContextFactory.create(
            study=study, turns=[{"speaker": "A", "text": f"question {index} ?"}]
        )
        ResponseFactory.create(context=context, system=bot, text=f"answer {index}")
    work_items_sync(study=study)
    first = Annotator.objects.create(study=study, user=UserFactory.create(), pseudonym="annotator-001")
    second = Annotator.objects.create(study=study, user=UserFactory.create(), pseudonym="annotator-002")
    _rate(first, 5)
    _rate(second, 2)

    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "prof")
    page.fill("input[name=password]", "pw-for-tests-123")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/studies/")
    page.goto(f"{live_server.url}/studies/{study.pk}/")
    page.click("#annotation-link")
    page.wait_for_selector("h1:has-text('Annotation of Progress in the browser')")

    # 7 ratings of the 5 replies x k=2 wanted.
    assert page.locator("#progress-rate .progress-text").inner_text() == "7 of 10 (70%)"
    bar = page.locator("#progress-rate progress")
    assert (bar.get_attribute("value"), bar.get_attribute("max")) == ("7", "10")
    rows = page.locator("#annotator-table tr.annotator")
    assert rows.count() == 2
    assert rows.nth(0).locator(".pseudonym").inner_text().strip() == "annotator-001"
    assert rows.nth(0).locator(".rated").inner_text() == "5"
    assert rows.nth(1).locator(".pseudonym").inner_text().strip() == "annotator-002"
    assert rows.nth(1).locator(".rated").inner_text() == "2"
    assert page.locator("#item-table tr.item").count() == 5
    assert page.locator("#item-table tr.item").first.locator(".ratings").inner_text().startswith("1 of 2")
    page.screenshot(path=str(ARTIFACTS / "researcher-progress.png"), full_page=True)

    # The invite link is absolute, and the copy button answers (headless Chromium may refuse the
    # clipboard: then the link is selected and the page says how to copy it).
    assert page.locator("#invite-url").input_value() == f"{live_server.url}/work/join/{study.invite_token}/"
    page.click("#invite-copy")
    page.wait_for_function("() => document.getElementById('invite-copied').textContent !== ''")

    # The researcher's override: annotator-002 no longer counts in reports.
    second_row = page.locator("#annotator-table tr.annotator[data-annotator='annotator-002']")
    second_row.locator("select[name=report_inclusion]").select_option("exclude")
    second_row.locator(".inclusion button").click()
    page.wait_for_selector(".messages li.success")
    assert (
        page.locator("#annotator-table tr.annotator[data-annotator='annotator-002'] .included").inner_text()
        == "no"
    )
    second.refresh_from_db()
    assert second.report_inclusion == "exclude"
    assert errors == []

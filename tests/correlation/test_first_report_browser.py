"""The first report of a study is never computed while its page loads (a 24-reply study's first
report kept the tab blank for 18 s): the page comes back at once with a progress bar, asks for the report
itself, and swaps it in."""

from __future__ import annotations

import pytest

from tests.browser_fixtures import log_in
from tests.correlation.builders import Item, add_items, signature
from tests.factories import QuestionFactory, StudyFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_first_report_shows_its_progress_then_the_report(page, live_server, researcher) -> None:
    study = StudyFactory.create(owner=researcher)
    question = QuestionFactory.create(study=study, name="appropriateness", scale_min=0, scale_max=2)
    bleu = signature("bleu-2")
    add_items(
        study=study,
        question=question,
        items=[
            Item(f"sys{i % 3}", ratings=[i % 3, (i + 1) % 3], scores={bleu.text: i / 10}) for i in range(9)
        ],
    )
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, researcher)
    seen: list[str] = []
    page.on("response", lambda response: seen.append(response.url) if "/reports/" in response.url else None)

    page.goto(f"{live_server.url}/reports/{study.pk}/", wait_until="domcontentloaded")
    assert "Computing the report" in page.locator("#report-updating").inner_text()  # as served
    assert page.locator("#report-progress").count() == 1
    page.locator("#utterance-table").wait_for()
    assert page.locator("#report-updating").count() == 0
    assert any(url.endswith("/compute") or "/compute?" in url for url in seen)
    assert errors == []

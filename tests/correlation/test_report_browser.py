"""The report page in headless Chromium: plots drawn, hover labels escaped, tables sortable."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from tests.correlation.builders import Item, add_items, signature
from tests.factories import QuestionFactory, StudyFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Plotly reads tags such as <b> and <a> in hover labels and drops unknown ones such as <img>; escaped, all
# of it must come out as the literal text.
HOSTILE = "<b>bold</b> <img src=x onerror=\"document.title='pwned'\"> hi & bye"


def test_plots_render_and_hover_text_stays_text(live_server, page, researcher) -> None:
    study = StudyFactory.create(owner=researcher)
    question = QuestionFactory.create(study=study)
    bleu, meteor = signature("bleu-2", refs="multi"), signature("meteor")
    add_items(
        study=study,
        question=question,
        items=[
            Item(
                f"sys{i % 3}",
                ratings=[i % 3],
                scores={bleu.text: i / 10, meteor.text: (i * 7 % 5) / 5},
                text=HOSTILE,
            )
            for i in range(12)
        ],
    )
    client = Client()
    client.force_login(researcher)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )

    page.goto(f"{live_server.url}/reports/{study.pk}/")
    page.wait_for_function("document.querySelectorAll('div.plot .main-svg').length >= 4")

    assert errors == []
    assert page.locator("div.plot[data-level=utterance] g.trace.scatter").count() == 6  # 2 plots x 3 systems
    assert page.locator("div.plot[data-level=system] g.trace.scatter").count() == 6
    title = page.locator("div.plot[data-level=utterance] .gtitle").first.text_content() or ""
    assert title.startswith("bleu-2 (multi)")
    assert "ρ =" in title

    page.locator("div.plot[data-level=utterance] g.trace.scatter path.point").first.hover(force=True)
    hover = page.locator(".hoverlayer .hovertext").first
    hover.wait_for()
    assert HOSTILE in (hover.text_content() or "")  # shown as text ...
    assert page.locator(".hoverlayer img").count() == 0  # ... never parsed as markup
    assert page.title() != "pwned"

    metric_cells = page.locator("#utterance-table tbody tr td:first-child")
    assert metric_cells.all_text_contents() == ["bleu-2", "meteor"]
    page.locator("#utterance-table thead th").first.click()
    page.locator("#utterance-table thead th").first.click()
    assert metric_cells.all_text_contents() == ["meteor", "bleu-2"]

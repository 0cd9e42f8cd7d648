"""A rejected import in headless Chromium: "The import was rejected…" is a heading above the
problems, not one of them, and reloading the address it leaves (/studies/<id>/import/) shows the study's
import form instead of Chromium's "HTTP ERROR 405" with an empty body."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser_fixtures import log_in
from tests.factories import StudyFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_rejected_import_reads_as_a_heading_and_its_address_reloads(
    page, live_server, researcher, tmp_path: Path
) -> None:
    study = StudyFactory.create(owner=researcher)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"context": ["hi"], "response": 5, "system": "s"}\n', encoding="utf-8")
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/studies/{study.pk}/")
    page.select_option("#import-form select[name=format]", "jsonl")
    page.set_input_files("#import-form input[type=file]", str(bad))
    with page.expect_navigation():
        page.click("#import-form button[type=submit]")
    assert page.url.endswith(f"/studies/{study.pk}/import/")
    assert page.locator("#import-rejected").inner_text() == "The import was rejected and nothing was changed:"
    problems = page.locator("#import-errors li").all_inner_texts()
    assert problems
    assert all("bad.jsonl, line 1" in problem for problem in problems)

    response = page.goto(page.url)  # the address bar's URL opened again (a GET)
    assert response is not None
    assert response.status == 200
    assert page.url.endswith(f"/studies/{study.pk}/#import")
    assert page.locator("#import-form").is_visible()

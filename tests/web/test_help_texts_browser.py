"""The help a researcher reads, in headless Chromium: docs/import-formats.md is a link that opens
the document, the reply-id help points at the replies table where it is (above), and the new-study form
lays every field out the same way (label above, control, help under it)."""

from __future__ import annotations

import pytest

from tests.annotation.work_builders import work_study
from tests.browser_fixtures import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_import_formats_help_is_a_link_to_the_document(page, live_server) -> None:
    study = work_study(contexts=1)
    log_in(page, live_server, study.owner)
    page.goto(f"{live_server.url}/studies/{study.pk}/")
    with page.expect_navigation():
        page.click("#import-formats-link")
    assert page.locator("#doc-page h1").inner_text() == "Import formats"
    page.goto(f"{live_server.url}/studies/{study.pk}/")
    page.click("#external-scores summary")
    with page.expect_navigation():
        page.click("#external-scores-format-link")
    assert page.url.endswith("/docs/import-formats/#metric-scores-computed-elsewhere")
    assert page.locator("#metric-scores-computed-elsewhere").is_visible()


def test_the_reply_id_help_points_up_to_the_replies_table(page, live_server) -> None:
    study = work_study(contexts=1)
    log_in(page, live_server, study.owner)
    page.goto(f"{live_server.url}/studies/{study.pk}/annotation/")
    help_text = page.locator("#checks").inner_text()
    assert "replies table below" not in help_text
    assert "table above" in help_text
    table = page.locator("#item-table").bounding_box()
    reply_id = page.locator("#id_mark-response").bounding_box()
    assert table is not None
    assert reply_id is not None
    assert table["y"] < reply_id["y"]  # it is above indeed


def test_the_new_study_form_lays_every_field_out_the_same_way(page, live_server, researcher) -> None:
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/studies/new/")
    fields = page.locator("#study-new-form .form-field")
    assert fields.count() == 7
    lefts = set()
    for index in range(fields.count()):
        field = fields.nth(index)
        label = field.locator("label").bounding_box()
        control = field.locator("input, select, textarea").last.bounding_box()
        assert label is not None
        assert control is not None
        assert label["y"] + label["height"] <= control["y"] + 1  # the label above its control, never beside
        lefts.add(round(control["x"]))
    assert len(lefts) == 1  # every control starts at the same place

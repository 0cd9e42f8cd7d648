"""The annotation page of a study imported with its ratings: the progress counts them and says
so, each imported rater shows what they rated, and unticking the setting asks for a fresh collection."""

from __future__ import annotations

import pytest

from tests.annotation.work_builders import imported_rating_study
from tests.browser_fixtures import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_imported_ratings_show_in_the_progress_and_the_setting_says_which_rule(
    page, live_server, researcher
) -> None:
    study = imported_rating_study(researcher)
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/studies/{study.pk}/annotation/")
    assert page.locator("#progress-rate .progress-text").inner_text() == "12 of 12 (100%)"
    assert "ratings imported from files" in page.locator("#imported-ratings-rule").inner_text()
    assert page.locator("tr.annotator[data-annotator=rater-0] .rated").inner_text() == "4"

    page.uncheck("#id_settings-count_imported_ratings")
    with page.expect_navigation():
        page.click("#settings-form button[type=submit]")
    assert page.locator("#progress-rate .progress-text").inner_text() == "0 of 12 (0%)"
    assert "fresh ratings" in page.locator("#imported-ratings-rule").inner_text()

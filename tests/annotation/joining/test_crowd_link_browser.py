"""The researcher tries their own crowd link in headless Chromium: the page says who they are
logged in as, "Stay logged in" keeps them, and the button signs them out and continues as the participant."""

from __future__ import annotations

import pytest

from annotation.models import Annotator
from tests.annotation.work_builders import work_study
from tests.browser_fixtures import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_researcher_is_asked_before_the_link_switches_accounts(page, live_server) -> None:
    study = work_study(contexts=1, crowd_id_parameter="PROLIFIC_PID")
    researcher = study.owner
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, researcher)
    link = f"{live_server.url}/work/join/{study.invite_token}/?PROLIFIC_PID=5f3a9c1b2d"

    page.goto(link)
    assert page.locator("#crowd-switch-user").inner_text() == researcher.username
    assert page.locator("header .who").inner_text() == researcher.username
    with page.expect_navigation():
        page.click("#crowd-switch-back")
    assert page.locator("header .who").inner_text() == researcher.username
    assert not Annotator.objects.filter(study=study).exists()

    page.goto(link)
    with page.expect_navigation():
        page.click("#crowd-switch-continue")
    assert page.url == f"{live_server.url}/work/{study.pk}/consent/"
    assert page.locator("header .who").inner_text() == "prolific_pid-5f3a9c1b2d"
    assert Annotator.objects.get(study=study).external_worker_id == "5f3a9c1b2d"
    assert errors == []

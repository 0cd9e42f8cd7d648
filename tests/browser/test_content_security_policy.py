"""The pages work under the app's Content-Security-Policy (config/security_headers.py), in headless Chromium.

Each page is opened with the header the app sends (Playwright does not bypass it) and must have it, and the
page must report no CSP violation: neither a ``securitypolicyviolation`` event (a listener is installed before
any of the page's own scripts run) nor a console message about one. It must also have done its work: the
study list lists the study, the study page shows its scoring run, the report page draws its plotly figures
(from the static plotly.js), the rating screen shows a reply to rate, Swagger UI renders the operations of
the schema and ReDoc its menu. A strict policy that silently broke a page (a figure not drawn, an inline
style refused) would otherwise pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from annotation.demo_sample import demo_sample_jsonl
from annotation.importers import ImportFile
from annotation.services.annotators import annotator_join
from annotation.services.imports import study_import
from annotation.services.joining import annotator_consent
from annotation.services.studies import study_create
from annotation.services.work_items import work_items_sync
from correlation.report.cache import report_current
from scoring.services import scoring_run_create, scoring_run_execute
from stats.report.types import ReportOptions
from tests.browser_fixtures import log_in
from tests.factories import (
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser]

RESEARCHER, VOLUNTEER = "researcher", "volunteer"

# Installed before the page's own scripts: every violation the document reports, kept for the test to read.
LISTEN = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`
    + ` (${event.sourceFile || ""}:${event.lineNumber || ""}) ${event.sample || ""}`);
});
"""


@pytest.fixture
def db() -> None:
    """The module's data is committed once and read through its own live server (as in test_page_layout.py:
    pytest-django's transaction would hold SQLite's write lock and lock the server out). Every test still asks
    for ``db``: that is what makes pytest-django set the test database up at all (without it the module would
    write into, and flush, the database the settings name)."""


def _build() -> dict[str, Any]:
    researcher = ResearcherFactory.create(username="csp-researcher")
    volunteer = UserFactory.create(username="csp-volunteer")
    demo = study_create(owner=researcher, name="Demo under the policy", scale="0-2")
    study_import(
        study=demo,
        format="jsonl",
        files=[ImportFile(name="demo-sample.jsonl", data=demo_sample_jsonl())],
        user=researcher,
    )
    run = scoring_run_create(study=demo, metrics=["bleu-1", "rouge-l"], references="multi", enqueue=False)
    assert scoring_run_execute(run_id=run.pk).status == "succeeded"
    report_current(study=demo, options=ReportOptions())

    rating = study_create(owner=researcher, name="Rating under the policy", ratings_per_item=1)
    bot = SystemFactory.create(study=rating, name="a-bot")
    for index in range(2):
        context = DialogContextFactory.create(study=rating)
        ResponseFactory.create(context=context, system=bot, text=f"reply {index}: that sounds lovely .")
    work_items_sync(study=rating)
    annotator_consent(annotator=annotator_join(token=rating.invite_token, user=volunteer))
    return {"users": {RESEARCHER: researcher, VOLUNTEER: volunteer}, "demo": demo.pk, "rating": rating.pk}


@pytest.fixture(scope="module")
def site(django_db_setup: None, django_db_blocker: Any, chromium_browser: Any) -> Iterator[dict[str, Any]]:
    from pytest_django.live_server_helper import LiveServer

    server: LiveServer | None = None
    contexts: dict[str, Any] = {}
    with django_db_blocker.unblock():
        try:
            data = _build()
            server = LiveServer("localhost")
            for role in (RESEARCHER, VOLUNTEER):
                context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_init_script(LISTEN)
                login_page = context.new_page()
                log_in(login_page, server, data["users"][role])
                login_page.close()
                contexts[role] = context
            yield {**data, "url": server.url, "contexts": contexts}
        finally:
            for context in contexts.values():
                context.close()
            if server is not None:
                server.stop()
            call_command("flush", interactive=False, verbosity=0)


def open_page(site: dict[str, Any], role: str, path: str, ready: str) -> tuple[Any, list[str]]:
    """Open ``path`` as ``role``, wait for ``ready`` (a selector: the page did its work), and return the page
    and its CSP problems: a missing header, violations reported to the document or to the console."""
    page = site["contexts"][role].new_page()
    page.set_default_timeout(20_000)
    console: list[str] = []
    page.on(
        "console",
        lambda message: (
            console.append(message.text)
            if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text
            else None
        ),
    )
    response = page.goto(site["url"] + path.format(**site))
    assert response is not None, path
    assert response.status == 200, (path, response.status)
    problems: list[str] = []
    try:
        page.wait_for_selector(ready, state="attached")
        page.wait_for_load_state("networkidle")
    except PlaywrightTimeoutError:
        problems.append(f"the page did not show {ready!r}")
    problems += [*page.evaluate("window.__cspViolations"), *console]
    if "content-security-policy" not in response.headers:
        problems.insert(0, "no Content-Security-Policy header")
    return page, problems


PAGES = [
    ("study-list", RESEARCHER, "/studies/", "text=Demo under the policy"),
    ("study-page", RESEARCHER, "/studies/{demo}/", "tr.run .run-status.status-succeeded"),
    ("report", RESEARCHER, "/reports/{demo}/", ".js-plotly-plot .main-svg"),
    ("rating-screen", VOLUNTEER, "/work/{rating}/rate/", "text=that sounds lovely"),
    ("api-docs", RESEARCHER, "/api/docs/", ".swagger-ui .opblock"),
    ("redoc", RESEARCHER, "/api/redoc/", "[role=menu] li, .menu-content li"),
]


@pytest.mark.parametrize(("name", "role", "path", "ready"), PAGES, ids=[page[0] for page in PAGES])
def test_the_page_works_under_the_policy(
    db: None, site: dict[str, Any], name: str, role: str, path: str, ready: str
) -> None:
    page, problems = open_page(site, role, path, ready)
    try:
        assert problems == [], f"{name}:\n" + "\n".join(problems)
    finally:
        page.close()


def test_the_report_figures_are_drawn_and_styled(db: None, site: dict[str, Any]) -> None:
    """plotly.js draws every figure of the report's first tab, and its own style rules (the mode bar's, the
    hover labels') apply although it may not add a <style> element: the mode bar is laid out by them."""
    page, problems = open_page(site, RESEARCHER, "/reports/{demo}/", ".js-plotly-plot .main-svg")
    try:
        assert problems == [], "\n".join(problems)
        assert page.locator(".js-plotly-plot .main-svg").count() >= 1
        assert page.locator(".js-plotly-plot .scatterlayer .point").count() >= 1
        page.locator(".js-plotly-plot").first.hover()
        position = page.evaluate(
            "getComputedStyle(document.querySelector('.js-plotly-plot .modebar')).position"
        )
        assert position == "absolute"  # plotly's rule for .js-plotly-plot .plotly .modebar
    finally:
        page.close()

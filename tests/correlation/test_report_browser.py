"""The report page in headless Chromium, as a researcher uses it: the Human rows above the metrics, the
agreement tab and its heat map, hover labels that stay text, the LaTeX and PNG downloads, and the open
report changing by itself when an annotator submits a rating."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Annotator
from annotation.services.annotators import annotator_join
from annotation.services.assignment import next_assignment
from annotation.services.submissions import rating_submit
from annotation.services.work_items import work_items_sync
from tests.browser_fixtures import ARTIFACTS, log_in
from tests.correlation.builders import Item, add_items, signature
from tests.factories import QuestionFactory, StudyFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Plotly reads tags such as <b> and <a> in hover labels and drops unknown ones such as <img>; escaped, all
# of it must come out as the literal text.
HOSTILE = "<b>bold</b> <img src=x onerror=\"document.title='pwned'\"> hi & bye"


@pytest.fixture
def rated_study(researcher):
    study = StudyFactory.create(owner=researcher, check_interval=0, ratings_per_item=4)
    question = QuestionFactory.create(study=study, name="appropriateness", scale_min=0, scale_max=2)
    bleu, meteor = signature("bleu-2", refs="multi"), signature("meteor")
    add_items(
        study=study,
        question=question,
        items=[
            Item(
                f"sys{i % 3}",
                ratings=[i % 3, (i + i // 3) % 3, (2 * i) % 3],
                scores={bleu.text: i / 10, meteor.text: (i * 7 % 5) / 5},
                text=HOSTILE,
            )
            for i in range(12)
        ],
    )
    work_items_sync(study=study)
    return study


def test_a_researcher_reads_downloads_and_watches_the_report_update(
    page, live_server, researcher, rated_study
) -> None:
    study = rated_study
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, researcher)

    page.goto(f"{live_server.url}/reports/{study.pk}/")
    page.wait_for_function("() => document.querySelectorAll('#scatter-plots .plot .main-svg').length >= 2")

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-metrics.png"), full_page=True)

    # The Human rows stand above the metrics, in the same table.
    first_cells = page.locator("#utterance-table tbody tr td:first-child").all_text_contents()
    assert first_cells[0].startswith("Human (Avg)")
    assert first_cells[1].startswith("Human (Max)")
    assert [cell.strip() for cell in first_cells[2:]] == ["bleu-2", "meteor"]
    assert page.locator("#human-scored").text_content() == "12"

    # Hover a reply in a scatter plot: its text is shown, never parsed as markup.
    page.locator("#scatter-plots g.trace.scatter path.point").first.hover(force=True)
    hover = page.locator(".hoverlayer .hovertext").first
    hover.wait_for()
    assert HOSTILE in (hover.text_content() or "")
    assert page.locator(".hoverlayer img").count() == 0
    assert page.title() != "pwned"

    # The agreement tab: coefficients, raters, the heat map; a click on a cell draws the pair's scatter.
    page.locator('#report-tabs a[data-tab="agreement"]').click()
    assert page.locator("#tab-agreement").is_visible()
    assert not page.locator("#tab-metrics").is_visible()
    assert page.locator('#agreement-table tr[data-coefficient="krippendorff_alpha_ordinal"]').is_visible()
    assert page.locator("#rater-table tbody tr").count() == 3
    page.wait_for_function(
        "() => document.querySelector('div.plot[data-figure=\"agreement-heatmap\"] .main-svg') !== null"
    )
    heatmap = page.locator('div.plot[data-figure="agreement-heatmap"] .nsewdrag').first
    box = heatmap.bounding_box()
    assert box is not None
    heatmap.click(position={"x": box["width"] * 0.2, "y": box["height"] * 0.8})
    page.wait_for_function("() => document.getElementById('pair-plot').dataset.pair !== undefined")
    assert " vs " in (page.locator("#pair-plot .gtitle").text_content() or "")
    page.screenshot(path=str(ARTIFACTS / "report-agreement.png"), full_page=True)

    # Downloads: the LaTeX tables and a figure as PNG (rendered server-side).
    page.locator('#report-tabs a[data-tab="downloads"]').click()
    with page.expect_download() as latex_download:
        page.locator("#download-latex").click()
    latex = Path(latex_download.value.path()).read_text(encoding="utf-8")
    assert "\\toprule" in latex
    assert "Human (Avg)" in latex
    assert latex_download.value.suggested_filename.endswith(".tex")
    page.locator('#report-tabs a[data-tab="metrics"]').click()
    png_link = page.locator('div.plot[data-figure="quantiles"] ~ .figure-links a', has_text="PNG")
    with page.expect_download(timeout=60_000) as png_download:
        png_link.click()
    assert Path(png_download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert study.name.lower().split()[0] in png_download.value.suggested_filename

    # An annotator submits a rating; the open report changes without a reload.
    page.evaluate("window.stillTheSamePage = true")
    version = page.locator("#report-state").get_attribute("data-version")
    ratings_before = page.locator("#report-summary").text_content() or ""
    volunteer = UserFactory.create(username="volunteer")
    annotator = annotator_join(token=study.invite_token, user=volunteer)
    handout = next_assignment(annotator=annotator)
    rating_submit(annotator=annotator, assignment_id=handout.assignment.pk, values={"appropriateness": 2})
    page.wait_for_function(
        f"() => document.getElementById('report-state').dataset.version !== '{version}'", timeout=30_000
    )
    assert page.evaluate("window.stillTheSamePage") is True
    ratings_after = page.locator("#report-summary").text_content() or ""
    assert "36 ratings" in ratings_before
    assert "37 ratings" in ratings_after
    assert Annotator.objects.filter(study=study, user=volunteer).exists()
    assert errors == []

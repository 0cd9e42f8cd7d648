"""Bring your own metric, in headless Chromium: the researcher uploads a file of scores computed
elsewhere on the study page (a bad one first: rejected with file, line and field, nothing imported), sees
the metric listed, and reads it in the report beside the built-in metrics, marked external."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring.models import MetricScore
from tests.browser_fixtures import ARTIFACTS, log_in
from tests.correlation.builders import Item, add_items, signature
from tests.factories import QuestionFactory, StudyFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_researcher_imports_external_scores_and_reads_them_in_the_report(
    page, live_server, researcher, tmp_path: Path
) -> None:
    study = StudyFactory.create(owner=researcher, name="Bring your own metric")
    question = QuestionFactory.create(study=study, name="appropriateness", scale_min=0, scale_max=2)
    bleu = signature("bleu-2", refs="multi")
    ratings = [(2, 2), (1, 0), (2, 1), (0, 0), (0, 1), (1, 1), (2, 2), (0, 1)]
    replies = add_items(
        study=study,
        question=question,
        items=[
            Item(f"sys{i % 2}", ratings=list(r), scores={bleu.text: (i * 3 % 8) / 8}, text=f"reply {i}")
            for i, r in enumerate(ratings)
        ],
    )
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/studies/{study.pk}/")

    bad = tmp_path / "bad.csv"
    bad.write_text("response_id,metric,value\n999999,usr,0.5\n", encoding="utf-8")
    page.click("#external-scores summary")
    page.set_input_files("#external-scores-file", str(bad))
    page.click("#external-scores-form button[type=submit]")
    problems = page.locator("#external-scores-errors").inner_text()
    assert "bad.csv, line 2" in problems
    assert 'field "response_id"' in problems
    assert not MetricScore.objects.filter(signature__origin="external").exists()

    good = tmp_path / "usr.csv"
    good.write_text(
        "response_id,metric,value,signature\n"
        + "".join(
            f"{reply.pk},usr,{sum(r) / 4},usr-roberta\n" for reply, r in zip(replies, ratings, strict=True)
        ),
        encoding="utf-8",
    )
    page.set_input_files("#external-scores-file", str(good))
    page.click("#external-scores-form button[type=submit]")
    page.wait_for_selector(".messages li.success")
    assert "usr (external): 8 replies" in page.locator(".messages").inner_text()
    assert "usr (external)" in page.locator("#external-metrics").inner_text()

    page.goto(f"{live_server.url}/reports/{study.pk}/")
    page.wait_for_selector("#utterance-table")
    external = page.locator('#utterance-table tr[data-group="External"]')
    assert external.count() == 1
    assert external.locator("td").first.inner_text() == "usr (external)"
    assert page.locator('#utterance-table tr[data-group="Referenced"] td').first.inner_text() == "bleu-2"
    page.click("a[data-tab=comparisons]")
    assert "usr (external)" in page.locator("#tab-comparisons").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-external-metric.png"), full_page=True)
    assert errors == []

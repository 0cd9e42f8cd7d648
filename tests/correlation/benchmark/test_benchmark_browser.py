"""The benchmark page in headless Chromium: a researcher ticks two studies, picks a statistic, and reads the
table, the heat map and the reason of a missing cell."""

from __future__ import annotations

import pytest

from tests.browser_fixtures import log_in
from tests.correlation.benchmark.builders import benchmark_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BLEU, METEOR = "bleu-2|refs:single|version:test", "meteor|version:test"


def test_a_researcher_compares_metrics_across_their_studies(page, live_server, researcher) -> None:
    benchmark_study(
        researcher, "GRADE convai2", {BLEU: lambda q, i: q + i % 3, METEOR: lambda q, i: q}, seed=1
    )
    benchmark_study(researcher, "own pilot", {BLEU: lambda q, i: q - i % 4}, seed=2)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, researcher)

    page.goto(f"{live_server.url}/")
    page.click("#nav-benchmark")
    page.check("text=GRADE convai2")
    page.check("text=own pilot")
    page.select_option("#id_statistic", "spearman")
    page.select_option("#id_grouping", "context")
    page.click("#benchmark-show")

    page.wait_for_selector("#benchmark-heatmap[data-ready='1'] .main-svg")
    heading = page.inner_text("#benchmark-result h2")
    assert heading.startswith("Spearman")
    rows = page.locator("#benchmark-table tbody tr")
    assert rows.count() == 2
    assert "—" in rows.nth(1).inner_text()
    assert "meteor on own pilot: not scored on this study" in page.inner_text("#benchmark-missing")
    assert page.locator("#benchmark-heatmap .hm, #benchmark-heatmap .heatmaplayer").count() >= 1
    assert errors == []

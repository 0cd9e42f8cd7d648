"""A researcher's whole path in a real browser: log in, import, score on a real worker, read the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.browser_fixtures import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def _rated_jsonl(path: Path) -> Path:
    """Eight replies to four contexts, three named raters each, written by the test."""
    rows = []
    contexts = [
        (["where is the station ?"], "it is two blocks north , next to the bank ."),
        (["do you like coffee ?"], "yes , i drink two cups every morning ."),
        (["what are you doing tonight ?"], "i am going to the cinema with my sister ."),
        (["can i borrow your pen ?"], "sure , here you are ."),
    ]
    replies = {
        "good-bot": lambda ref: (ref, [2, 2, 2]),
        "dull-bot": lambda ref: ("i do n't know .", [0, 1, 0]),
    }
    for index, (turns, reference) in enumerate(contexts):
        for system, make in replies.items():
            text, ratings = make(reference)
            if system == "good-bot" and index % 2:
                text, ratings = text.replace(".", ", i think ."), [1, 2, 1]
            rows.append(
                {
                    "id": f"{index}-{system}",
                    "context": turns,
                    "response": text,
                    "system": system,
                    "references": [reference],
                    "ratings": {"appropriateness": ratings},
                    "annotators": ["r1", "r2", "r3"],
                }
            )
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    return path


def test_researcher_imports_scores_and_reads_report(
    page, live_server, celery_worker_process, transactional_db, tmp_path
):
    call_command("demo_setup", "--sample")
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", "researcher-demo")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/studies/")

    page.click("text=New study")
    page.fill("input[name=name]", "Browser study")
    page.click("button:has-text('Create study')")
    page.wait_for_selector("h1:has-text('Browser study')")

    # A bad file first: rejected with file, line and field named, nothing imported.
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"context": ["hi"], "system": "x", "response": ""}\n', encoding="utf-8")
    page.select_option("select[name=format]", "jsonl")
    page.set_input_files("input[name=files]", str(bad))
    page.click("#import-form button[type=submit]")
    errors = page.locator("#import-errors").inner_text()
    assert "bad.jsonl" in errors
    assert "line 1" in errors
    assert "response" in errors

    page.select_option("select[name=format]", "jsonl")
    page.set_input_files("input[name=files]", str(_rated_jsonl(tmp_path / "rated.jsonl")))
    page.click("#import-form button[type=submit]")
    page.wait_for_selector(".messages li.success")
    assert page.locator("#overview").inner_text().count("8") >= 1

    page.click("#scoring-form button[type=submit]")
    page.wait_for_selector("tr.run")
    # The progress bar is driven by the page's polling of the API; wait for the worker to finish.
    page.wait_for_selector("tr.run .run-status.status-succeeded", timeout=90_000)
    progress = page.locator("tr.run .run-progress")
    assert progress.get_attribute("value") == progress.get_attribute("max")
    count = page.locator("tr.run .run-count").inner_text()
    assert count.endswith(" scores")  # reply x metric units, named on the page
    assert count.split(" of ")[0] == count.split(" of ")[1].split()[0]  # all done
    assert page.locator("tr.run .run-cancel").count() == 0  # a finished run offers no Cancel

    page.click("text=Correlation report")
    table_text = page.locator("table").first.inner_text()
    for metric in ("bleu-1", "bleu-2", "bleu-3", "bleu-4"):
        assert metric in table_text
    assert "Pearson" in table_text or "pearson" in table_text.lower()
    # plotly drew at least one scatter plot (an SVG with points) from the static plotly.js.
    page.wait_for_selector(".plot .main-svg", timeout=20_000)
    assert page.locator(".plot .scatterlayer .point").count() >= 8
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)

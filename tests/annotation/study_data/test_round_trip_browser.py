"""The data round trip in headless Chromium: the researcher downloads a study's contexts from the study page,
runs "their system" on them (this test), uploads the outputs back, then deletes a system through its
confirmation page, which names what goes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.importers import ImportFile
from annotation.models import Rating, Response, System
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from tests.browser_fixtures import ARTIFACTS
from tests.factories import ResearcherFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _rated(system: str, ratings: list[int]) -> list[dict[str, object]]:
    return [
        {
            "context_id": f"dlg-{index}",
            "context": [f"question {index} ?", f"and {index} ?"],
            "response": f"{system} says {index} .",
            "system": system,
            "references": [f"reference {index} ."],
            "ratings": {"appropriateness": ratings},
            "annotators": ["ann", "bob"],
        }
        for index in range(3)
    ]


def test_download_contexts_upload_outputs_and_delete_a_system(live_server, page, tmp_path: Path) -> None:
    owner = ResearcherFactory.create(username="prof")
    study = study_create(owner=owner, name="Round trip in the browser")
    rows = _rated("good-bot", [2, 2]) + _rated("bad-bot", [0, 1])
    data = "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")
    study_import(study=study, format="jsonl", files=[ImportFile("rated.jsonl", data)])

    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "prof")
    page.fill("input[name=password]", "pw-for-tests-123")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/studies/")
    page.goto(f"{live_server.url}/studies/{study.pk}/")

    with page.expect_download() as download_info:
        page.click("#contexts-jsonl")
    download = download_info.value
    assert download.suggested_filename == "round-trip-in-the-browser-contexts.jsonl"
    contexts = [json.loads(line) for line in Path(download.path()).read_text(encoding="utf-8").splitlines()]
    assert [row["context_id"] for row in contexts] == ["dlg-0", "dlg-1", "dlg-2"]
    assert contexts[1]["turns"] == [
        {"speaker": "A", "text": "question 1 ?"},
        {"speaker": "B", "text": "and 1 ?"},
    ]
    assert contexts[1]["references"] == ["reference 1 ."]

    outputs = tmp_path / "my-bot.jsonl"
    outputs.write_text(
        "".join(
            json.dumps(
                {
                    "context_id": row["context_id"],
                    "system": "my-bot",
                    "response": f"reply to {row['turns'][-1]['text']}",
                }
            )
            + "\n"
            for row in contexts
        ),
        encoding="utf-8",
    )
    page.select_option("select[name=format]", "jsonl")
    page.set_input_files("input[name=files]", str(outputs))
    page.click("#import-form button[type=submit]")
    page.wait_for_selector(".messages li.success")
    assert "3 contexts already in the study" in page.locator(".messages li.success").inner_text()
    assert Response.objects.filter(system__name="my-bot").count() == 3

    page.locator("#systems tr", has_text="bad-bot").locator("a.system-delete").click()
    page.wait_for_selector("#deletion-counts")
    counts = page.locator("#deletion-counts").inner_text()
    for line in ("1 system", "3 replies", "6 ratings", "3 work items"):
        assert line in counts
    assert "bad-bot" in page.locator("h1").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "delete-system.png"), full_page=True)
    page.click("#deletion-form button[type=submit]")
    page.wait_for_selector(".messages li.success")

    assert "Deleted system “bad-bot”" in page.locator(".messages li.success").inner_text()
    systems = page.locator("#systems").inner_text()
    assert "bad-bot" not in systems
    assert "good-bot" in systems
    assert not System.objects.filter(study=study, name="bad-bot").exists()
    assert Rating.objects.filter(response__context__study=study).count() == 6
    page.screenshot(path=str(ARTIFACTS / "study-after-round-trip.png"), full_page=True)
    assert errors == []


@pytest.mark.integration
def test_a_large_upload_shows_the_worker_progress_then_the_outcome(
    live_server, page, celery_worker_process, settings, tmp_path: Path
) -> None:
    """The job page polls the worker's progress and, once the import is done, shows its counts."""
    settings.DIALEVAL_IMPORT_INLINE_MAX_BYTES = 1_000
    owner = ResearcherFactory.create(username="prof")
    study = study_create(owner=owner, name="Large upload in the browser")
    big = tmp_path / "big.jsonl"
    big.write_text(
        "".join(
            json.dumps({"context": [f"question {index} ?"], "response": f"answer {index} .", "system": "bot"})
            + "\n"
            for index in range(2_000)
        ),
        encoding="utf-8",
    )

    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "prof")
    page.fill("input[name=password]", "pw-for-tests-123")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/studies/")
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if "status.json" in request.url else None)
    page.goto(f"{live_server.url}/studies/{study.pk}/")
    celery_worker_process.stop()  # the job waits in the queue while the page first shows it
    page.select_option("select[name=format]", "jsonl")
    page.set_input_files("input[name=files]", str(big))
    page.click("#import-form button[type=submit]")

    page.wait_for_selector("#import-job")
    assert page.locator("#job-count").inner_text() == "waiting for a worker…"
    assert page.locator("#job-progress").count() == 1
    page.wait_for_function("() => document.getElementById('job-status').textContent !== ''")
    celery_worker_process.start()
    page.wait_for_selector("#job-summary", timeout=90_000)  # the page reloads itself when the job is done
    assert polls  # the page followed the job through its status endpoint
    assert (
        "Imported big.jsonl: 2,000 new contexts, 1 new system, 2,000 new responses"
        in page.locator("#job-summary").inner_text()
    )
    assert Response.objects.filter(context__study=study).count() == 2_000
    assert errors == []

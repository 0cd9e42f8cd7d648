"""A rejected import's problems, grouped and counted: an 80-line file whose every line duplicates an
item already in the study was shown as exactly 50 identical "duplicate item" lines, with no word of the other
30. Problems with the same message in the same file and field are one entry with their lines as ranges;
past the page's cap, a sentence says how many problems there are in all and how many are not shown. The
study page, the page of an import a worker ran, the import_study command and the API all say so."""

from __future__ import annotations

import html
import io
import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.importers import ImportFile, ImportRejected
from annotation.models import ImportJob, Study
from annotation.services.import_jobs import import_job_run
from annotation.services.imports import study_import
from annotation.services.studies import study_create

pytestmark = pytest.mark.django_db

LINES = 80
CAP = 50  # entries a page shows (kernel.importing.problems.PROBLEMS_SHOWN)


def rows(count: int, **extra: Any) -> bytes:
    """``count`` replies of system "bot", each to a context of its own."""
    return "".join(
        json.dumps({"context_id": f"c{n}", "context": [f"question {n} ?"], "response": f"answer {n} .",
                    "system": "bot", **{key: value(n) for key, value in extra.items()}}) + "\n"
        for n in range(count)
    ).encode("utf-8")  # fmt: skip


@pytest.fixture
def study(researcher) -> Study:
    """A study that already holds the 80 replies: importing them again makes every line a duplicate."""
    study = study_create(owner=researcher, name="duplicates", scale="0-2")
    study_import(study=study, format="jsonl", files=[ImportFile("first.jsonl", rows(LINES))])
    return study


def owner(study: Study) -> Client:
    client = Client()
    client.force_login(study.owner)
    return client


def duplicate_message(study: Study) -> str:
    """The one message every line of the duplicate file gets, from the importer itself."""
    with pytest.raises(ImportRejected) as rejected:
        study_import(study=study, format="jsonl", files=[ImportFile("dup.jsonl", rows(LINES))])
    messages = {problem.message for problem in rejected.value.problems}
    assert len(messages) == 1
    return messages.pop()


def shown_problems(page: str, list_id: str) -> list[str]:
    found = re.search(rf'<ul class="errorlist" id="{list_id}">(.*?)</ul>', page, re.S)
    assert found is not None, page[-3000:]
    return [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", found.group(1), re.S)]


def out_of_scale() -> bytes:
    """80 new replies, each rated with a different value off the 0-2 scale: 80 distinct problems."""
    return rows(LINES, context_id=lambda n: f"new{n}", ratings=lambda n: {"appropriateness": [n + 3]})


def test_eighty_duplicate_lines_are_one_entry_with_their_range(study: Study) -> None:
    message = duplicate_message(study)
    upload = io.BytesIO(rows(LINES))
    upload.name = "dup.jsonl"
    response = owner(study).post(
        reverse("annotation:study-import", args=[study.pk]), {"format": "jsonl", "files": [upload]}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert shown_problems(page, "import-errors") == [f"dup.jsonl, lines 1–{LINES}: {message}"]
    assert f"{LINES} problems in all." in page


def test_more_distinct_problems_than_the_cap_says_how_many_are_shown(study: Study) -> None:
    upload = io.BytesIO(out_of_scale())
    upload.name = "scale.jsonl"
    page = (
        owner(study)
        .post(reverse("annotation:study-import", args=[study.pk]), {"format": "jsonl", "files": [upload]})
        .content.decode()
    )
    shown = shown_problems(page, "import-errors")
    assert len(shown) == CAP
    assert shown[0].startswith("scale.jsonl, line 1, field")  # each still names its file, line and field
    assert f"{LINES} problems in all; {CAP} of {LINES} shown, {LINES - CAP} not shown." in page


def test_the_command_groups_and_counts_them_too(study: Study, tmp_path: Path) -> None:
    message = duplicate_message(study)
    duplicates = tmp_path / "dup.jsonl"
    duplicates.write_bytes(rows(LINES))
    err = StringIO()
    with pytest.raises(CommandError) as error:
        call_command("import_study", "--format", "jsonl", "--study", study.name, str(duplicates), stderr=err)
    assert err.getvalue().splitlines() == [f"dup.jsonl, lines 1–{LINES}: {message}"]
    assert str(error.value).endswith(f"{LINES} problems in all.")

    scale = tmp_path / "scale.jsonl"
    scale.write_bytes(out_of_scale())
    err = StringIO()
    with pytest.raises(CommandError) as error:
        call_command("import_study", "--format", "jsonl", "--study", study.name, str(scale), stderr=err)
    assert len(err.getvalue().splitlines()) == CAP
    assert str(error.value).endswith(
        f"{LINES} problems in all; {CAP} of {LINES} shown, {LINES - CAP} not shown."
    )


def test_the_api_lists_every_problem_with_the_count(study: Study) -> None:
    client = APIClient()
    client.force_authenticate(study.owner)
    upload = io.BytesIO(rows(LINES))
    upload.name = "dup.jsonl"
    response = client.post(
        f"/api/studies/{study.pk}/imports/", {"format": "jsonl", "files": [upload]}, format="multipart"
    )
    assert response.status_code == 400
    body = response.json()
    assert [problem["line"] for problem in body["problems"]] == list(range(1, LINES + 1))
    assert {problem["file"] for problem in body["problems"]} == {"dup.jsonl"}
    assert body["problems_total"] == LINES
    assert body["summary"] == f"{LINES} problems in all."


def test_the_page_of_an_import_a_worker_ran_groups_and_counts_them(
    study: Study, settings: Any, tmp_path: Path
) -> None:
    settings.DIALEVAL_IMPORT_INLINE_MAX_BYTES = 100  # the upload goes to a worker
    settings.DIALEVAL_IMPORT_DIR = tmp_path / "imports"
    client = owner(study)
    upload = io.BytesIO(out_of_scale())
    upload.name = "scale.jsonl"
    client.post(reverse("annotation:study-import", args=[study.pk]), {"format": "jsonl", "files": [upload]})
    job = ImportJob.objects.get(study=study)
    import_job_run(job_id=job.pk)  # the task's body, in this process
    page = client.get(reverse("annotation:study-import-job", args=[study.pk, job.pk])).content.decode()
    assert len(shown_problems(page, "job-problems")) == CAP
    assert f"{LINES} problems in all; {CAP} of {LINES} shown, {LINES - CAP} not shown." in page
    status = client.get(reverse("annotation:study-import-job-status", args=[study.pk, job.pk])).json()
    assert len(status["problems"]) == CAP
    assert (
        status["problems_summary"]
        == f"{LINES} problems in all; {CAP} of {LINES} shown, {LINES - CAP} not shown."
    )

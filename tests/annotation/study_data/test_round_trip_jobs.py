"""imports above ``DIALEVAL_IMPORT_INLINE_MAX_BYTES`` run in a Celery task, all or nothing, with a
progress bar. The task's body is called in this process here (the real worker: test_round_trip_worker.py);
the upload, the job row, the progress file and the periodic check are the real ones."""

from __future__ import annotations

import io
import json
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.importers import ImportFile
from annotation.models import Annotator, DialogContext, ImportJob, Rating, Response, StudyImport
from annotation.services.import_jobs import (
    IMPORT_LEASE,
    ImportJobReporter,
    import_job_run,
    import_job_status,
    import_jobs_recover,
)
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from annotation.tasks import import_job_run_task
from kernel.lease import Lease
from tests.api.work_api_support import client_for

pytestmark = pytest.mark.django_db
INLINE_LIMIT = 2_000


@pytest.fixture(autouse=True)
def job_settings(settings: Any, tmp_path: Path) -> Path:
    settings.DIALEVAL_IMPORT_INLINE_MAX_BYTES = INLINE_LIMIT
    settings.DIALEVAL_IMPORT_DIR = tmp_path / "imports"
    settings.DIALEVAL_IMPORT_STALE_SECONDS = 60
    settings.DIALEVAL_IMPORT_MAX_ATTEMPTS = 3
    return settings.DIALEVAL_IMPORT_DIR


def _lines(count: int, *, bad_line: int | None = None, prefix: str = "c") -> bytes:
    rows = []
    for index in range(count):
        row: dict[str, Any] = {
            "context_id": f"{prefix}{index}",
            "context": [f"question {prefix}{index} ?", "and then ?"],
            "response": f"answer {index} .",
            "system": "bot" if index % 2 else "other-bot",
            "references": [f"reference {index} ."],
            "ratings": {"appropriateness": [index % 3, (index + 1) % 3]},
            "annotators": ["ann", "bob"],
            "unexpected": 1,  # a warning, as an inline import gives it
        }
        if index == bad_line:
            row["ratings"] = {"appropriateness": [7, 1]}
        rows.append(json.dumps(row))
    return ("\n".join(rows) + "\n").encode("utf-8")


@pytest.fixture
def study(researcher):
    return study_create(owner=researcher, name="large imports")


def _upload(client, study, data: bytes, name: str = "big.jsonl") -> Any:
    upload = io.BytesIO(data)
    upload.name = name
    return client.post(
        reverse("annotation:study-import", args=[study.pk]), {"format": "jsonl", "files": [upload]}
    )


def test_a_large_upload_is_queued_and_the_task_imports_it_exactly_as_inline(
    client, study, researcher, job_settings
):
    data = _lines(40)
    assert len(data) > INLINE_LIMIT
    client.force_login(researcher)

    response = _upload(client, study, data)

    job = ImportJob.objects.get(study=study)
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:study-import-job", args=[study.pk, job.pk])
    assert job.status == "pending"
    assert job.filenames == ["big.jsonl"]
    assert (job_settings / job.folder / "file-00").read_bytes() == data
    assert not Response.objects.filter(context__study=study).exists()  # nothing imported in the request
    waiting = client.get(response["Location"]).content.decode()
    assert 'id="job-progress"' in waiting
    assert "waiting for a worker" in waiting

    import_job_run_task(job.pk)  # the task's body, in this process

    job.refresh_from_db()
    assert job.status == "succeeded"
    assert job.attempts == 1
    assert not (job_settings / job.folder).exists()  # the upload is removed once imported
    inline_study = study_create(owner=researcher, name="inline twin")
    inline = study_import(study=inline_study, format="jsonl", files=[ImportFile("big.jsonl", data)])
    assert job.result is not None
    assert job.result.counts == inline.counts
    assert job.result.warnings == inline.warnings
    assert job.result.tracked
    assert Rating.objects.filter(response__context__study=study).count() == 80
    page = client.get(response["Location"]).content.decode()
    assert "Imported big.jsonl: 40 new contexts, 40 new references, 2 new systems, 40 new responses" in page
    assert (
        "big.jsonl, line 1, field &quot;unexpected&quot;: unknown key, ignored (this and later lines)" in page
    )
    status = client.get(reverse("annotation:study-import-job-status", args=[study.pk, job.pk])).json()
    assert status["finished"] is True
    assert status["status"] == "succeeded"
    assert status["import_id"] == job.result.pk
    # A second delivery of the message finds the job done and imports nothing again.
    assert import_job_run(job_id=job.pk) is None
    assert Response.objects.filter(context__study=study).count() == 40


def test_a_small_upload_is_still_imported_in_the_request(client, study, researcher):
    client.force_login(researcher)
    response = _upload(client, study, _lines(3), name="small.jsonl")
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:study-detail", args=[study.pk])
    assert not ImportJob.objects.exists()
    assert Response.objects.filter(context__study=study).count() == 3


def test_a_rejected_large_import_changes_nothing_and_lists_every_problem(
    client, study, researcher, job_settings
):
    client.force_login(researcher)
    _upload(client, study, _lines(40, bad_line=12))
    job = ImportJob.objects.get(study=study)

    import_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == "failed"
    assert job.problems == [
        {
            "file": "big.jsonl",
            "line": 13,
            "field": "ratings.appropriateness[0]",
            "message": "7 is outside the study's scale 0-2",
        }
    ]
    assert not DialogContext.objects.filter(study=study).exists()
    assert not Annotator.objects.filter(study=study).exists()
    assert not StudyImport.objects.filter(study=study).exists()
    assert not (job_settings / job.folder).exists()
    page = client.get(reverse("annotation:study-import-job", args=[study.pk, job.pk])).content.decode()
    assert "The import was rejected and nothing was changed" in page
    assert (
        "big.jsonl, line 13, field &quot;ratings.appropriateness[0]&quot;: 7 is outside the study&#x27;s scale 0-2"
        in page
    )


def test_progress_counts_lines_read_then_rows_written(study):
    seen: list[tuple[str, int, int]] = []
    record = study_import(
        study=study,
        format="jsonl",
        files=[ImportFile("a.jsonl", _lines(30)), ImportFile("b.jsonl", _lines(5, prefix="d"))],
        progress=lambda stage, done, total: seen.append((stage, done, total)),
    )

    reading = [entry for entry in seen if entry[0] == "reading"]
    assert [done for _, done, _ in reading] == list(range(1, 36))  # b.jsonl's lines follow a.jsonl's
    assert {total for _, _, total in reading} == {35}
    assert ("checking", 0, 0) in seen
    writing = [entry for entry in seen if entry[0] == "writing"]
    rows = sum(value for key, value in record.counts.items() if key.endswith("_created"))
    assert writing[-1] == ("writing", rows, rows)
    assert [done for _, done, _ in writing] == sorted(done for _, done, _ in writing)
    assert [stage for stage, _, _ in seen].index("writing") > [stage for stage, _, _ in seen].index(
        "checking"
    )


def test_the_page_shows_the_row_while_reading_and_the_progress_file_while_writing(client, study, researcher):
    client.force_login(researcher)
    _upload(client, study, _lines(40))
    job = ImportJob.objects.get(study=study)
    ImportJob.objects.filter(pk=job.pk).update(status="running", attempts=1, heartbeat_at=timezone.now())
    job.refresh_from_db()
    status_url = reverse("annotation:study-import-job-status", args=[study.pk, job.pk])

    reporter = ImportJobReporter(job, Lease.of(IMPORT_LEASE, job))
    reporter("reading", 10, 40)
    status = client.get(status_url).json()
    assert (status["stage"], status["done"], status["total"], status["stage_words"]) == (
        "reading",
        10,
        40,
        "lines read",
    )
    reporter("writing", 120, 300)  # inside the import's transaction: the file, not the row
    job.refresh_from_db()
    assert job.stage == "reading"
    status = client.get(status_url).json()
    assert (status["stage"], status["done"], status["total"]) == ("writing", 120, 300)
    assert status["finished"] is False
    page = client.get(reverse("annotation:study-import-job", args=[study.pk, job.pk])).content.decode()
    assert 'value="120"' in page
    assert "120 of 300 rows written" in page


def test_the_periodic_check_retries_a_job_whose_worker_died_then_fails_it(
    client, study, researcher, job_settings
):
    client.force_login(researcher)
    _upload(client, study, _lines(40))
    job = ImportJob.objects.get(study=study)
    long_ago = timezone.now() - timedelta(seconds=300)
    ImportJob.objects.filter(pk=job.pk).update(status="running", attempts=1, heartbeat_at=long_ago)

    import_jobs_recover()  # the worker died mid-import: the job goes back to the queue

    job.refresh_from_db()
    assert job.status == "pending"
    assert not Response.objects.filter(context__study=study).exists()
    import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("succeeded", 2)
    assert Response.objects.filter(context__study=study).count() == 40

    _upload(client, study, _lines(40, prefix="e"), name="again.jsonl")
    dying = ImportJob.objects.get(study=study, filenames=["again.jsonl"])
    ImportJob.objects.filter(pk=dying.pk).update(status="running", attempts=3, heartbeat_at=long_ago)
    report = import_jobs_recover()
    dying.refresh_from_db()
    assert report.failed == [dying.pk]
    assert dying.status == "failed"
    assert dying.error == "the worker stopped 3 times during this import; nothing was imported"
    assert not (job_settings / dying.folder).exists()
    assert Response.objects.filter(context__study=study).count() == 40


def test_a_job_writing_inside_its_transaction_is_not_taken_for_dead(client, study, researcher):
    client.force_login(researcher)
    _upload(client, study, _lines(40))
    job = ImportJob.objects.get(study=study)
    long_ago = timezone.now() - timedelta(seconds=300)
    ImportJob.objects.filter(pk=job.pk).update(status="running", attempts=1, heartbeat_at=long_ago)
    job.refresh_from_db()
    ImportJobReporter(job, Lease.of(IMPORT_LEASE, job))(
        "writing", 5, 100
    )  # a fresh progress file: the import is alive

    import_jobs_recover()

    job.refresh_from_db()
    assert job.status == "running"
    assert job.attempts == 1


def test_the_api_queues_a_large_import_and_reports_the_job(study, researcher):
    api = client_for(researcher)
    upload = io.BytesIO(_lines(40))
    upload.name = "api.jsonl"
    queued = api.post(
        f"/api/studies/{study.pk}/imports/", {"format": "jsonl", "files": [upload]}, format="multipart"
    )
    assert queued.status_code == 202
    body = queued.json()
    assert body["status"] == "pending"
    assert body["url"].endswith(f"/api/studies/{study.pk}/import-jobs/{body['id']}/")

    import_job_run(job_id=body["id"])

    done = api.get(f"/api/studies/{study.pk}/import-jobs/{body['id']}/").json()
    assert done["status"] == "succeeded"
    assert done["summary"].startswith("40 new contexts")
    assert (
        api.get(f"/api/studies/{study.pk}/imports/{done['import_id']}/").json()["counts"]["responses_created"]
        == 40
    )
    small = io.BytesIO(_lines(2, prefix="s"))
    small.name = "small.jsonl"
    inline = api.post(
        f"/api/studies/{study.pk}/imports/", {"format": "jsonl", "files": [small]}, format="multipart"
    )
    assert inline.status_code == 201
    assert inline.json()["counts"]["responses_created"] == 2


def test_import_job_status_of_a_missing_upload_fails_the_job_with_the_reason(
    client, study, researcher, job_settings
):
    client.force_login(researcher)
    _upload(client, study, _lines(40))
    job = ImportJob.objects.get(study=study)
    for stored in (job_settings / job.folder).iterdir():
        stored.unlink()

    import_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == "failed"
    assert "the uploaded files are no longer on the server" in job.error
    assert import_job_status(job=job).status == "failed"


def test_other_researchers_get_404_for_a_job(client, study, researcher):
    from tests.factories import ResearcherFactory

    client.force_login(researcher)
    _upload(client, study, _lines(40))
    job = ImportJob.objects.get(study=study)
    client.force_login(ResearcherFactory.create(username="mallory"))
    assert client.get(reverse("annotation:study-import-job", args=[study.pk, job.pk])).status_code == 404
    assert (
        client.get(reverse("annotation:study-import-job-status", args=[study.pk, job.pk])).status_code == 404
    )


def test_the_periodic_check_removes_saved_uploads_no_job_needs(client, study, researcher, job_settings):
    client.force_login(researcher)
    _upload(client, study, _lines(40))
    waiting = ImportJob.objects.get(study=study)
    orphan = job_settings / "0123456789abcdef"  # e.g. a job whose study was deleted with it
    orphan.mkdir()
    (orphan / "file-00").write_bytes(b"{}\n")
    fresh = job_settings / "fedcba9876543210"  # a request may be saving this one right now
    fresh.mkdir()
    hours_ago = time.time() - 2 * 3600
    for folder in (orphan, job_settings / waiting.folder):
        os.utime(folder, (hours_ago, hours_ago))

    report = import_jobs_recover()

    assert report.notes == ["removed the upload folder 0123456789abcdef"]
    assert not orphan.exists()
    assert fresh.exists()
    assert (job_settings / waiting.folder / "file-00").exists()  # the pending job still needs its upload

"""Correlation reports through a real Redis broker and a real Celery worker process (no eager mode, no mocks).

The inline limits are 0 here, so every report is too large for the request and goes to the worker
(correlation/report/cache.py): the page shows "Computing the report…" or the previous report marked as
updating, and status.json says when the worker is done. The reproducibility bundle is built by the same
worker and checked by running its own recompute.py.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.db import connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Study
from correlation.models import ReportBundle, ReportSnapshot, SnapshotStatus
from correlation.report.cache import snapshot_key, study_version
from stats.report.types import ReportOptions
from tests.correlation.builders import Item, add_items, signature
from tests.factories import QuestionFactory, StudyFactory
from tests.live_services import CeleryWorkerProcess, celery_broker, free_port
from tests.waiting import WAITS_ON_PROGRESS, wait_until

pytestmark = [pytest.mark.integration, WAITS_ON_PROGRESS]

POLL_SECONDS = 0.2
BLEU = "bleu-2|refs:single|tok:13a|version:test"
METEOR = "meteor|refs:single|tok:13a|version:test"
# (system, ratings of rater-0..2, BLEU-2, METEOR)
FIRST_ITEMS = [
    ("hred", (2, 2, 1), 0.40, 0.30),
    ("hred", (1, 0, 1), 0.12, 0.22),
    ("human", (2, 1, 2), 0.35, 0.41),
    ("human", (2, 2, 2), 0.52, 0.38),
    ("retrieval", (0, 0, 1), 0.03, 0.10),
    ("retrieval", (0, 1, 0), 0.09, 0.07),
    ("seq2seq", (1, 1, 2), 0.21, 0.16),
    ("seq2seq", (0, 1, 0), 0.02, 0.12),
]
MORE_ITEMS = [
    ("hred", (2, 1, 2), 0.31, 0.27),
    ("human", (0, 0, 0), 0.05, 0.04),
    ("retrieval", (1, 2, 1), 0.26, 0.33),
    ("seq2seq", (2, 2, 2), 0.47, 0.36),
]


@pytest.fixture
def queued_reports(settings: Any) -> None:
    """Every report is too large for the request: the worker computes it."""
    settings.DIALEVAL_REPORT_INLINE_MAX_CELLS = 0
    settings.DIALEVAL_REPORT_INLINE_MAX_PAIRS = 0


@pytest.fixture
def study(celery_worker_process: CeleryWorkerProcess) -> Study:
    """A rated and scored study (8 replies, 3 raters, 2 metrics), committed so the worker sees it."""
    study = StudyFactory.create(name="worker pilot")
    QuestionFactory.create(study=study, name="appropriateness")
    signature("bleu-2")
    signature("meteor")
    add_rows(study, FIRST_ITEMS, start=0)
    return study


def add_rows(study: Study, rows: Sequence[tuple[str, tuple[int, ...], float, float]], *, start: int) -> None:
    """Rated and scored replies; bumps the study's data version (as every service that writes them does)."""
    add_items(
        study=study,
        question=study.questions.get(),
        items=[
            Item(system, ratings=ratings, scores={BLEU: bleu, METEOR: meteor}, text=f"reply {start + i}")
            for i, (system, ratings, bleu, meteor) in enumerate(rows)
        ],
    )


@pytest.fixture
def owner_client(client: Client, study: Study) -> Client:
    client.force_login(study.owner)
    return client


def page_url(study: Study) -> str:
    return reverse("correlation:study-report", args=[study.pk])


def status_url(study: Study) -> str:
    return reverse("correlation:study-report-status", args=[study.pk])


def bundle_url(study: Study) -> str:
    return reverse("correlation:study-report-bundle", args=[study.pk])


def wait_for_status(
    client: Client,
    study: Study,
    done: Callable[[dict[str, Any]], bool],
    worker: CeleryWorkerProcess,
    *,
    seen: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Poll status.json, as the page does, until ``done``; every answer is appended to ``seen``. Waits for
    as long as the build moves (its progress and stage, the report's and bundle's rows with their heartbeats,
    the worker's log and CPU time) and the worker lives."""
    answers: list[dict[str, Any]] = []

    def finished() -> dict[str, Any] | None:
        response = client.get(status_url(study))
        assert response.status_code == 200
        status: dict[str, Any] = response.json()
        answers.append(status)
        if seen is not None:
            seen.append(status)
        return status if done(status) else None

    def progress() -> tuple[object, ...]:
        snapshots = ReportSnapshot.objects.filter(study=study).order_by("pk")
        bundles = ReportBundle.objects.filter(snapshot__study=study).order_by("pk")
        return (
            answers[-1] if answers else None,
            tuple(snapshots.values_list("status", "stage", "attempts", "progress_done", "heartbeat_at")),
            tuple(bundles.values_list("status", "stage", "heartbeat_at")),
            worker.log_size(),
            worker.cpu_ticks(),
        )

    status = wait_until(
        finished,
        what=f"status.json of study {study.pk} to say the work is done",
        progress=progress,
        alive=worker.is_alive,
        poll=POLL_SECONDS,
        details=lambda: f"status.json last said {answers[-1] if answers else None}\n{worker.log()}",
    )
    assert status is not None
    return status


def snapshot_rows(study: Study) -> list[tuple[int, str, int]]:
    return list(
        ReportSnapshot.objects.filter(study=study)
        .order_by("data_version")
        .values_list("data_version", "status", "attempts")
    )


def table_rows(page: Any) -> list[tuple[str, int]]:
    return [(row["metric"], row["n"]) for row in page.context["report"]["rows"]]


def worker_log_from(worker: CeleryWorkerProcess) -> Callable[[], str]:
    """What the worker logs from now on."""
    start = worker.log_path.stat().st_size

    def since() -> str:
        return worker.log_path.read_bytes()[start:].decode(errors="replace")

    return since


def report_tasks_received(log: str) -> int:
    return sum(1 for line in log.splitlines() if "correlation.build_report[" in line and "received" in line)


def queued_messages(url: str) -> int:
    """Messages waiting in the "cpu" queue of the broker at ``url`` (kombu keeps a queue as a Redis list)."""
    client = redis.Redis.from_url(url)
    try:
        return sum(
            int(client.llen(key)) for key in client.scan_iter(match="cpu*") if client.type(key) == b"list"
        )
    finally:
        client.close()


@pytest.fixture
def unconsumed_broker(celery_worker_process: CeleryWorkerProcess) -> Iterator[str]:
    """This process publishes to another database of the test Redis, which no worker reads."""
    url = celery_worker_process.redis_url.rsplit("/", 1)[0] + "/1"
    client = redis.Redis.from_url(url)
    client.flushdb()
    try:
        with celery_broker(url):
            yield url
    finally:
        client.flushdb()
        client.close()


def test_a_large_report_is_built_by_the_worker_and_rebuilt_when_the_data_change(
    owner_client: Client, study: Study, celery_worker_process: CeleryWorkerProcess, queued_reports: None
) -> None:
    first = study_version(study=study)

    page = owner_client.get(page_url(study))

    html = page.content.decode()
    assert page.status_code == 200
    assert "Computing the report…" in html
    assert '<progress id="report-progress"' in html
    assert 'id="utterance-table"' not in html
    assert page.context["view"].current.data_version == first

    status = wait_for_status(owner_client, study, lambda s: s["fresh"], celery_worker_process)
    assert status["data_version"] == status["shown_version"] == first
    assert (status["status"], status["progress"], status["error"]) == ("ready", 100, "")
    assert snapshot_rows(study) == [(first, SnapshotStatus.READY, 1)]
    page = owner_client.get(page_url(study))
    html = page.content.decode()
    assert 'id="utterance-table"' in html
    assert 'id="report-updating"' not in html
    assert f"Data version {first}." in html
    assert table_rows(page) == [("bleu-2", 8), ("meteor", 8)]
    old = page.context["view"].shown

    add_rows(study, MORE_ITEMS, start=len(FIRST_ITEMS))  # ratings and scores arrive: a new data version
    second = study_version(study=study)
    assert second > first

    page = owner_client.get(page_url(study))

    html = page.content.decode()
    assert f"The data changed since this report (version {first}, now {second})" in html
    assert 'id="utterance-table"' in html  # the previous report stays on screen meanwhile
    assert f'data-version="{first}" data-fresh="0"' in html
    assert table_rows(page) == [("bleu-2", 8), ("meteor", 8)]
    view = page.context["view"]
    assert view.shown.pk == old.pk
    assert (view.current.data_version, view.current.status) in {
        (second, SnapshotStatus.PENDING),
        (second, SnapshotStatus.RUNNING),
    }
    seen: list[dict[str, Any]] = []
    status = wait_for_status(owner_client, study, lambda s: s["fresh"], celery_worker_process, seen=seen)
    for before in seen[:-1]:  # until the new report is ready, the old one is what the page shows
        assert (before["data_version"], before["shown_version"], before["fresh"]) == (second, first, False)
    assert status["data_version"] == status["shown_version"] == second
    # One snapshot per version; the old one is gone once the new one is ready.
    assert snapshot_rows(study) == [(second, SnapshotStatus.READY, 1)]
    assert not ReportSnapshot.objects.filter(pk=old.pk).exists()
    page = owner_client.get(page_url(study))
    html = page.content.decode()
    assert 'id="report-updating"' not in html
    assert f"Data version {second}." in html
    assert table_rows(page) == [("bleu-2", 12), ("meteor", 12)]


def test_two_requests_at_once_make_one_snapshot_and_one_computation(
    study: Study, celery_worker_process: CeleryWorkerProcess, queued_reports: None
) -> None:
    clients = [Client(), Client()]
    for client in clients:
        client.force_login(study.owner)
    start = threading.Barrier(len(clients))
    pages: list[Any] = [None] * len(clients)
    errors: list[BaseException] = []
    log = worker_log_from(celery_worker_process)

    def open_report(index: int) -> None:
        try:
            start.wait(timeout=10)
            pages[index] = clients[index].get(page_url(study))
        except BaseException as error:  # handed to the test's thread, below
            errors.append(error)
        finally:
            connections.close_all()  # this thread's database connection

    threads = [threading.Thread(target=open_report, args=(index,)) for index in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not errors, errors
    assert [page.status_code for page in pages] == [200, 200]
    assert len({page.context["view"].current.pk for page in pages}) == 1
    wait_for_status(clients[0], study, lambda s: s["fresh"], celery_worker_process)
    version = study_version(study=study)
    assert snapshot_rows(study) == [(version, SnapshotStatus.READY, 1)]  # claimed and computed once
    time.sleep(0.5)  # a second message, had there been one, reaches the idle worker by now
    assert report_tasks_received(log()) == 1, log()
    assert queued_messages(celery_worker_process.redis_url) == 0


def test_a_report_whose_worker_died_is_queued_again_by_the_next_view(
    owner_client: Client, study: Study, celery_worker_process: CeleryWorkerProcess, queued_reports: None
) -> None:
    """What a worker killed mid-report leaves behind: the snapshot RUNNING, its heartbeat stopped, and its
    message unacknowledged in the dead worker's hands (acks_late; Redis hands it out again only after the
    visibility timeout, hours later). The page must queue it again, and only once the heartbeat is stale."""
    version = study_version(study=study)
    snapshot = ReportSnapshot.objects.create(
        study=study,
        options_key=snapshot_key(ReportOptions()),
        data_version=version,
        status=SnapshotStatus.RUNNING,
        attempts=1,
        stage="statistics",
        progress_done=3,
        progress_total=10,
        heartbeat_at=timezone.now(),
    )
    log = worker_log_from(celery_worker_process)

    page = owner_client.get(page_url(study))  # the worker is alive as far as anyone can tell

    assert "Computing the report…" in page.content.decode()
    time.sleep(1.0)  # the point: time for a second message, had the page sent one, to reach the idle worker
    assert report_tasks_received(log()) == 0, "a report with a live heartbeat was queued a second time"
    snapshot.refresh_from_db()
    assert (snapshot.status, snapshot.attempts) == (SnapshotStatus.RUNNING, 1)

    ReportSnapshot.objects.filter(pk=snapshot.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    page = owner_client.get(page_url(study))  # now it is not

    assert page.status_code == 200
    assert "Computing the report…" in page.content.decode()
    status = wait_for_status(owner_client, study, lambda s: s["fresh"], celery_worker_process)
    assert status["shown_version"] == version
    assert snapshot_rows(study) == [(version, SnapshotStatus.READY, 2)]  # taken over, not a second row
    assert report_tasks_received(log()) == 1
    page = owner_client.get(page_url(study))
    assert table_rows(page) == [("bleu-2", 8), ("meteor", 8)]


def test_a_report_whose_worker_died_is_queued_once_not_at_every_poll(
    owner_client: Client,
    study: Study,
    celery_worker_process: CeleryWorkerProcess,
    unconsumed_broker: str,
    queued_reports: None,
    settings: Any,
) -> None:
    """While no worker has picked the report up again (all busy with a long scoring run, say), the page's
    polls must not pile up one message each; after a stale period without a worker it is queued again."""
    version = study_version(study=study)
    ReportSnapshot.objects.create(
        study=study,
        options_key=snapshot_key(ReportOptions()),
        data_version=version,
        status=SnapshotStatus.RUNNING,
        attempts=1,
        heartbeat_at=timezone.now() - timedelta(hours=1),
    )

    for _ in range(3):
        assert owner_client.get(status_url(study)).status_code == 200

    assert queued_messages(unconsumed_broker) == 1
    settings.DIALEVAL_REPORT_STALE_SECONDS = 1  # in seconds rather than minutes
    time.sleep(1.2)
    with celery_broker(celery_worker_process.redis_url):  # a worker is there again
        assert owner_client.get(status_url(study)).status_code == 200  # queued again: stale once more
        settings.DIALEVAL_REPORT_STALE_SECONDS = 120  # the worker's, so its heartbeats keep it alive
        status = wait_for_status(owner_client, study, lambda s: s["fresh"], celery_worker_process)
    assert status["shown_version"] == version
    assert snapshot_rows(study) == [(version, SnapshotStatus.READY, 2)]


def test_without_a_broker_the_page_answers_and_a_later_view_queues_the_report(
    owner_client: Client, study: Study, celery_worker_process: CeleryWorkerProcess, queued_reports: None
) -> None:
    version = study_version(study=study)
    closed = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there

    with celery_broker(closed):
        page = owner_client.get(page_url(study))
        status = owner_client.get(status_url(study))

    assert page.status_code == 200
    assert "Computing the report…" in page.content.decode()
    assert status.status_code == 200
    assert status.json()["fresh"] is False
    assert "no worker could be reached" in status.json()["error"]
    assert snapshot_rows(study) == [(version, SnapshotStatus.PENDING, 0)]

    # Redis is back: the next poll queues the report and the worker computes it.
    status_json = wait_for_status(owner_client, study, lambda s: s["fresh"], celery_worker_process)

    assert (status_json["shown_version"], status_json["error"]) == (version, "")
    assert snapshot_rows(study) == [(version, SnapshotStatus.READY, 1)]
    page = owner_client.get(page_url(study))
    assert table_rows(page) == [("bleu-2", 8), ("meteor", 8)]


def test_the_bundle_is_built_by_the_worker_and_recomputes_its_own_rows(
    owner_client: Client,
    study: Study,
    celery_worker_process: CeleryWorkerProcess,
    queued_reports: None,
    tmp_path: Path,
) -> None:
    owner_client.get(page_url(study))
    wait_for_status(owner_client, study, lambda s: s["fresh"], celery_worker_process)
    version = study_version(study=study)

    requested = owner_client.post(bundle_url(study))

    assert requested.status_code == 302
    assert requested["Location"].endswith("#tab-downloads")
    assert ReportBundle.objects.filter(snapshot__study=study).count() == 1
    status = wait_for_status(
        owner_client,
        study,
        lambda s: s["bundle"] is not None and s["bundle"]["status"] in ("ready", "failed"),
        celery_worker_process,
    )
    assert status["bundle"]["status"] == "ready", f"{status['bundle']}\n{celery_worker_process.log()}"
    download = owner_client.get(bundle_url(study))
    assert download.status_code == 200
    assert download["Content-Type"] == "application/zip"
    assert f'filename="study-{study.pk}-report-v{version}.zip"' in download["Content-Disposition"]
    assert status["bundle"]["size"] == len(download.content)

    archive = zipfile.ZipFile(io.BytesIO(download.content))
    names = set(archive.namelist())
    for name in (
        "report.json",
        "tables.tex",
        "inputs/human_scores.csv",
        "inputs/metric_scores.csv",
        "inputs/ratings.csv",
        "manifest.json",
        "README.txt",
        "recompute.py",
    ):
        assert name in names
    assert any(name.startswith("tables/") and name.endswith(".csv") for name in names)
    pngs = [name for name in names if name.startswith("figures/") and name.endswith(".png")]
    svgs = [name for name in names if name.startswith("figures/") and name.endswith(".svg")]
    assert pngs
    assert len(pngs) == len(svgs)
    assert all(archive.read(name).startswith(b"\x89PNG\r\n\x1a\n") for name in pngs)
    assert all(b"<svg" in archive.read(name)[:2000] for name in svgs)
    manifest = json.loads(archive.read("manifest.json"))
    assert (manifest["study_id"], manifest["data_version"]) == (study.pk, version)
    assert set(manifest["files"]) == names - {"manifest.json", "README.txt"}
    for name, digest in manifest["files"].items():
        assert hashlib.sha256(archive.read(name)).hexdigest() == digest, name
    report = json.loads(archive.read("report.json"))
    assert report["data_version"] == version
    assert [(row["metric"], row["n"]) for row in report["rows"]] == [("bleu-2", 8), ("meteor", 8)]
    assert "\\toprule" in archive.read("tables.tex").decode()

    archive.extractall(tmp_path)
    checked = recompute(tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert " 0 disagree" in checked.stdout

    scores = tmp_path / "inputs" / "metric_scores.csv"
    rows = list(csv.reader(io.StringIO(scores.read_text(encoding="utf-8"))))
    assert rows[0] == ["signature", "response_id", "value", "excluded", "implementation"]
    rows[1][2] = repr(float(rows[1][2]) + 0.5)  # one metric value is not what the report used
    with scores.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    corrupted = recompute(tmp_path)
    assert corrupted.returncode == 1, corrupted.stdout + corrupted.stderr
    assert "DIFF" in corrupted.stdout
    assert " 0 disagree" not in corrupted.stdout


def recompute(folder: Path) -> subprocess.CompletedProcess[str]:
    """The bundle's own check, run the way a reader of the paper would: a separate Python, no Django."""
    return subprocess.run(
        [sys.executable, "recompute.py", "--quiet"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

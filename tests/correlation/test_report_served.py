"""The API and the downloads never compute a report in the request (correlation/report/served.py): 202 with
the progress and where to ask again while a worker builds it, the newest older report on ``?stale=ok``, 503
when the build failed (queued again), and 200 with the data version once it is ready."""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from correlation.models import ReportSnapshot, SnapshotStatus
from correlation.report import cache
from correlation.report.cache import REPORT_TASK, report_snapshot_build
from kernel.data_version import study_data_changed, study_data_version
from tests.correlation.builders import Item, add_items, signature
from tests.correlation.report_helpers import assert_same_numbers, report_document
from tests.factories import QuestionFactory, StudyFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(researcher):
    study = StudyFactory.create(owner=researcher)
    question = QuestionFactory.create(study=study, name="appropriateness")
    bleu = signature("bleu-2", refs="multi")
    add_items(
        study=study,
        question=question,
        items=[
            Item(f"sys{i % 3}", ratings=[i % 3, (i // 2) % 3], scores={bleu.text: (i * 7 % 10) / 10})
            for i in range(9)
        ],
    )
    return study


@pytest.fixture
def published(monkeypatch) -> list[tuple[str, list[Any]]]:
    """What the views send to the broker (the broker's edge: Redis is not what these tests test)."""
    sent: list[tuple[str, list[Any]]] = []

    def publish(name: str, *, args: Any = (), **_: Any) -> bool:
        sent.append((name, list(args)))
        return True

    monkeypatch.setattr(cache, "task_publish", publish)
    return sent


@pytest.fixture
def never_computed_here(monkeypatch) -> None:
    """Computing a report in the web process fails the test (the worker's build is called directly)."""

    def refuse(*_: Any) -> None:
        raise AssertionError("a report was computed in the request")

    monkeypatch.setattr(cache, "_compute", refuse)


def _api(study) -> tuple[APIClient, str]:
    client = APIClient()
    client.force_login(study.owner)
    return client, reverse("api-study-correlations", args=[study.pk])


def _worker_builds(study, monkeypatch) -> None:
    """What the worker's task does with every snapshot queued for ``study``."""
    monkeypatch.undo()  # the real _compute, for the worker
    for pk in ReportSnapshot.objects.filter(study=study, status=SnapshotStatus.PENDING).values_list(
        "pk", flat=True
    ):
        report_snapshot_build(snapshot_id=pk)


def test_a_report_not_ready_is_queued_and_answered_202(
    study, published, never_computed_here, django_capture_on_commit_callbacks
) -> None:
    client, url = _api(study)
    with django_capture_on_commit_callbacks(execute=True):
        first = client.get(url, {"resamples": "0"})
    assert first.status_code == 202
    body = first.json()
    assert body["status"] == SnapshotStatus.PENDING
    assert body["progress"] == 0
    assert body["data_version"] == study_data_version(study_id=study.pk)
    assert body["stale_available"] is False
    assert first["Location"] == body["location"] == f"{url}?resamples=0"
    assert int(first["Retry-After"]) > 0
    [snapshot] = ReportSnapshot.objects.filter(study=study)
    assert snapshot.status == SnapshotStatus.PENDING
    assert published == [(REPORT_TASK, [snapshot.pk])]

    with django_capture_on_commit_callbacks(execute=True):
        again = client.get(url, {"resamples": "0"})
    assert again.status_code == 202
    assert published == [(REPORT_TASK, [snapshot.pk])], "asking again queued the same build once more"


def test_once_built_it_is_served_with_its_data_version(study, published, monkeypatch) -> None:
    client, url = _api(study)
    assert client.get(url, {"resamples": "200"}).status_code == 202
    _worker_builds(study, monkeypatch)
    ready = client.get(url, {"resamples": "200"})
    assert ready.status_code == 200
    assert ready["X-Report-Data-Version"] == str(study_data_version(study_id=study.pk))
    assert "X-Report-Stale" not in ready
    assert_same_numbers(json.loads(ready.content)["rows"], report_document(study, resamples=200)["rows"])


def test_after_a_change_the_older_report_only_when_asked_for(
    study, published, monkeypatch, committed
) -> None:
    client, url = _api(study)
    client.get(url, {"resamples": "0"})
    _worker_builds(study, monkeypatch)
    old_version = study_data_version(study_id=study.pk)
    old_rows = client.get(url, {"resamples": "0"}).json()["rows"]
    with committed():
        study_data_changed(study_id=study.pk)

    pending = client.get(url, {"resamples": "0"})
    assert pending.status_code == 202
    assert pending.json()["stale_available"] is True
    stale = client.get(url, {"resamples": "0", "stale": "ok"})
    assert stale.status_code == 200
    assert stale["X-Report-Stale"] == "true"
    assert stale["X-Report-Data-Version"] == str(old_version)
    assert stale["X-Study-Data-Version"] == str(old_version + 1)
    assert stale.json()["rows"] == old_rows


def test_a_failed_build_answers_503_and_is_queued_again(
    study, published, never_computed_here, committed
) -> None:
    client, url = _api(study)
    client.get(url, {"resamples": "0"})
    snapshot = ReportSnapshot.objects.get(study=study)
    ReportSnapshot.objects.filter(pk=snapshot.pk).update(
        status=SnapshotStatus.FAILED, error="MemoryError: out of memory", attempts=3
    )
    published.clear()
    with committed():
        failed = client.get(url, {"resamples": "0"})
    assert failed.status_code == 503
    assert "MemoryError: out of memory" in failed.json()["detail"]
    assert failed.json()["status"] == "failed"
    assert int(failed["Retry-After"]) > 0
    again = ReportSnapshot.objects.get(study=study)  # a new row: the failed build's attempts cannot reach it
    assert again.pk != snapshot.pk
    assert (again.status, again.attempts, again.error) == (SnapshotStatus.PENDING, 0, "")
    assert published == [(REPORT_TASK, [again.pk])]


def test_a_build_whose_worker_went_silent_is_queued_again(
    study, published, never_computed_here, committed
) -> None:
    client, url = _api(study)
    client.get(url, {"resamples": "0"})
    long_ago = timezone.now() - timedelta(hours=1)
    ReportSnapshot.objects.filter(study=study).update(status=SnapshotStatus.RUNNING, heartbeat_at=long_ago)
    published.clear()
    with committed():
        assert client.get(url, {"resamples": "0"}).status_code == 202
    assert [name for name, _ in published] == [REPORT_TASK]


def test_a_small_study_the_page_left_to_its_own_request_goes_to_a_worker(
    study, published, never_computed_here, django_capture_on_commit_callbacks
) -> None:
    """The page of a small study creates its snapshot and leaves it to its own POST; a client of the API
    that finds it so has it queued for a worker (once)."""
    client, url = _api(study)
    page = Client()
    page.force_login(study.owner)
    assert page.get(reverse("correlation:study-report", args=[study.pk])).status_code == 200
    assert not published
    with django_capture_on_commit_callbacks(execute=True):
        assert client.get(url).status_code == 202
        assert client.get(url).status_code == 202
    assert len(published) == 1


@pytest.mark.parametrize(
    ("route", "args"),
    [
        ("correlation:study-report-csv", []),
        ("correlation:study-report-json", []),
        ("correlation:study-report-document", []),
        ("correlation:study-report-latex", []),
        ("correlation:study-report-table", ["correlations"]),
        ("correlation:figure-svg", ["quantiles"]),
    ],
)
def test_every_download_waits_for_the_worker_too(study, published, never_computed_here, route, args) -> None:
    client = Client()
    client.force_login(study.owner)
    answer = client.get(reverse(route, args=[study.pk, *args]))
    assert answer.status_code == 202
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["location"] == answer["Location"]


def test_a_bundle_asked_for_before_the_report_is_ready_waits(study, published, never_computed_here) -> None:
    client = Client()
    client.force_login(study.owner)
    answer = client.post(reverse("correlation:study-report-bundle", args=[study.pk]))
    assert answer.status_code == 202


def test_a_page_showing_an_older_report_downloads_what_it_shows(
    study, published, monkeypatch, committed
) -> None:
    client = Client()
    client.force_login(study.owner)
    page_url = reverse("correlation:study-report", args=[study.pk])
    client.get(page_url)
    _worker_builds(study, monkeypatch)
    shown = client.get(page_url).content.decode()
    assert "stale=ok" not in _document_link(shown)
    with committed():
        study_data_changed(study_id=study.pk)

    page = client.get(page_url).content.decode()
    assert 'id="downloads-stale"' in page
    assert 'id="bundle-later"' in page
    link = _document_link(page)
    assert "stale=ok" in link
    download = client.get(link)
    assert download.status_code == 200
    assert download["X-Report-Stale"] == "true"


def _document_link(page: str) -> str:
    found = re.search(r'id="download-document" href="([^"]+)"', page)
    assert found is not None, "no download link for the report document"
    return html.unescape(found.group(1))

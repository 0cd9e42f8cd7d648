"""Training a model from the study page in headless Chromium: the form starts a job on a real
Celery worker, the job page shows its progress and the plotly training curve live and ends "trained"; a
job that waits for a worker is cancelled with the page's Cancel button."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from scoring.models import StudyModelChoice, TrainingJob, TrainingStatus
from tests.browser_fixtures import log_in
from tests.live_services import CeleryWorkerProcess, RedisProcess, celery_broker, free_port
from tests.scoring.training_builders import topic_study, training_places, write_dailydialog

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def _start_training(page: Any, live_server: Any, study: Any, name: str) -> None:
    page.goto(f"{live_server.url}/studies/{study.pk}/")
    page.click("#training summary")
    page.select_option("#train-kind", "ruber")
    page.fill("#train-name", name)
    page.check("#training-form input[name=corpus_format][value=dailydialog]")
    page.fill("#train-epochs", "2")
    assert page.locator(".training-cells").is_hidden()  # BERT-RUBER's cells only for bert-ruber
    with page.expect_navigation():
        page.click("#training-form button[type=submit]")


def test_a_training_started_from_the_study_page_shows_progress_and_its_curve(
    page, live_server, transactional_db, researcher, tmp_path: Path, settings
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    places = training_places(tmp_path, settings)
    corpus = write_dailydialog(places.corpora / "dailydialog")
    study = topic_study(owner=researcher)
    redis = RedisProcess(tmp_path / "redis-dir")
    (tmp_path / "redis-dir").mkdir()
    redis.start()
    worker = CeleryWorkerProcess(
        redis_url=redis.url,
        database=dict(django_settings.DATABASES["default"]),
        log_path=tmp_path / "worker.log",
        extra_env={
            "DIALEVAL_MODEL_DIR": str(places.models),
            "DIALEVAL_CORPUS_ROOTS": str(places.corpora),
            "DIALEVAL_CORPUS_UPLOAD_DIR": str(places.uploads),
            "DIALEVAL_TORCH_THREADS": "1",
        },
    )
    settings.CELERY_BROKER_URL = redis.url
    try:
        worker.start()
        with celery_broker(redis.url):
            log_in(page, live_server, researcher)
            _start_training(page, live_server, study, "browser-ruber")
            job = TrainingJob.objects.get()
            assert page.url == f"{live_server.url}/scoring/training-jobs/{job.pk}/"
            assert job.corpus_path == str(corpus.resolve())
            page.wait_for_selector("#job-status.status-succeeded", timeout=180_000)
    except BaseException:
        print(worker.log())
        raise
    finally:
        worker.stop()
        redis.stop()
    job.refresh_from_db()
    assert job.status == TrainingStatus.SUCCEEDED, job.error
    # the curve drawn with plotly: a line per series, points per epoch
    page.wait_for_selector("#training-curve .main-svg")
    assert page.locator("#training-curve .scatterlayer .trace").count() == 2  # loss and validation accuracy
    assert page.locator("#job-progress").evaluate("bar => bar.value") == 1
    assert "validation accuracy" in page.locator("#job-figures").inner_text()
    assert page.locator("#job-model-name").inner_text() == "browser-ruber"
    assert page.locator("#job-cancel").count() == 0
    assert errors == []  # no script error on the way
    assert StudyModelChoice.objects.get(study=study, kind="ruber").trained_model == job.trained_model
    # the model list shows it, with its figures
    page.goto(f"{live_server.url}/scoring/models/")
    row = page.locator("#model-browser-ruber").inner_text()
    assert "ruber" in row
    assert str(job.trained_model.pairs) in row
    assert job.trained_model.content_hash[:12] in row


def test_a_job_waiting_for_a_worker_is_cancelled_from_its_page(
    page, live_server, transactional_db, researcher, tmp_path: Path, settings
) -> None:
    places = training_places(tmp_path, settings)
    write_dailydialog(places.corpora / "dailydialog")
    study = topic_study(owner=researcher)
    log_in(page, live_server, researcher)
    # No broker listens there (whatever another test left configured, or a worker it left running): it waits.
    with celery_broker(f"redis://127.0.0.1:{free_port()}/0"):
        _start_training(page, live_server, study, "never-trained")
    page.wait_for_selector("#job-status.status-pending")
    assert "not queued yet" in page.locator("#job-text").inner_text()
    page.wait_for_selector("#training-curve:has-text('after the first epoch')")
    with page.expect_navigation():
        page.click("#job-cancel button")
    page.wait_for_selector("#job-status.status-cancelled")
    assert page.locator(".messages li.success").inner_text().startswith("Training job")
    assert TrainingJob.objects.get().status == TrainingStatus.CANCELLED
    # back on the study page, the job's row says so and the form is ready for another
    page.goto(f"{live_server.url}/studies/{study.pk}/#training")
    assert "cancelled" in page.locator("tr.training-job").inner_text()

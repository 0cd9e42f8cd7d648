"""A training job's page once the job has ended, in headless Chromium: the flash "Training job N
queued" goes (it stayed after the job had finished), and the page says that early stopping ended the
training, which epoch was kept, and that its validation accuracy is near chance."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.utils import timezone

from scoring.models import TrainedModel, TrainingJob, TrainingStatus
from tests.browser_fixtures import log_in
from tests.live_services import celery_broker, free_port
from tests.scoring.training_builders import topic_study, training_places, write_dailydialog

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_job_page_drops_the_queued_flash_and_says_how_the_training_ended(
    page, live_server, researcher, tmp_path: Path, settings
) -> None:
    places = training_places(tmp_path, settings)
    write_dailydialog(places.corpora / "dailydialog")
    study = topic_study(owner=researcher)
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/studies/{study.pk}/")
    page.click("#training summary")
    page.select_option("#train-kind", "ruber")
    page.fill("#train-name", "chance-ruber")
    page.check("#training-form input[name=corpus_format][value=dailydialog]")
    with celery_broker(f"redis://127.0.0.1:{free_port()}/0"), page.expect_navigation():  # no worker: it waits
        page.click("#training-form button[type=submit]")
    assert page.locator(".messages li.job-queued").inner_text().startswith("Training job")

    # A worker trains it meanwhile: 4 of 10 epochs, early stopping keeps epoch 2, accuracy 0.51.
    curve = [
        {"epoch": n, "validation_accuracy": accuracy} for n, accuracy in enumerate((0.5, 0.51, 0.5, 0.505), 1)
    ]
    model = TrainedModel.objects.create(
        name="chance-ruber",
        kind="ruber",
        path=str(tmp_path / "chance-ruber"),
        content_hash="e" * 64,
        config={"epochs": 10, "best_epoch": 2},
        curve=curve,
    )
    TrainingJob.objects.filter(name="chance-ruber").update(
        status=TrainingStatus.SUCCEEDED,
        trained_model=model,
        finished_at=timezone.now(),
        curve=[{**point, "loss": 0.3} for point in curve],
    )
    page.wait_for_selector("#job-status.status-succeeded")
    assert page.locator(".messages li.job-queued").count() == 0
    text = page.locator("#job-text").inner_text()
    assert "stopped early after epoch 4 of 10" in text
    assert "kept epoch 2" in text
    assert "near chance" in text

    page.goto(f"{live_server.url}/scoring/models/")
    assert "near chance" in page.locator("#model-chance-ruber .accuracy").inner_text()
    assert page.locator("#model-chance-ruber .epochs").inner_text() == "4 (2)"

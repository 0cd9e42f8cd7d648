"""Scoring runs that wait for a model being trained: created PENDING with the job's live progress as
their status text, never sent while the job trains, sent (and scored with the new model's hash) once it
succeeds, failed naming the job when it fails or is cancelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel.lease import recovery_of
from scoring.models import MetricScore, RunStatus, ScoringRun, TrainingJob, TrainingStatus
from scoring.selectors import scoring_run_waiting_text
from scoring.services import (
    ScoringRequestError,
    scoring_run_create,
    scoring_run_execute,
    scoring_runs_recover,
)
from scoring.services.recovery import RUN_KIND
from scoring.services.runs import BROKER_DOWN_NOTE
from scoring.services.training_jobs import training_job_cancel, training_job_create
from scoring.tasks import training_job_run_task
from tests.scoring.training_builders import topic_study, training_places, write_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def places(tmp_path: Path, settings):
    return training_places(tmp_path, settings)


@pytest.fixture
def study(researcher):
    return topic_study(owner=researcher)


def start_job(researcher, places, *, study=None, name: str = "coming-ruber", **overrides) -> TrainingJob:
    arguments = {
        "user": researcher,
        "kind": "ruber",
        "name": name,
        "corpus_format": "generic",
        "corpus_path": str(write_pairs(places.corpora / f"{name}.jsonl")),
        "parameters": {"epochs": 2},
        "study": study,
        "enqueue": False,
    }
    arguments.update(overrides)
    return training_job_create(**arguments)


def test_without_a_model_or_a_job_the_run_is_refused_as_before(study) -> None:
    with pytest.raises(ScoringRequestError, match="need a trained ruber model"):
        scoring_run_create(study=study, metrics=["ruber-unreferenced"])
    assert not ScoringRun.objects.exists()


def test_a_run_waits_for_the_job_then_starts_and_scores_with_its_model(
    researcher, places, study, committed
) -> None:
    job = start_job(researcher, places, study=study)
    run = scoring_run_create(study=study, metrics=["ruber-unreferenced", "bleu-2"], user=researcher)
    assert run.status == RunStatus.PENDING
    assert run.waiting_for == job
    assert run.trained_models == {"ruber": {"name": "coming-ruber", "training_job": job.pk}}
    assert scoring_run_waiting_text(run=run) == "waiting for model coming-ruber, waiting for a worker"

    # the job's progress is the run's status text, live
    TrainingJob.objects.filter(pk=job.pk).update(
        status=TrainingStatus.RUNNING, progress={"stage": "epoch", "epoch": 3, "epochs": 10}
    )
    run.refresh_from_db()
    assert scoring_run_waiting_text(run=run) == "waiting for model coming-ruber, epoch 3/10"
    # the same request again is the same waiting run
    again = scoring_run_create(study=study, metrics=["bleu-2", "ruber-unreferenced"])
    assert again.pk == run.pk
    assert again.was_existing
    # the periodic check never sends a run whose model is still training
    scoring_runs_recover(pending_grace_seconds=0)
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING
    assert run.enqueued_at is None
    assert run.notes == ""

    TrainingJob.objects.filter(pk=job.pk).update(status=TrainingStatus.PENDING, progress={})
    with committed():
        training_job_run_task(job.pk)
    job.refresh_from_db()
    assert job.status == TrainingStatus.SUCCEEDED, job.error
    run.refresh_from_db()
    model = job.trained_model
    assert model is not None
    assert run.trained_models["ruber"]["hash"] == model.content_hash
    assert run.trained_models["ruber"]["name"] == "coming-ruber"
    assert scoring_run_waiting_text(run=run) == ""
    assert run.notes == BROKER_DOWN_NOTE  # it was sent (the test has no broker): recovery resends it
    # the run's key is now the one of the same request with the new model: one run per request still
    same = scoring_run_create(study=study, metrics=["ruber-unreferenced", "bleu-2"])
    assert same.pk == run.pk
    assert same.was_existing

    finished = scoring_run_execute(run_id=run.pk)
    assert finished.status == RunStatus.SUCCEEDED, finished.error
    scores = MetricScore.objects.filter(response__context__study=study, signature__name="ruber-unreferenced")
    assert scores.count() == 12
    assert {score.signature.artifact_hash for score in scores} == {model.content_hash}


def test_a_run_naming_a_model_that_is_being_trained_waits_for_it(researcher, places, study) -> None:
    other_study = topic_study(owner=researcher, name="other")
    job = start_job(researcher, places, study=other_study, name="named-one")
    run = scoring_run_create(study=study, metrics=["ruber-unreferenced"], models=["named-one"])
    assert run.waiting_for == job
    # a job of another study that will not be the default is not waited for unless named
    with pytest.raises(ScoringRequestError, match="need a trained ruber model"):
        scoring_run_create(study=study, metrics=["vector-pool-unreferenced"])
    # a job that will be the default is
    default_job = start_job(researcher, places, name="next-default", make_default=True)
    waiting = scoring_run_create(study=study, metrics=["vector-pool-unreferenced"])
    assert waiting.waiting_for == default_job


def test_an_in_process_run_cannot_wait_and_says_which_job_to_wait_for(researcher, places, study) -> None:
    job = start_job(researcher, places, study=study)
    with pytest.raises(ScoringRequestError, match=f"still being trained \\(training job {job.pk}\\)"):
        scoring_run_create(study=study, metrics=["ruber-unreferenced"], enqueue=False)


def test_a_run_waiting_for_cells_the_job_will_not_train_is_refused(researcher, places, study) -> None:
    start_job(researcher, places, study=study, kind="bert-ruber", name="w2v-only",
              parameters={"cells": ["word2vec-max-ce"], "epochs": 1})  # fmt: skip
    with pytest.raises(ScoringRequestError, match="needs the cell bert-max-ce"):
        scoring_run_create(study=study, metrics=["bert-ruber-unreferenced"])
    run = scoring_run_create(study=study, metrics=["bert-ruber-unreferenced:word2vec-max-ce"])
    assert run.waiting_for is not None
    assert run.waiting_for.name == "w2v-only"


def test_a_failed_job_fails_the_waiting_run_naming_the_job(researcher, places, study) -> None:
    job = start_job(researcher, places, study=study)
    run = scoring_run_create(study=study, metrics=["ruber-unreferenced"])
    Path(job.corpus_path).write_text('{"query": "a", "reply": "b"}\n', encoding="utf-8")  # broken since
    training_job_run_task(job.pk)
    job.refresh_from_db()
    assert job.status == TrainingStatus.FAILED
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.error.startswith(
        f"the ruber model coming-ruber it waited for was not trained: training job {job.pk} failed"
    )
    assert "only 1 query-reply pair" in run.error


def test_a_cancelled_job_fails_the_waiting_run(researcher, places, study) -> None:
    job = start_job(researcher, places, study=study)
    run = scoring_run_create(study=study, metrics=["ruber-unreferenced"])
    assert training_job_cancel(job=job)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert f"training job {job.pk} cancelled" in run.error


def test_recovery_releases_a_run_whose_job_ended_without_sending_it(researcher, places, study) -> None:
    """The worker that finished the job died before it reconsidered the waiting runs: the periodic check
    does it."""
    job = start_job(researcher, places, study=study)
    run = scoring_run_create(study=study, metrics=["ruber-unreferenced"])
    TrainingJob.objects.filter(pk=job.pk).update(status=TrainingStatus.FAILED, error="out of memory")
    report = scoring_runs_recover(pending_grace_seconds=0)
    assert recovery_of(report, RUN_KIND).failed == [run.pk]  # its job failed: so does the run
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.error.endswith("failed: out of memory")


def test_the_api_and_page_show_the_waiting_text(researcher, places, study, client) -> None:
    job = start_job(researcher, places, study=study)
    run = scoring_run_create(study=study, metrics=["ruber-unreferenced"])
    client.force_login(researcher)
    data = client.get(f"/api/scoring-runs/{run.pk}/").json()
    assert data["waiting_for"] == job.pk
    assert data["waiting"] == "waiting for model coming-ruber, waiting for a worker"
    assert data["trained_models"] == {"ruber": {"name": "coming-ruber", "training_job": str(job.pk)}}
    page = client.get(f"/studies/{study.pk}/").content.decode()
    assert "waiting for model coming-ruber, waiting for a worker" in page

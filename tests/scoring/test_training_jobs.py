"""Training jobs on a real database: what creation refuses (naming the field, saving nothing), a
real RUBER trained through the Celery task's body on a small generated corpus, cancel, a job whose worker
died, and the figures the model list shows."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.utils import timezone

from kernel.lease import Lease, recovery_of
from scoring.metrics.training_progress import EPOCH_STAGE, TrainingCancelled, TrainingReport
from scoring.models import StudyModelChoice, TrainedModel, TrainingJob, TrainingStatus
from scoring.selectors import trained_model_figures, training_job_progress_text
from scoring.services import scoring_runs_recover
from scoring.services.training_jobs import (
    BROKER_DOWN_NOTE,
    TRAINING_LEASE,
    TrainingJobError,
    training_job_cancel,
    training_job_create,
    training_job_run,
    training_jobs_recover,
)
from scoring.tasks import training_job_run_task
from scoring.trained_model_services import TrainingRequest, trained_model_train, training_corpus_load
from tests.factories import ResearcherFactory
from tests.scoring.training_builders import topic_study, training_places, write_dailydialog, write_pairs
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def places(tmp_path: Path, settings):
    return training_places(tmp_path, settings)


@pytest.fixture
def corpus(places) -> Path:
    return write_pairs(places.corpora / "pairs.jsonl")


def create(user, corpus: Path, **overrides):
    arguments = {
        "user": user,
        "kind": "ruber",
        "name": "tiny-ruber",
        "corpus_format": "generic",
        "corpus_path": str(corpus),
        "parameters": {"epochs": 2},
        "enqueue": False,
    }
    arguments.update(overrides)
    return training_job_create(**arguments)


# --- creation refuses bad requests, naming the field, and saves nothing ------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"kind": "bleu"}, "kind", "unknown model kind 'bleu'"),
        ({"name": "no spaces please"}, "name", "letters, digits"),
        ({"corpus_format": "csv"}, "corpus_format", "unknown format 'csv'"),
        ({"parameters": {"epochs": 0}}, "epochs", "out of range"),
        ({"parameters": {"epochs": "ten"}}, "epochs", "not a whole number"),
        ({"parameters": {"max_pairs": 1}}, "max_pairs", "at least 2"),
        ({"parameters": {"learning_rate": 1}}, "learning_rate", "unknown parameter"),
        ({"parameters": {"cells": ["word2vec-max-ce"]}}, "cells", "BERT-RUBER's"),
        (
            {"kind": "bert-ruber", "parameters": {"cells": ["bert-huge-ce"]}},
            "cells",
            "unknown cell(s) bert-huge-ce",
        ),
        ({"kind": "maude", "parameters": {"variants": ["gpt"]}}, "variants", "unknown variant(s) gpt"),
        ({"corpus_path": "/etc/passwd"}, "corpus", "corpora are read from"),
        ({"corpus_path": ""}, "corpus", "give either a corpus on the server or a corpus file"),
    ],
)
def test_create_refuses_a_bad_request_naming_the_field(
    researcher, corpus: Path, overrides: dict, field: str, message: str
) -> None:
    with pytest.raises(TrainingJobError) as caught:
        create(researcher, corpus, **overrides)
    assert caught.value.field == field
    assert message in caught.value.message
    assert not TrainingJob.objects.exists()


def test_create_refuses_a_missing_corpus_and_a_bad_line_with_file_and_line(researcher, places) -> None:
    with pytest.raises(TrainingJobError, match="no such file or folder"):
        create(researcher, places.corpora / "missing.jsonl")
    bad = places.corpora / "bad.jsonl"
    bad.write_text('{"query": "hi", "reply": "hello"}\n{"query": "x"}\n', encoding="utf-8")
    with pytest.raises(TrainingJobError) as caught:
        create(researcher, bad)
    assert caught.value.field == "corpus"
    assert f"{bad}, line 2: lacks the key 'reply'" in caught.value.message
    assert not TrainingJob.objects.exists()


def test_create_refuses_a_name_taken_by_a_model_or_an_active_job(researcher, corpus: Path) -> None:
    TrainedModel.objects.create(name="taken", kind="ruber", path="/nowhere", content_hash="0" * 64)
    with pytest.raises(TrainingJobError, match="exists already"):
        create(researcher, corpus, name="taken")
    job = create(researcher, corpus, name="busy")
    with pytest.raises(TrainingJobError, match=f"training job {job.pk} is training a model named 'busy'"):
        create(researcher, corpus, name="busy")
    training_job_cancel(job=job)
    assert create(researcher, corpus, name="busy").status == TrainingStatus.PENDING  # free again


def test_an_upload_over_the_limit_is_refused_and_a_refused_upload_leaves_no_file(
    researcher, places, settings
) -> None:
    settings.DIALEVAL_MAX_UPLOAD_BYTES = 100
    big = SimpleUploadedFile("big.jsonl", b'{"query": "a", "reply": "b"}\n' * 10)
    with pytest.raises(TrainingJobError) as caught:
        create(researcher, Path(), corpus_path="", upload=big)
    assert caught.value.field == "corpus_file"
    assert "over the upload limit of 100 bytes" in caught.value.message
    settings.DIALEVAL_MAX_UPLOAD_BYTES = 10_000
    bad = SimpleUploadedFile("bad.jsonl", b'{"query": "a"}\n')
    with pytest.raises(TrainingJobError, match="line 1: lacks the key 'reply'") as caught:
        create(researcher, Path(), corpus_path="", upload=bad)
    assert caught.value.field == "corpus_file"
    assert not list(places.uploads.rglob("*.jsonl"))  # nothing kept of refused uploads


def test_an_uploaded_corpus_is_saved_under_the_upload_folder(researcher, places, corpus: Path) -> None:
    upload = SimpleUploadedFile("my pairs.jsonl", corpus.read_bytes())
    job = create(researcher, Path(), corpus_path="", upload=upload)
    saved = Path(job.corpus_path)
    assert saved.is_relative_to(places.uploads.resolve())
    assert saved.name == "my_pairs.jsonl"
    assert saved.read_bytes() == corpus.read_bytes()
    assert job.corpus.startswith("upload: my pairs.jsonl")
    assert job.corpus_format == "pairs-jsonl"


def test_bert_ruber_defaults_to_the_fast_cells_and_maude_to_its_default_variants(
    researcher, corpus: Path
) -> None:
    bert = create(researcher, corpus, kind="bert-ruber", name="b", parameters={})
    assert bert.parameters["cells"] == [
        "word2vec-max-ranking", "word2vec-max-ce", "word2vec-mean-ranking", "word2vec-mean-ce",
        "bert-max-ranking", "bert-max-ce", "bert-mean-ranking", "bert-mean-ce",
    ]  # fmt: skip
    maude = create(researcher, corpus, kind="maude", name="m", parameters={}, corpus_format="pairs-jsonl")
    assert maude.parameters["variants"] == ["maude", "bert-nli"]


def test_a_job_created_while_the_broker_is_down_stays_pending_and_says_so(
    researcher, corpus: Path, committed
) -> None:
    with committed():
        job = create(researcher, corpus, enqueue=True)
    job.refresh_from_db()
    assert job.status == TrainingStatus.PENDING
    assert job.progress["note"] == BROKER_DOWN_NOTE
    assert training_job_progress_text(job=job) == BROKER_DOWN_NOTE


# --- a real training through the task ----------------------------------------------------------------------


def test_the_task_trains_a_ruber_model_links_it_and_makes_it_the_study_model(researcher, places) -> None:
    corpus = write_dailydialog(places.corpora / "dd")
    study = topic_study(owner=researcher)
    job = create(researcher, corpus, corpus_format="dailydialog", study=study, parameters={"epochs": 2})
    assert job.corpus_path == str(corpus.resolve())

    training_job_run_task(job.pk)  # what the worker runs, here in this process

    job.refresh_from_db()
    assert job.status == TrainingStatus.SUCCEEDED, job.error
    assert job.attempts == 1
    model = job.trained_model
    assert model is not None
    assert model.name == "tiny-ruber"
    assert model.kind == "ruber"
    assert [point["epoch"] for point in job.curve] == list(range(1, len(job.curve) + 1))
    assert 1 <= len(job.curve) <= 2
    assert all(0.0 <= point["validation_accuracy"] <= 1.0 for point in job.curve)
    assert all(point["loss"] is not None for point in job.curve)
    assert StudyModelChoice.objects.get(study=study, kind="ruber").trained_model == model
    # the figures the model list shows, stored when registered
    train_pairs = training_corpus_load(kind="ruber", path=corpus, corpus_format="dailydialog").example_count
    assert model.pairs == train_pairs
    assert model.epochs == len(job.curve)
    best = max(point["validation_accuracy"] for point in job.curve)
    assert model.validation_accuracy == pytest.approx(best, abs=1e-6)  # the artifact's curve keeps 6 digits
    folder = Path(model.path)
    assert model.size_bytes == sum(item.stat().st_size for item in folder.rglob("*") if item.is_file())
    assert folder.is_relative_to(places.models)
    assert "validation" in model.corpus  # DailyDialog's own validation split
    assert not [item for item in (places.models / "ruber").iterdir() if item.name.startswith(".")]
    epochs = len(job.curve)
    text = training_job_progress_text(job=job)
    assert text.startswith(f"trained: {epochs} epoch") or text.startswith(
        f"trained: stopped early after epoch {epochs}"
    )
    assert f"validation accuracy {model.validation_accuracy:.3f}" in text
    # a second message for the same job finds nothing to do
    assert training_job_run(job_id=job.pk) is False


def test_a_failing_training_stores_a_clear_error_and_leaves_no_artifact(researcher, places, corpus) -> None:
    job = create(researcher, corpus)
    corpus.write_text('{"query": "only one", "reply": "pair"}\n', encoding="utf-8")  # changed since
    training_job_run_task(job.pk)
    job.refresh_from_db()
    assert job.status == TrainingStatus.FAILED
    assert "only 1 query-reply pair" in job.error
    assert job.trained_model is None
    assert not TrainedModel.objects.exists()
    assert not (places.models / "ruber").exists() or not list((places.models / "ruber").iterdir())


def test_a_cancel_stops_the_trainer_at_its_next_report_and_nothing_is_saved(
    researcher, places, corpus
) -> None:
    """The trainer calls the job's reporter; once a cancel is requested the next report stops it, the
    scratch folder is removed and no model is registered."""
    corpus_data = training_corpus_load(kind="ruber", path=corpus, corpus_format="pairs-jsonl")
    reports: list[TrainingReport] = []

    def cancel_after_the_first_epoch(report: TrainingReport) -> None:
        reports.append(report)
        if report.stage == EPOCH_STAGE:
            raise TrainingCancelled("cancel requested")

    with pytest.raises(TrainingCancelled):
        trained_model_train(
            request=TrainingRequest(
                kind="ruber", name="stopped", corpus_description="t", epochs=5, threads=1
            ),
            pairs=corpus_data.training,
            validation_pairs=corpus_data.validation,
            progress=False,
            on_progress=cancel_after_the_first_epoch,
        )
    assert [report.epoch for report in reports if report.stage == EPOCH_STAGE] == [1]
    assert any(report.stage == "word2vec" for report in reports)
    assert any(report.stage == "batch" and report.loss is not None for report in reports)
    assert not TrainedModel.objects.exists()
    assert list((places.models / "ruber").iterdir()) == []


def test_cancelling_a_pending_job_ends_it_at_once_and_a_running_one_asks_it_to_stop(
    researcher, corpus: Path
) -> None:
    pending = create(researcher, corpus, name="p")
    assert training_job_cancel(job=pending, user=researcher)
    assert pending.status == TrainingStatus.CANCELLED
    assert "cancelled by alice" in pending.progress["note"]
    assert training_job_run(job_id=pending.pk) is False  # a late message does nothing
    assert not training_job_cancel(job=pending)  # already ended

    running = create(researcher, corpus, name="r")
    TrainingJob.objects.filter(pk=running.pk).update(status=TrainingStatus.RUNNING, attempts=1)
    assert training_job_cancel(job=running)
    assert running.status == TrainingStatus.RUNNING
    assert running.cancel_requested


@pytest.mark.parametrize(
    ("progress", "text"),
    [
        ({"stage": "reading the corpus"}, "reading the corpus"),
        ({"stage": "word2vec", "step": 2, "steps": 5}, "training word2vec (2/5)"),
        ({"stage": "encoding", "step": 300, "steps": 900}, "encoding the utterances (300/900)"),
        ({"stage": "batch", "epoch": 3, "epochs": 10, "cells": 1}, "epoch 3/10"),
        (
            {"stage": "epoch", "epoch": 2, "epochs": 10, "cell": "bert-max-ce", "cell_index": 6, "cells": 8},
            "epoch 2/10 (bert-max-ce, 6/8)",
        ),
    ],
)
def test_a_running_job_says_where_it_stands(researcher, corpus: Path, progress: dict, text: str) -> None:
    job = create(researcher, corpus)
    job.status, job.progress = TrainingStatus.RUNNING, progress
    assert training_job_progress_text(job=job) == text


# --- a job whose worker died -------------------------------------------------------------------------------


def test_a_job_whose_worker_died_is_queued_again_then_failed_after_the_attempt_cap(
    researcher, corpus: Path, settings
) -> None:
    settings.DIALEVAL_TRAINING_MAX_ATTEMPTS = 2
    job = create(researcher, corpus)
    long_ago = timezone.now() - timedelta(seconds=settings.DIALEVAL_TRAINING_STALE_SECONDS + 60)
    TrainingJob.objects.filter(pk=job.pk).update(
        status=TrainingStatus.RUNNING, attempts=1, heartbeat_at=long_ago, started_at=long_ago
    )
    report = training_jobs_recover()
    assert report.requeued == [job.pk]
    job.refresh_from_db()
    assert job.status == TrainingStatus.PENDING
    assert "the worker training it stopped" in training_job_progress_text(job=job)

    TrainingJob.objects.filter(pk=job.pk).update(
        status=TrainingStatus.RUNNING, attempts=2, heartbeat_at=long_ago
    )
    recovery = scoring_runs_recover()  # the periodic check includes training jobs
    assert recovery_of(recovery, "training").failed == [job.pk]
    job.refresh_from_db()
    assert job.status == TrainingStatus.FAILED
    assert "stopped 2 time(s)" in job.error


def test_a_live_job_and_a_stale_cancelled_job_are_told_apart(researcher, corpus: Path, settings) -> None:
    live = create(researcher, corpus, name="live")
    stopped = create(researcher, corpus, name="stopped")
    now = timezone.now()
    TrainingJob.objects.filter(pk=live.pk).update(status=TrainingStatus.RUNNING, attempts=1, heartbeat_at=now)
    TrainingJob.objects.filter(pk=stopped.pk).update(
        status=TrainingStatus.RUNNING,
        attempts=1,
        cancel_requested=True,
        heartbeat_at=now - timedelta(seconds=settings.DIALEVAL_TRAINING_STALE_SECONDS + 1),
    )
    report = training_jobs_recover()
    assert report.finished == [stopped.pk]  # its cancel request carried out
    assert report.requeued == []
    assert report.failed == []
    live.refresh_from_db()
    assert live.status == TrainingStatus.RUNNING


def test_an_attempt_that_lost_its_job_stops_without_writing(researcher, corpus: Path) -> None:
    from scoring.services.training_jobs import TrainingLost, _JobReporter

    job = create(researcher, corpus)
    TrainingJob.objects.filter(pk=job.pk).update(status=TrainingStatus.RUNNING, attempts=2)
    reporter = _JobReporter(lease=Lease(TRAINING_LEASE, job.pk, 1))  # recovery gave the job to attempt 2
    with pytest.raises(TrainingLost):
        reporter(TrainingReport(EPOCH_STAGE, epoch=1, epochs=2, loss=0.5, validation_accuracy=0.6))
    job.refresh_from_db()
    assert job.curve == []


# --- the model list's figures ------------------------------------------------------------------------------


def test_list_models_shows_corpus_pairs_epochs_cells_accuracy_size_and_hash(tmp_path: Path) -> None:
    folder = tmp_path / "old-model"
    folder.mkdir()
    (folder / "weights.bin").write_bytes(b"x" * 2_500_000)
    (folder / "timings.json").write_text(json.dumps({"total_seconds": 1}), encoding="utf-8")
    # registered before the figures were stored: they are computed from config, curve and folder; the
    # figures are those of bert-max-ce, the cell bert-ruber-unreferenced scores with, not the best cell's
    # accuracy nor the longest cell's epochs
    TrainedModel.objects.create(
        name="old-bert",
        kind="bert-ruber",
        path=str(folder),
        content_hash="ab" * 32,
        corpus="dd (dailydialog)",
        config={"cells": ["bert-max-ce", "word2vec-max-ce"], "corpus": {"training_pairs": 1234}, "epochs": 5,
                "results": {"bert-max-ce": {"best_epoch": 1, "validation_accuracy": 0.71},
                            "word2vec-max-ce": {"best_epoch": 4, "validation_accuracy": 0.81}}},
        curve={"bert-max-ce": [{"epoch": 1}, {"epoch": 2}, {"epoch": 3}],
               "word2vec-max-ce": [{"epoch": n} for n in range(1, 6)]},
    )  # fmt: skip
    out = StringIO()
    call_command("list_models", stdout=out)
    header, line = out.getvalue().splitlines()
    assert header.split("\t") == [
        "name", "kind", "hash", "default", "corpus", "trained_on", "epochs", "kept_epoch", "cells",
        "scoring_cell", "val_acc", "size_mb", "note", "path",
    ]  # fmt: skip
    assert line.split("\t") == [
        "old-bert", "bert-ruber", "ab" * 6, "-", "dd (dailydialog)", "1234 pairs", "3", "1",
        "bert-max-ce,word2vec-max-ce", "bert-max-ce", "0.7100", "2.5", "-", str(folder),
    ]  # fmt: skip
    figures = trained_model_figures(model=TrainedModel.objects.get())
    assert figures.size_bytes == 2_500_000 + len(json.dumps({"total_seconds": 1}))


def test_list_models_gives_maudes_dialogs_and_flags_an_accuracy_near_chance() -> None:
    TrainedModel.objects.create(
        name="small-maude",
        kind="maude",
        path="/nowhere/small-maude",
        content_hash="d" * 64,
        config={"epochs": 10, "corpus": {"training_dialogs": 800, "validation_dialogs": 40},
                "results": {"maude": {"best_epoch": 2, "validation_accuracy": 0.51}}},
        curve={"maude": [{"epoch": n, "validation_accuracy": 0.5} for n in (1, 2, 3, 4)]},
        pairs=5600,  # what older code stored: the (context, reply) examples, called pairs
    )  # fmt: skip
    out = StringIO()
    call_command("list_models", stdout=out)
    row = dict(
        zip(
            out.getvalue().splitlines()[0].split("\t"),
            out.getvalue().splitlines()[1].split("\t"),
            strict=True,
        )
    )
    assert (row["trained_on"], row["epochs"], row["kept_epoch"]) == ("800 dialogs", "4", "2")
    assert (row["val_acc"], row["note"], row["scoring_cell"]) == ("0.5100", "near chance", "maude")


def test_list_models_with_a_missing_folder_and_no_curve_shows_dashes() -> None:
    TrainedModel.objects.create(name="gone", kind="ruber", path="/nowhere/gone", content_hash="c" * 64)
    out = StringIO()
    call_command("list_models", stdout=out)
    assert out.getvalue().splitlines()[1].split("\t")[4:13] == ["-"] * 9


def test_the_shared_dailydialog_corpus_is_offered_and_accepted(
    researcher, settings, shared_data: Path
) -> None:
    from scoring.services.training_jobs import corpora_known

    settings.DIALEVAL_CORPUS_ROOTS = [str(shared_data)]
    known = {corpus.path: corpus for corpus in corpora_known()}
    dailydialog = known[str(shared_data / "dailydialog")]
    assert dailydialog.corpus_format == "dailydialog"
    job = create(
        researcher,
        shared_data / "dailydialog",
        corpus_format="dailydialog",
        parameters={"max_pairs": 500},
    )
    assert job.corpus.startswith(str((shared_data / "dailydialog").resolve()))
    assert "(500 training, " in job.corpus  # the first 500 of train/; validation/ is DailyDialog's own


def test_a_training_job_folder_is_removed_when_its_attempt_lost_the_job(researcher, places, corpus) -> None:
    """A late attempt that finished after recovery gave the job to another one removes its own model."""
    from scoring.services.training_jobs import _JobReporter, _succeed

    job = create(researcher, corpus)
    corpus_data = training_corpus_load(kind="ruber", path=corpus, corpus_format="pairs-jsonl")
    model = trained_model_train(
        request=TrainingRequest(kind="ruber", name="late", corpus_description="t", epochs=1, threads=1),
        pairs=corpus_data.training,
        validation_pairs=corpus_data.validation,
        progress=False,
    )
    TrainingJob.objects.filter(pk=job.pk).update(status=TrainingStatus.RUNNING, attempts=2)
    _succeed(job, _JobReporter(lease=Lease(TRAINING_LEASE, job.pk, 1)), model)
    assert not TrainedModel.objects.filter(name="late").exists()
    assert not Path(model.path).exists()
    job.refresh_from_db()
    assert job.status == TrainingStatus.RUNNING
    assert job.trained_model is None
    shutil.rmtree(places.models, ignore_errors=True)


def test_jobs_are_visible_to_their_starter_and_the_study_owner_only() -> None:
    """Visibility of jobs: the starter and the study's owner see a job; another researcher does not."""
    from scoring.selectors import training_jobs_visible_to

    alice, bob, carol = (ResearcherFactory.create(username=name) for name in ("alice", "bob", "carol"))
    study = topic_study(owner=bob)
    job = TrainingJob.objects.create(
        name="j", kind="ruber", corpus="c", corpus_path="/c", created_by=alice, study=study
    )
    assert job in training_jobs_visible_to(user=alice)
    assert job in training_jobs_visible_to(user=bob)
    assert job not in training_jobs_visible_to(user=carol)


@pytest.mark.django_db(transaction=True)
def test_a_running_job_cancelled_from_another_process_stops_and_leaves_nothing(
    tmp_path: Path, settings
) -> None:
    """The whole path: the task trains in one thread, a researcher cancels from another; the trainer stops
    at its next report (the job was cancelled as soon as it was seen running, long before its first epoch
    ends: the corpus is read, tokenized and word2vec trained first), the job says cancelled, and neither a
    model nor a folder is left."""
    import threading

    from django.db import connection

    places = training_places(tmp_path, settings)
    researcher = ResearcherFactory.create(username="alice")
    corpus = write_pairs(places.corpora / "big.jsonl", count=5000)
    job = create(researcher, corpus, parameters={"epochs": 10})
    outcome: list[object] = []

    def work() -> None:
        try:
            outcome.append(training_job_run(job_id=job.pk))
        except BaseException as error:  # reported below
            outcome.append(error)
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    worker.start()
    wait_until(
        lambda: TrainingJob.objects.get(pk=job.pk).status != TrainingStatus.PENDING,
        what="the training job to start",
        alive=worker.is_alive,
        poll=0.01,
        details=lambda: f"the task's outcome: {outcome}",
    )
    assert training_job_cancel(job=TrainingJob.objects.get(pk=job.pk), user=researcher)
    wait_until(  # the trainer stops at its next report; until then the job's row may still move
        lambda: not worker.is_alive(),
        what="the cancelled training to stop",
        progress=lambda: TrainingJob.objects.values_list("status", "progress", "heartbeat_at").get(pk=job.pk),
        stall_seconds=120,
    )
    assert outcome == [True]
    job.refresh_from_db()
    assert job.status == TrainingStatus.CANCELLED
    assert job.trained_model is None
    assert job.finished_at is not None
    assert not TrainedModel.objects.exists()
    assert not (places.models / "ruber").exists() or list((places.models / "ruber").iterdir()) == []

"""Cross-RUBER in the app: train_metric trains and registers it from dialogs; a scoring run stores
its unreferenced score read with the whole context, its referenced score and the blends (combined over the
whole study from the stored raw scores), each signed with the model's content hash; the training-job API
trains one end to end with its curve and says which epoch it kept; list_models lists it."""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation.models import Study
from scoring.metrics.cross_ruber import CrossRuberArtifact, clear_cross_ruber_cache, load_cross_ruber
from scoring.metrics.registry import compute_metrics
from scoring.metrics.ruber.blends import ruber_blends
from scoring.models import MetricScore, RunStatus, TrainedModel, TrainingJob, TrainingStatus
from scoring.selectors import (
    metrics_available_for_study,
    trained_model_figures,
    training_job_progress_text,
)
from scoring.services import scoring_run_create, scoring_run_execute
from scoring.services.training_jobs import TrainingJobError, training_job_create
from scoring.tasks import training_job_run_task
from scoring.trained_model_services import trained_model_register
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)
from tests.scoring.cross_ruber.builders import TinyTraining
from tests.scoring.maude_builders import dialogs
from tests.scoring.training_builders import training_places
from tests.waiting import TRAINING_FIXTURE_TIMEOUT

# tiny_cross_ruber (tests/scoring/conftest.py) trains in its setup: pytest-timeout's limit counts each test's
# body only, the training is watched for progress.
pytestmark = [pytest.mark.django_db, pytest.mark.model_training, TRAINING_FIXTURE_TIMEOUT]

FAST = ["--frozen-layers", "5", "--context-turns", "2", "--device", "cpu", "--threads", "1"]


def run_command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def write_dialogs(path: Path, count: int, seed: int) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for dialog in dialogs(count, seed):
            handle.write(json.dumps({"turns": list(dialog)}) + "\n")
    return path


@pytest.fixture
def places(tmp_path: Path, settings):
    return training_places(tmp_path, settings)


@pytest.fixture
def artifact(tiny_cross_ruber: TinyTraining) -> CrossRuberArtifact:
    """Trained once for the session (tests/scoring/conftest.py); each test registers its own copy."""
    return tiny_cross_ruber.artifact


@pytest.fixture
def cross_model(artifact: CrossRuberArtifact, tmp_path: Path) -> TrainedModel:
    copy = tmp_path / "tiny-cross"
    shutil.copytree(artifact.path, copy)
    return trained_model_register(
        name="tiny-cross",
        kind="cross-ruber",
        path=copy,
        content_hash=artifact.content_hash,
        language="en",
        corpus="synthetic exchanges",
        config=artifact.config,
        curve=artifact.curve,
        make_default=True,
    )


def conversation_study() -> Study:
    """Six three-turn contexts, each with its true fourth turn as the reference; system "bot" answers with
    the true turn for half of them and with another context's for the rest."""
    study = StudyFactory.create(name="conversations")
    system = SystemFactory.create(study=study, name="bot")
    found = dialogs(6, 42)
    for index, dialog in enumerate(found):
        context = DialogContextFactory.create(
            study=study,
            position=index,
            turns=[{"speaker": "AB"[i % 2], "text": text} for i, text in enumerate(dialog[:3])],
        )
        ReferenceFactory.create(context=context, text=dialog[3])
        reply = dialog[3] if index % 2 == 0 else found[(index + 1) % len(found)][3]
        ResponseFactory.create(context=context, system=system, text=reply)
    return study


def stored(name: str) -> dict[int, float]:
    return dict(MetricScore.objects.filter(signature__name=name).values_list("response_id", "value"))


def test_train_metric_registers_a_cross_ruber_model_and_list_models_shows_it(places, tmp_path: Path) -> None:
    corpus = write_dialogs(tmp_path / "dialogs.jsonl", 40, 1)
    output = run_command(
        "train_metric", "cross-ruber", "--corpus", str(corpus), "--format", "dialogs-jsonl", "--name", "tiny-cross",
        "--epochs", "2", "--negatives", "batch,syntactic", "--default", *FAST,
    )  # fmt: skip
    assert "training cross-ruber on 38 dialogs (2 for validation)" in output
    model = TrainedModel.objects.get(name="tiny-cross")
    path = Path(model.path)
    assert model.kind == "cross-ruber"
    assert model.is_default
    assert path.parent == (places.models / "cross-ruber").resolve()
    assert model.config["frozen_layers"] == 5
    assert model.config["context_turns"] == 2
    assert model.config["negatives"] == ["batch", "syntactic"]
    assert model.epochs in (1, 2)
    assert model.validation_accuracy == model.config["results"]["validation_accuracy"]  # the kept epoch's
    assert model.pairs is None  # it trains on dialogs, as MaUde: the list says how many
    assert trained_model_figures(model=model).trained_on == "38 dialogs"
    assert load_cross_ruber(path).content_hash == model.content_hash
    assert not (path / "cache").exists()  # the token states are cached beside the models, not in one
    assert (places.models / "cross-ruber" / ".cache").is_dir()
    listed = run_command("list_models")
    row = next(line.split("\t") for line in listed.splitlines() if line.startswith("tiny-cross\t"))
    assert row[1:4] == ["cross-ruber", model.content_hash[:12], "default"]


def test_train_metric_cross_ruber_refuses_bad_options(places, tmp_path: Path) -> None:
    corpus = write_dialogs(tmp_path / "dialogs.jsonl", 10, 1)
    base = [
        "train_metric",
        "cross-ruber",
        "--corpus",
        str(corpus),
        "--format",
        "dialogs-jsonl",
        "--name",
        "x",
    ]
    with pytest.raises(
        CommandError, match=r"unknown negative.*known: batch, utterance, syntactic, dialog, echo"
    ):
        run_command(*base, "--negatives", "order")
    with pytest.raises(CommandError, match="--variants applies to maude only"):
        run_command(*base, "--variants", "maude")
    with pytest.raises(CommandError, match="--frozen-layers applies to cross-ruber only"):
        run_command("train_metric", "maude", *base[2:], "--frozen-layers", "5")
    with pytest.raises(CommandError, match=r"frozen_layers must be 0\.\.5"):
        run_command(*base, "--frozen-layers", "6", "--threads", "1")
    assert not TrainedModel.objects.exists()


def test_a_run_stores_every_score_with_the_whole_context_and_the_model_hash(
    cross_model: TrainedModel,
) -> None:
    study = conversation_study()
    assert "cross-ruber-unreferenced" in metrics_available_for_study(study=study)
    run = scoring_run_create(study=study, metrics=["cross-ruber-gmean"], enqueue=False)
    assert run.metrics == ["cross-ruber-referenced", "cross-ruber-unreferenced", "cross-ruber-gmean"]
    assert run.trained_models["cross-ruber"]["hash"] == cross_model.content_hash
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error

    rows = list(
        study.contexts.order_by("position").values_list(
            "responses__pk", "turns", "responses__text", "references__text"
        )
    )
    ids = [row[0] for row in rows]
    contexts = [[turn["text"] for turn in turns] for _, turns, _, _ in rows]
    replies = [row[2] for row in rows]
    references = [[row[3]] for row in rows]
    clear_cross_ruber_cache()
    model = load_cross_ruber(cross_model.path)
    expected = model.scores(replies, contexts, references)
    unreferenced = stored("cross-ruber-unreferenced")
    assert [unreferenced[pk] for pk in ids] == pytest.approx(expected.unreferenced, abs=1e-6)
    one_turn = model.unreferenced([context[-1:] for context in contexts], replies)
    assert [unreferenced[pk] for pk in ids] != pytest.approx(one_turn, abs=1e-6)  # more than the last turn
    referenced = stored("cross-ruber-referenced")
    assert [referenced[pk] for pk in ids] == pytest.approx(expected.referenced, abs=1e-6)
    assert all(referenced[pk] == pytest.approx(1.0) for pk in ids[::2])  # the reply is its reference
    gmean = stored("cross-ruber-gmean")
    blended = ruber_blends([referenced[pk] for pk in ids], [unreferenced[pk] for pk in ids])["gmean"]
    assert [gmean[pk] for pk in ids] == pytest.approx(blended)  # over the whole study
    assert min(gmean.values()) == 0.0
    signatures = set(
        MetricScore.objects.filter(response__context__study=study).values_list("signature__text", flat=True)
    )
    assert len(signatures) == 3
    assert all(f"model:{cross_model.content_hash}" in text for text in signatures)


def test_the_registry_blends_read_the_whole_context_too(cross_model: TrainedModel) -> None:
    contexts = [list(dialog[:3]) for dialog in dialogs(4, 7)]
    replies = [dialog[3] for dialog in dialogs(4, 7)]
    references = [[reply] for reply in replies[1:] + replies[:1]]
    models = {"cross-ruber": cross_model.path}
    queries = [context[-1] for context in contexts]
    names = ["cross-ruber-unreferenced", "cross-ruber-amean"]
    whole = compute_metrics(names, replies, references, queries, "en", models=models, contexts=contexts)
    expected = load_cross_ruber(cross_model.path).scores(replies, contexts, references)
    assert whole["cross-ruber-unreferenced"] == pytest.approx(expected.unreferenced, abs=1e-6)
    assert whole["cross-ruber-amean"] == pytest.approx(expected.blends["cross-ruber-amean"], abs=1e-6)
    last_turn = compute_metrics(names, replies, references, queries, "en", models=models)
    assert last_turn["cross-ruber-unreferenced"] != pytest.approx(whole["cross-ruber-unreferenced"], abs=1e-6)


def test_the_api_trains_one_end_to_end_and_says_which_epoch_it_kept(places, researcher) -> None:
    corpus = write_dialogs(places.corpora / "dialogs.jsonl", 30, 3)
    client = APIClient()
    client.force_authenticate(researcher)
    created = client.post(
        "/api/training-jobs/",
        {
            "kind": "cross-ruber",
            "name": "api-cross",
            "corpus_path": str(corpus),
            "corpus_format": "generic",
            "epochs": 2,
            "threads": 1,
        },
        format="json",
    )
    assert created.status_code == 202, created.content
    job_id = created.json()["id"]

    training_job_run_task(job_id)  # what the worker runs, here in this process

    job = TrainingJob.objects.get(pk=job_id)
    assert job.status == TrainingStatus.SUCCEEDED, job.error
    model = job.trained_model
    assert model is not None
    assert model.kind == "cross-ruber"
    assert [point["epoch"] for point in job.curve] == list(range(1, len(job.curve) + 1))
    assert all(0.0 <= point["validation_accuracy"] <= 1.0 for point in job.curve)
    kept = model.config["results"]["best_epoch"]
    assert kept == min(job.curve, key=lambda point: point["validation_loss"])["epoch"]
    assert f"kept epoch {kept}" in training_job_progress_text(job=job)
    followed = client.get(f"/api/training-jobs/{job_id}/").json()
    assert f"kept epoch {kept}" in followed["status_text"]
    assert followed["trained_model"]["content_hash"] == model.content_hash


def test_a_job_for_another_language_is_refused_naming_the_field(places, researcher) -> None:
    corpus = write_dialogs(places.corpora / "dialogs.jsonl", 10, 3)
    with pytest.raises(TrainingJobError, match="English only") as refused:
        training_job_create(
            user=researcher,
            kind="cross-ruber",
            name="zh-cross",
            corpus_format="generic",
            corpus_path=str(corpus),
            parameters={"language": "zh"},
            enqueue=False,
        )
    assert refused.value.field == "language"
    assert not TrainingJob.objects.exists()

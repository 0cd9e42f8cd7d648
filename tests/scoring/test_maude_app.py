"""MaUde in the app: train_metric trains and registers it from dialogs, a scoring run scores every reply
with its whole context (not only the last turn), records the model's hash, and refuses a variant the model
lacks; "all" includes it only when a model exists."""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Study
from scoring.metrics.maude import load_maude
from scoring.metrics.maude.artifact import MaudeArtifact
from scoring.models import MetricScore, RunStatus, TrainedModel
from scoring.selectors import metrics_available_for_study
from scoring.services import ScoringRequestError, scoring_run_create, scoring_run_execute
from scoring.trained_model_services import trained_model_register
from tests.factories import DialogContextFactory, ResponseFactory, StudyFactory, SystemFactory
from tests.scoring.maude_builders import dialogs, train_tiny_maude
from tests.waiting import TRAINING_FIXTURE_TIMEOUT, watched_training

# The module's model trains in a fixture, which may take past 300 s on a loaded machine: the training is watched
# for progress (tests/waiting.py), and pytest-timeout's limit counts each test's body only.
pytestmark = [pytest.mark.django_db, pytest.mark.model_training, TRAINING_FIXTURE_TIMEOUT]


def run_command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def model_dir(tmp_path: Path, settings) -> Path:
    settings.DIALEVAL_MODEL_DIR = tmp_path / "models"
    return settings.DIALEVAL_MODEL_DIR


def write_dialogs(path: Path, count: int, seed: int) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for dialog in dialogs(count, seed):
            handle.write(
                json.dumps({"turns": [{"speaker": "AB"[i % 2], "text": t} for i, t in enumerate(dialog)]})
                + "\n"
            )
    return path


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> MaudeArtifact:
    """Trained once for the module; each test registers its own copy."""
    with watched_training("tiny MaUde") as on_progress:
        return train_tiny_maude(
            tmp_path_factory.mktemp("maude-app") / "model",
            variants=("maude", "bert-nli"),
            on_progress=on_progress,
        )


@pytest.fixture
def maude_model(artifact: MaudeArtifact, tmp_path: Path) -> TrainedModel:
    copy = tmp_path / "tiny-maude"
    shutil.copytree(artifact.path, copy)
    return trained_model_register(
        name="tiny-maude",
        kind="maude",
        path=copy,
        content_hash=artifact.content_hash,
        language="en",
        corpus="synthetic exchanges",
        config=artifact.config,
        curve=artifact.curve,
        make_default=True,
    )


def conversation_study() -> Study:
    study = StudyFactory.create(name="conversations")
    system = SystemFactory.create(study=study, name="bot")
    for index, dialog in enumerate(dialogs(6, 42)):
        context = DialogContextFactory.create(
            study=study,
            position=index,
            turns=[{"speaker": "AB"[i % 2], "text": text} for i, text in enumerate(dialog[:3])],
        )
        ResponseFactory.create(context=context, system=system, text=dialog[3])
    return study


def test_train_metric_registers_a_maude_artifact(model_dir: Path, tmp_path: Path) -> None:
    corpus = write_dialogs(tmp_path / "dialogs.jsonl", 60, 1)
    output = run_command(
        "train_metric", "maude", "--corpus", str(corpus), "--format", "dialogs-jsonl", "--name", "tiny-maude",
        "--epochs", "1", "--device", "cpu", "--threads", "1", "--default",
    )  # fmt: skip
    assert "training maude on 57 dialogs (3 for validation)" in output
    maude_model = TrainedModel.objects.get(name="tiny-maude")
    path = Path(maude_model.path)
    assert maude_model.kind == "maude"
    assert maude_model.is_default
    assert path.parent == (model_dir / "maude").resolve()
    assert maude_model.config["variants"] == ["maude", "bert-nli"]
    assert maude_model.config["corpus"]["training_dialogs"] == 57  # 5% of the dialogs held out
    assert "validation: 5% of the dialogs held out" in maude_model.corpus
    assert set(maude_model.curve) == {"maude", "bert-nli"}
    assert load_maude(path).content_hash == maude_model.content_hash


def test_a_run_scores_with_the_whole_context_and_records_the_model(maude_model: TrainedModel) -> None:
    study = conversation_study()
    assert "maude" in metrics_available_for_study(study=study)
    run = scoring_run_create(study=study, metrics=["maude", "maude:one-turn"], enqueue=False)
    assert run.trained_models["maude"]["hash"] == maude_model.content_hash
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error
    model = load_maude(maude_model.path)
    responses = list(
        study.contexts.order_by("position").values_list("responses__pk", "turns", "responses__text")
    )
    contexts = [[turn["text"] for turn in turns] for _, turns, _ in responses]
    replies = [text for _, _, text in responses]
    stored = dict(MetricScore.objects.filter(signature__name="maude").values_list("response_id", "value"))
    assert [stored[pk] for pk, _, _ in responses] == pytest.approx(model.score(contexts, replies))
    one_turn = dict(
        MetricScore.objects.filter(signature__name="maude:one-turn").values_list("response_id", "value")
    )
    assert [one_turn[pk] for pk, _, _ in responses] == pytest.approx(model.score(contexts, replies, turns=1))
    assert one_turn != stored
    signature = MetricScore.objects.filter(signature__name="maude").first()
    assert signature is not None
    assert f"model:{maude_model.content_hash}" in signature.signature.text
    assert "turns:all" in signature.signature.text


def test_a_variant_the_model_lacks_is_refused(maude_model: TrainedModel) -> None:
    study = conversation_study()
    with pytest.raises(
        ScoringRequestError,
        match=r"maude:infersent needs the variant infersent.*its variants: maude, bert-nli",
    ):
        scoring_run_create(study=study, metrics=["maude:infersent"], enqueue=False)


def test_train_metric_maude_refuses_bad_options(model_dir: Path, tmp_path: Path) -> None:
    corpus = write_dialogs(tmp_path / "dialogs.jsonl", 10, 1)
    with pytest.raises(CommandError, match="unknown variant"):
        run_command(
            "train_metric",
            "maude",
            "--corpus",
            str(corpus),
            "--format",
            "dialogs-jsonl",
            "--name",
            "x",
            "--variants",
            "gpt",
        )
    with pytest.raises(CommandError, match="unknown negative"):
        run_command(
            "train_metric",
            "maude",
            "--corpus",
            str(corpus),
            "--format",
            "dialogs-jsonl",
            "--name",
            "x",
            "--negatives",
            "swap",
        )
    with pytest.raises(CommandError, match="--variants applies to maude only"):
        run_command(
            "train_metric",
            "ruber",
            "--corpus",
            str(corpus),
            "--format",
            "pairs-jsonl",
            "--name",
            "x",
            "--variants",
            "maude",
        )
    with pytest.raises(CommandError, match="dialogs-jsonl is MaUde's"):
        run_command(
            "train_metric", "ruber", "--corpus", str(corpus), "--format", "dialogs-jsonl", "--name", "x"
        )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"turns": ["a", "b"]}\n{"turns": 5}\n', encoding="utf-8")
    with pytest.raises(CommandError, match=r"bad\.jsonl, line 2: expected an object with a 'turns' list"):
        run_command("train_metric", "maude", "--corpus", str(bad), "--format", "dialogs-jsonl", "--name", "x")
    assert not TrainedModel.objects.exists()

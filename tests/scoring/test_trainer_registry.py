"""A learned metric of a new model kind is its trainer module and one registration: a kind registered here,
and nowhere else, is trained by `manage.py train_metric` with the options and negatives its trainer
declares, by `train_default_models` by default, offered by the training form with its name list, and its
trainer checks the model a run chooses."""

from __future__ import annotations

from collections.abc import Sequence
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

import scoring.trainers
from scoring.metrics.ruber.artifact import HASH_FILE
from scoring.metrics.training_progress import ProgressCallback
from scoring.models import TrainedModel, TrainingJob
from scoring.trained_model_services import trained_cells_check, training_job_planned_model
from scoring.trainers import (
    KindTrainer,
    NameList,
    TrainedModelError,
    TrainingRequest,
    register_trainer,
    trainer_kinds,
)
from scoring.trainers.base import TrainedArtifact, untrained_part_check
from scoring.training.forms import TrainingJobForm
from tests.scoring.training_builders import training_places, write_dailydialog

pytestmark = pytest.mark.django_db

TOY = "toy"
SIZES = ("small", "big")


class ToyTraining:
    """A trainer that writes a hashed folder at once and remembers the request it was given."""

    def __init__(self) -> None:
        self.requests: list[TrainingRequest] = []

    def __call__(
        self,
        request: TrainingRequest,
        training: Sequence[Any],
        validation: Sequence[Any],
        output_dir: Path,
        progress: bool,
        on_progress: ProgressCallback | None,
    ) -> TrainedArtifact:
        self.requests.append(request)
        content_hash = f"{len(self.requests):064d}"
        (output_dir / HASH_FILE).write_text(content_hash, encoding="utf-8")
        return {"negatives": list(request.negatives), "sizes": ["small"]}, [], content_hash


def toy_size(metric: str) -> str | None:
    return metric.removeprefix("toy:") if metric.startswith("toy:") else None


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> ToyTraining:
    """The toy kind, registered the way a trainer module's line in scoring.trainers registers it, into a
    copy of the registry that the test's end puts back."""
    monkeypatch.setattr(scoring.trainers, "_TRAINERS", dict(scoring.trainers._TRAINERS))
    training = ToyTraining()
    register_trainer(
        KindTrainer(
            kind=TOY,
            label="Toy (a test's kind)",
            train=training,
            display_name="Toy",
            name_lists=(
                NameList(
                    key="sizes",
                    owner="Toy's",
                    label="Toy sizes",
                    choices=SIZES,
                    initial=("small",),
                    none_ticked="tick a size",
                    checked=lambda names, language: names or ["small"],
                ),
            ),
            options=("context_turns", "negatives"),
            negatives=("swap", "echo"),
            trains_on_dialogs=True,
            trained_by_default=True,
            default_model_arguments=("--negatives", "echo"),
            trained_check=untrained_part_check(kind=TOY, key="sizes", noun="size", needed=toy_size),
        )
    )
    return training


def run_command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_train_metric_trains_a_registered_kind_with_the_options_its_trainer_declares(
    toy: ToyTraining, tmp_path: Path, settings
) -> None:
    training_places(tmp_path, settings)
    corpus = write_dailydialog(tmp_path / "dd", dialogs=20)
    base = ["--corpus", str(corpus), "--format", "dailydialog"]
    output = run_command(
        "train_metric", TOY, *base, "--name", "toy-1", "--context-turns", "2", "--negatives", "swap"
    )
    assert "training toy on 20 dialogs" in output
    assert "registered toy model toy-1" in output
    assert toy.requests[0].negatives == ["swap"]
    assert toy.requests[0].context_turns == 2
    assert TrainedModel.objects.get(name="toy-1").kind == TOY
    with pytest.raises(CommandError, match=r"unknown negative\(s\) order; known: swap, echo"):
        run_command("train_metric", TOY, *base, "--name", "toy-2", "--negatives", "order")
    with pytest.raises(CommandError, match="--pooling applies to maude only"):
        run_command("train_metric", TOY, *base, "--name", "toy-2", "--pooling", "max")
    with pytest.raises(CommandError, match="--negatives applies to maude and cross-ruber and toy only"):
        run_command("train_metric", "ruber", *base, "--name", "toy-2", "--negatives", "swap")
    with pytest.raises(CommandError, match="is MaUde's and Cross-RUBER's and Toy's; ruber trains on pairs"):
        run_command("train_metric", "ruber", *base[:2], "--format", "dialogs-jsonl", "--name", "toy-2")


def test_train_default_models_trains_a_registered_kind_by_default(
    toy: ToyTraining, tmp_path: Path, settings
) -> None:
    training_places(tmp_path, settings)
    settings.SHARED_DATA_DIR = tmp_path / "shared"
    write_dailydialog(settings.SHARED_DATA_DIR / "dailydialog", dialogs=20)
    for kind in trainer_kinds()[:-1]:  # every built-in kind has its default: only the toy's is missing
        TrainedModel.objects.create(
            name=f"dd-{kind}", kind=kind, path="/x", content_hash="1" * 64, is_default=True
        )
    output = run_command("train_default_models")
    assert "cross-ruber: a default model exists already" in output
    assert "registered toy model dailydialog-toy-1 (the default)" in output
    assert toy.requests[0].negatives == ["echo"]  # its default model's arguments


def test_the_training_form_offers_a_registered_kind_and_its_name_list(toy: ToyTraining) -> None:
    form = TrainingJobForm()
    assert '<option value="toy">Toy (a test&#x27;s kind)</option>' in str(form["kind"])
    assert 'value="big"' in str(form["sizes"])
    assert form.fields["sizes"].initial == ["small"]


def test_a_runs_model_of_a_registered_kind_is_checked_by_its_trainer(toy: ToyTraining) -> None:
    model = TrainedModel(name="toy-1", kind=TOY, config={"sizes": ["small"]})
    trained_cells_check(metrics=["bleu-4", "toy:small"], trained={TOY: model})
    with pytest.raises(
        TrainedModelError, match=r"toy:big needs the size big, .*its sizes: small\); train it"
    ):
        trained_cells_check(metrics=["bleu-4", "toy:big"], trained={TOY: model})
    planned = training_job_planned_model(TrainingJob(name="toy-2", kind=TOY, parameters={"sizes": ["big"]}))
    trained_cells_check(metrics=["toy:big"], trained={TOY: planned})

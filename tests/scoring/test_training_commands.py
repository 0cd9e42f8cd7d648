"""`train_metric bert-ruber` trains the cells that take minutes by default (the four MiniLM and the four
word2vec pooling cells); the Bi-GRU cells only when asked."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from scoring.metrics.bert_ruber.cells import FAST_CELLS
from scoring.models import TrainedModel
from tests.scoring.training_builders import write_pairs

pytestmark = pytest.mark.django_db


def run_command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_train_metric_bert_ruber_trains_the_fast_cells_by_default(tmp_path: Path, settings) -> None:
    pytest.importorskip("transformers")
    settings.DIALEVAL_MODEL_DIR = tmp_path / "models"
    corpus = write_pairs(tmp_path / "pairs.jsonl", count=120)
    output = run_command(
        "train_metric", "bert-ruber", "--corpus", str(corpus), "--format", "pairs-jsonl", "--name", "fast-bert",
        "--epochs", "1", "--threads", "1", "--device", "cpu",
    )  # fmt: skip
    assert f"cells: {','.join(FAST_CELLS)}" in output
    model = TrainedModel.objects.get(name="fast-bert")
    assert model.config["cells"] == list(FAST_CELLS)
    assert not any("-rnn-" in cell for cell in model.config["cells"])
    assert model.epochs == 1
    assert model.pairs == 114  # 120 pairs less 5% held out for validation (6)
    assert model.validation_accuracy is not None
    assert model.size_bytes


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["bert-ruber", "--cells", "bert-max-ce", "--all-cells"], "give --cells or --all-cells, not both"),
        (["ruber", "--all-cells"], "--cells and --all-cells apply to bert-ruber only"),
        (["bert-ruber", "--cells", "bert-huge-ce"], "unknown cell(s) bert-huge-ce"),
    ],
)
def test_train_metric_cell_options_are_checked(tmp_path: Path, arguments: list[str], message: str) -> None:
    corpus = write_pairs(tmp_path / "pairs.jsonl", count=20)
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_command(
            "train_metric", *arguments, "--corpus", str(corpus), "--format", "pairs-jsonl", "--name", "x",
        )  # fmt: skip
    assert not TrainedModel.objects.exists()

"""BERT-RUBER's trainer (Ghazarian et al., 2019): the unreferenced scorer's factorial cells, trained on
query-reply pairs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scoring.metrics.bert_ruber.cells import ALL_CELLS, BERT, DEFAULT_CELL, FAST_CELLS, parse_cell
from scoring.metrics.learned_specs import BERT_RUBER_KIND, FACTORIAL_CELLS
from scoring.metrics.registry import metric_spec
from scoring.metrics.training_progress import ProgressCallback
from scoring.trainers.base import (
    KindTrainer,
    NameList,
    TrainedArtifact,
    TrainingRequest,
    torch_overrides,
    untrained_part_check,
)


def bert_ruber_train(
    request: TrainingRequest,
    training: Sequence[Any],
    validation: Sequence[Any],
    output_dir: Path,
    progress: bool,
    on_progress: ProgressCallback | None,
) -> TrainedArtifact:
    from scoring.metrics.bert_ruber import BertRuberConfig, train_bert_ruber

    overrides = torch_overrides(request)
    if request.cells:
        overrides["cells"] = tuple(request.cells)
    bert = train_bert_ruber(
        training,
        validation,
        config=BertRuberConfig(**overrides),
        output_dir=output_dir,
        progress=progress,
        on_progress=on_progress,
    )
    return bert.config, bert.curve, bert.content_hash


def checked_cells(cells: list[str], language: str) -> list[str]:
    """The cells to train (the fast ones when none is named), in :data:`ALL_CELLS` order; the BERT cells
    read all-MiniLM-L6-v2, which covers English only."""
    cells = cells or list(FAST_CELLS)
    unknown = [cell for cell in cells if cell not in ALL_CELLS]
    if unknown:
        raise ValueError(f"unknown cell(s) {', '.join(unknown)}; known: {', '.join(ALL_CELLS)}")
    bert = [cell for cell in cells if parse_cell(cell).embedding == BERT]
    if bert and language != "en":
        raise ValueError(
            f"{', '.join(bert)} read all-MiniLM-L6-v2, which covers English only; "
            f"choose word2vec cells for a {language!r} corpus"
        )
    return [cell for cell in ALL_CELLS if cell in cells]


def needed_cell(metric: str) -> str | None:
    """The factorial cell a BERT-RUBER metric reads (its default cell for the blends), else None."""
    spec = metric_spec(metric)
    return spec.parameters.get("cell") if spec.model_kind == BERT_RUBER_KIND else None


BERT_RUBER_TRAINER = KindTrainer(
    kind=BERT_RUBER_KIND,
    label="BERT-RUBER (unreferenced factorial cells)",
    train=bert_ruber_train,
    display_name="BERT-RUBER",
    name_lists=(
        NameList(
            key="cells",
            owner="BERT-RUBER's",
            label="BERT-RUBER cells",
            choices=FACTORIAL_CELLS,
            initial=FAST_CELLS,
            none_ticked="tick at least one cell to train",
            checked=checked_cells,
            help_text="the pooling cells train in minutes; the Bi-GRU (rnn) cells take hours on a CPU",
        ),
    ),
    scoring_cell=DEFAULT_CELL,
    trained_by_default=True,
    # the pooling cells, train_metric's default too (the Bi-GRU cells take hours on a CPU: on request)
    default_model_arguments=("--cells", ",".join(FAST_CELLS)),
    trained_check=untrained_part_check(kind=BERT_RUBER_KIND, key="cells", noun="cell", needed=needed_cell),
)

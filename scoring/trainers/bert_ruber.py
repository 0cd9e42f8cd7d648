"""BERT-RUBER's trainer (Ghazarian et al., 2019): the unreferenced scorer's factorial cells, trained on
query-reply pairs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scoring.metrics.training_progress import ProgressCallback
from scoring.trainers.base import TrainedArtifact, TrainingRequest, torch_overrides


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

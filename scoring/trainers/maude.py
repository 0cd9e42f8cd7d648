"""MaUde's trainer (Sinha et al., 2020): its variants, trained on whole dialogs with synthetic negatives."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scoring.metrics.training_progress import ProgressCallback
from scoring.trainers.base import TrainedArtifact, TrainingRequest, torch_overrides


def maude_train(
    request: TrainingRequest,
    training: Sequence[Any],
    validation: Sequence[Any],
    output_dir: Path,
    progress: bool,
    on_progress: ProgressCallback | None,
) -> TrainedArtifact:
    from scoring.metrics.maude.training import MaudeConfig, train_maude

    overrides = torch_overrides(request)
    if request.variants:
        overrides["variants"] = tuple(request.variants)
    if request.pooling:
        overrides["pooling"] = request.pooling
    if request.negatives:
        overrides["negatives"] = tuple(request.negatives)
    overrides["context_turns"] = request.context_turns
    maude = train_maude(
        training,
        validation,
        config=MaudeConfig(**overrides),
        output_dir=output_dir,
        progress=progress,
        on_progress=on_progress,
    )
    return maude.config, maude.curve, maude.content_hash

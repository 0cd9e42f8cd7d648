"""RUBER's trainer (Tao et al., 2018): the unreferenced scorer trained on query-reply pairs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scoring.metrics.learned_specs import RUBER_KIND
from scoring.metrics.training_progress import ProgressCallback
from scoring.trainers.base import KindTrainer, TrainedArtifact, TrainingRequest, common_overrides


def ruber_train(
    request: TrainingRequest,
    training: Sequence[Any],
    validation: Sequence[Any],
    output_dir: Path,
    progress: bool,
    on_progress: ProgressCallback | None,
) -> TrainedArtifact:
    from scoring.metrics.ruber.training import RuberConfig, train_ruber

    overrides = common_overrides(request)
    if request.threads is not None:
        overrides["threads"] = request.threads
    ruber = train_ruber(
        training,
        validation,
        config=RuberConfig(**overrides),
        output_dir=output_dir,
        progress=progress,
        on_progress=on_progress,
    )
    return ruber.config, ruber.curve, ruber.content_hash


RUBER_TRAINER = KindTrainer(
    kind=RUBER_KIND,
    label="RUBER (word2vec + Bi-GRU s_U)",
    train=ruber_train,
    display_name="RUBER",
    trained_by_default=True,
)

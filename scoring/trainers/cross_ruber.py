"""Cross-RUBER's trainer: MiniLM fine-tuned on whole dialogs, its frozen layers' token states cached beside
the models (``DIALEVAL_MODEL_DIR``/cross-ruber/.cache: the next training on the same corpus and encoder
encodes nothing again)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings

from scoring.metrics.cross_ruber.config import NEGATIVE_KINDS
from scoring.metrics.learned_specs import CROSS_RUBER_KIND
from scoring.metrics.training_progress import ProgressCallback
from scoring.trainers.base import (
    KindTrainer,
    TrainedArtifact,
    TrainedModelError,
    TrainingRequest,
    torch_overrides,
)


def cross_ruber_train(
    request: TrainingRequest,
    training: Sequence[Any],
    validation: Sequence[Any],
    output_dir: Path,
    progress: bool,
    on_progress: ProgressCallback | None,
) -> TrainedArtifact:
    from scoring.metrics.cross_ruber import CrossRuberConfig
    from scoring.metrics.cross_ruber.training import train_cross_ruber

    if request.language != "en":
        raise TrainedModelError(
            f"Cross-RUBER fine-tunes all-MiniLM-L6-v2, which covers English only; it cannot learn "
            f"{request.language!r} text"
        )
    overrides = torch_overrides(request)
    for key in ("context_turns", "frozen_layers", "interaction"):
        value = getattr(request, key)
        if value is not None:
            overrides[key] = value
    if request.negatives:
        overrides["negatives"] = tuple(request.negatives)
    try:
        config = CrossRuberConfig(**overrides).checked()
    except ValueError as error:
        raise TrainedModelError(f"Cross-RUBER: {error}") from None
    artifact = train_cross_ruber(
        training,
        validation,
        config=config,
        output_dir=output_dir,
        cache_dir=Path(settings.DIALEVAL_MODEL_DIR) / CROSS_RUBER_KIND / ".cache",
        progress=progress,
        on_progress=on_progress,
    )
    return artifact.config, artifact.curve, artifact.content_hash


def check_language(language: str) -> None:
    """Cross-RUBER fine-tunes an English-only encoder."""
    if language != "en":
        raise ValueError(
            f"Cross-RUBER fine-tunes all-MiniLM-L6-v2, which covers English only, not {language!r}"
        )


CROSS_RUBER_TRAINER = KindTrainer(
    kind=CROSS_RUBER_KIND,
    label="Cross-RUBER (fine-tuned cross-encoder, context-aware; with blends)",
    train=cross_ruber_train,
    display_name="Cross-RUBER",
    options=("context_turns", "negatives", "frozen_layers", "interaction"),
    negatives=NEGATIVE_KINDS,
    check_language=check_language,
    trains_on_dialogs=True,
    # last of the defaults: the longest to train (about 40 minutes on one core), and the best of them on
    # both shared sets (docs/benchmarks.md "Cross-RUBER")
    trained_by_default=True,
)

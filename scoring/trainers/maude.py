"""MaUde's trainer (Sinha et al., 2020): its variants, trained on whole dialogs with synthetic negatives."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scoring.metrics.learned_specs import MAUDE_KIND
from scoring.metrics.maude.negatives import NEGATIVE_KINDS
from scoring.metrics.maude.variants import ALL_VARIANTS, DEFAULT_VARIANTS, ENCODER_VARIANTS, MAUDE
from scoring.metrics.maude_specs import maude_variant
from scoring.metrics.training_progress import ProgressCallback
from scoring.trainers.base import (
    KindTrainer,
    NameList,
    TrainedArtifact,
    TrainingRequest,
    torch_overrides,
    untrained_part_check,
)


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


def checked_variants(variants: list[str], language: str) -> list[str]:
    """The variants to train (the default ones when none is named), in :data:`ALL_VARIANTS` order; those
    that read the encoder's vectors need English text."""
    variants = variants or list(DEFAULT_VARIANTS)
    unknown = [name for name in variants if name not in ALL_VARIANTS]
    if unknown:
        raise ValueError(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(ALL_VARIANTS)}")
    encoder = [name for name in variants if name in ENCODER_VARIANTS]
    if encoder and language != "en":
        raise ValueError(f"{', '.join(encoder)} read an English-only encoder; choose infersent or ruber")
    return [name for name in ALL_VARIANTS if name in variants]


MAUDE_TRAINER = KindTrainer(
    kind=MAUDE_KIND,
    label="MaUde (context-aware, unreferenced; with its baselines)",
    train=maude_train,
    display_name="MaUde",
    name_lists=(
        NameList(
            key="variants",
            owner="MaUde's",
            label="MaUde variants",
            choices=ALL_VARIANTS,
            initial=DEFAULT_VARIANTS,
            none_ticked="tick at least one variant to train",
            checked=checked_variants,
        ),
    ),
    options=("context_turns", "pooling", "negatives"),
    negatives=NEGATIVE_KINDS,
    trains_on_dialogs=True,
    scoring_cell=MAUDE,
    trained_by_default=True,
    trained_check=untrained_part_check(kind=MAUDE_KIND, key="variants", noun="variant", needed=maude_variant),
)

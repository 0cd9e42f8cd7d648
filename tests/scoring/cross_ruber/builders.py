"""A tiny Cross-RUBER configuration over the synthetic exchanges of the MaUde tests: trains for real
(MiniLM, torch, CPU, one thread) in seconds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scoring.metrics.cross_ruber import CrossRuberArtifact, CrossRuberConfig
from scoring.metrics.cross_ruber.training import train_cross_ruber
from scoring.metrics.training_progress import ProgressCallback
from tests.scoring.maude_builders import dialogs

TINY = CrossRuberConfig(
    frozen_layers=5,
    context_turns=2,
    max_context_tokens=48,
    negatives=("batch", "syntactic"),
    encoder_learning_rate=3e-4,
    head_learning_rate=3e-3,
    batch_size=16,
    epochs=3,
    patience=3,
    validation_examples=40,
    head_hidden=32,
    device="cpu",
    torch_threads=1,
    corpus_description="synthetic exchanges",
)


@dataclass(frozen=True)
class TinyTraining:
    """A tiny Cross-RUBER training: its artifact and the progress stages it reported, in order."""

    artifact: CrossRuberArtifact
    stages: tuple[str, ...]


def train_tiny(
    output_dir: Path,
    *,
    cache_dir: Path | None = None,
    config: CrossRuberConfig = TINY,
    count: int = 60,
    on_progress: ProgressCallback | None = None,
) -> CrossRuberArtifact:
    """Cross-RUBER trained on ``count`` dialogs (5 replies each) of the synthetic exchanges."""
    return train_cross_ruber(
        dialogs(count, 1),
        dialogs(12, 2),
        config=config,
        output_dir=output_dir,
        cache_dir=cache_dir,
        progress=False,
        on_progress=on_progress,
    )

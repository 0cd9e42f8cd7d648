"""A metric plugin for dialeval: ``reply-length``, the number of whitespace-separated words of a reply.

The entry point (pyproject.toml, group ``dialeval.metrics``) names :func:`reply_length_spec`, a callable
that returns the metric's spec; ``compute`` takes the built-in metrics' ``(inputs, params)``: one
``MetricInputs``, of which it reads the replies alone. (A plugin written for the fixed argument list
``(hypotheses, references, queries, language, params)`` of before scores unchanged: the loader adapts it;
tests/scoring/test_plugins.py installs one.)
"""

from __future__ import annotations

from collections.abc import Mapping

from scoring.metrics.inputs import MetricInputs
from scoring.metrics.spec import MetricSpec


def reply_length(inputs: MetricInputs, params: Mapping[str, str]) -> list[float | None]:
    """Words per reply; no value for an empty reply."""
    return [float(len(text.split())) if text.split() else None for text in inputs.hypotheses]


def reply_length_spec() -> MetricSpec:
    return MetricSpec(
        name="reply-length",
        description="number of whitespace-separated words of the reply (example plugin)",
        needs_references=False,
        version="1.0.0",
        compute=reply_length,
        uses_tokenizer=False,
    )

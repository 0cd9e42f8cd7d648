"""A metric plugin for dialeval: ``reply-length``, the number of whitespace-separated words of a reply.

The entry point (pyproject.toml, group ``dialeval.metrics``) names :func:`reply_length_spec`, a callable
that returns the metric's spec; ``compute`` has the built-in metrics' batch-first signature.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scoring.metrics.spec import MetricSpec


def reply_length(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    queries: Sequence[str],
    language: str,
    params: Mapping[str, str],
) -> list[float | None]:
    """Words per reply; no value for an empty reply."""
    return [float(len(text.split())) if text.split() else None for text in hypotheses]


def reply_length_spec() -> MetricSpec:
    return MetricSpec(
        name="reply-length",
        description="number of whitespace-separated words of the reply (example plugin)",
        needs_references=False,
        version="1.0.0",
        compute=reply_length,
        uses_tokenizer=False,
    )

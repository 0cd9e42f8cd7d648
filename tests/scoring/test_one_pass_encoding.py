"""Neural metrics are computed in one pass per call: the encoder sees each distinct text of the call
once, sorted by length across the whole call, not once per progress slice; the values are those of slices,
and progress keeps beating between the encoder's batches."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from scoring.metrics import contextual_encoder
from scoring.metrics.registry import compute_metrics

REPLIES = [
    f"reply number {index} is about {'the weather' if index % 2 else 'the train'} today"
    for index in range(300)
]
REFERENCES = [
    [f"a reference for context {index // 5}", "the shared reference of every context"] for index in range(300)
]
QUERIES = [f"query {index // 5}" for index in range(300)]


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every list of sentences the real MiniLM encoder is asked to encode (it still encodes them)."""
    calls: list[list[str]] = []
    real = contextual_encoder.ContextualEncoder.encode_tokens

    def spy(self: contextual_encoder.ContextualEncoder, sentences: Sequence[str]) -> list[np.ndarray]:
        calls.append(list(sentences))
        return real(self, sentences)

    monkeypatch.setattr(contextual_encoder.ContextualEncoder, "encode_tokens", spy)
    return calls


def test_each_distinct_text_is_encoded_once_and_the_values_are_those_of_slices(
    encoded: list[list[str]],
) -> None:
    beats: list[int] = []
    one_pass = compute_metrics(
        ["bert-ruber-referenced"],
        REPLIES,
        REFERENCES,
        QUERIES,
        "en",
        progress=beats.append,
        progress_every=32,
    )["bert-ruber-referenced"]
    texts = [text for call in encoded for text in call]
    distinct = set(REPLIES) | {text for refs in REFERENCES for text in refs}
    assert sorted(texts) == sorted(distinct)  # each once, the shared reference included
    assert len(encoded) == 1
    encoded.clear()
    sliced: list[float | None] = []
    for start in range(0, len(REPLIES), 32):  # what slicing did before: a call per slice
        end = start + 32
        part = compute_metrics(
            ["bert-ruber-referenced"], REPLIES[start:end], REFERENCES[start:end], QUERIES[start:end], "en"
        )
        sliced.extend(part["bert-ruber-referenced"])
    assert sum(len(call) for call in encoded) > len(distinct)  # the shared reference once per slice
    np.testing.assert_allclose(np.array(one_pass, dtype=float), np.array(sliced, dtype=float), atol=1e-5)
    assert beats[-1] == len(REPLIES)
    assert beats.count(0) >= 2  # the encoder's batches beat (64 sentences each on the CPU)


def test_a_beat_that_raises_stops_the_encoding(encoded: list[list[str]]) -> None:
    class Cancelled(Exception):
        pass

    def cancel(done: int) -> None:
        raise Cancelled

    with pytest.raises(Cancelled):
        compute_metrics(
            ["bert-ruber-referenced"], REPLIES, REFERENCES, QUERIES, "en", progress=cancel, progress_every=32
        )

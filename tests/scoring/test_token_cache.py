"""The process's token cache (scoring/metrics/token_cache.py): a text is encoded once per process while it is
kept, what the cache hands out equals what the model computed and is the caller's own copy, the byte
budget drops the least recently used, and two encoders of different settings never share an entry."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from scoring.metrics import contextual_encoder, token_cache
from scoring.metrics.contextual_encoder import minilm_encoder
from scoring.metrics.token_cache import TOKEN_CACHE, TokenCache

pytest.importorskip("transformers")


def _vectors(rows: int, value: float) -> np.ndarray:
    return np.full((rows, 4), value, dtype=np.float32)


def test_the_budget_drops_the_least_recently_used_and_copies_go_out() -> None:
    cache = TokenCache(max_bytes=3 * _vectors(2, 0).nbytes)
    cache.put_many("k", ["a", "b", "c"], [_vectors(2, 1), _vectors(2, 2), _vectors(2, 3)])
    assert cache.get_many("k", ["a"])[0] is not None  # "a" is now the most recently used
    cache.put_many("k", ["d"], [_vectors(2, 4)])

    a, b, c, d = cache.get_many("k", ["a", "b", "c", "d"])
    assert b is None  # the least recently used went
    assert a is not None
    assert c is not None
    assert d is not None
    assert cache.nbytes == 3 * _vectors(2, 0).nbytes
    a[:] = 99.0  # the caller's copy
    np.testing.assert_array_equal(cache.get_many("k", ["a"])[0], _vectors(2, 1))
    assert cache.get_many("other key", ["a"]) == [None]
    assert TokenCache(max_bytes=0).get_many("k", ["a"]) == [None]


def test_a_budget_that_is_not_a_number_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(token_cache.ENVIRONMENT_VARIABLE, "lots")
    with pytest.raises(ValueError, match="DIALEVAL_ENCODER_CACHE_MB='lots' is not a number"):
        token_cache._budget()
    monkeypatch.setenv(token_cache.ENVIRONMENT_VARIABLE, "1.5")
    assert token_cache._budget() == int(1.5 * 1024 * 1024)


def test_the_encoder_encodes_a_text_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TOKEN_CACHE, "max_bytes", 64 * 1024 * 1024)
    TOKEN_CACHE.clear()
    encoded: list[str] = []
    real = contextual_encoder.ContextualEncoder._encode

    def spy(self: contextual_encoder.ContextualEncoder, sentences: Sequence[str]) -> list[np.ndarray]:
        encoded.extend(sentences)
        return real(self, sentences)

    monkeypatch.setattr(contextual_encoder.ContextualEncoder, "_encode", spy)
    encoder = minilm_encoder(device="cpu")
    first = encoder.encode_tokens(["hello there .", "how are you ?", "hello there ."])
    second = encoder.encode_tokens(["how are you ?", "fine , thanks ."])

    assert encoded == ["hello there .", "how are you ?", "fine , thanks ."]
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(second[0], first[1])
    uncached = real(encoder, ["hello there .", "how are you ?", "fine , thanks ."])
    for got, expected in zip([first[0], first[1], second[1]], uncached, strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-5)
    first[1][:] = 0.0  # a caller changing its vectors changes nothing for the next one
    assert np.abs(encoder.encode_tokens(["how are you ?"])[0]).sum() > 0

    shorter = minilm_encoder(device="cpu", max_length=4)  # other settings: its own entries
    [cut] = shorter.encode_tokens(["how are you ?"])
    assert encoded[-1] == "how are you ?"
    assert cut.shape[0] == 2  # [CLS] how are [SEP]: two word pieces kept
    TOKEN_CACHE.clear()

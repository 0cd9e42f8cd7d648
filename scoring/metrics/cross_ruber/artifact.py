"""A trained Cross-RUBER artifact on disk, its content hash, and loading it (issue 27).

The folder (RUBER's file names, ``ruber.artifact``):

- ``config.json``: every hyper-parameter, the encoder's identity (name, content hash of its weight and
  tokenizer files, dimension, layers), the word-piece limits, the corpus fingerprints, the epoch kept
  and its validation figures, library versions;
- ``weights.pt``: the trained parameters only, a torch ``state_dict`` (the top 6 - k layers, the turn
  embeddings, the head; with k = 0 all of MiniLM too). The frozen lower layers are MiniLM's own, which
  the encoder's content hash pins;
- ``training_curve.json``: one row per epoch (training loss, validation loss and accuracies);
- ``timings.json``: seconds per stage, CPU time, threads, peak memory (not hashed: differs between runs);
- ``hash.txt``: sha256 over ``"<file> <sha256>"`` lines of config, weights (digested over the tensors,
  ``state_dict_digest``: torch.save writes a random id into its archive) and curve.

A ``cache/`` folder beside them, when training was left to put it there, holds the frozen layers'
token states (``token_states.LowerStateCache``): a working folder, not part of the artifact nor of its
hash, safe to delete.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.metrics.ruber.artifact import (
    CONFIG_FILE,
    CURVE_FILE,
    HASH_FILE,
    ArtifactError,
    state_dict_digest,
)

WEIGHTS_FILE = "weights.pt"
HASHED_FILES = (CONFIG_FILE, WEIGHTS_FILE, CURVE_FILE)
CACHE_FOLDER = "cache"


class CrossRuberArtifactError(ArtifactError):
    """A Cross-RUBER artifact folder that is incomplete, or whose files do not match its hash, or whose
    encoder is not the one installed."""


@dataclass(frozen=True)
class CrossRuberArtifact:
    path: Path
    content_hash: str
    config: dict[str, Any]
    curve: list[dict[str, float]]


def cross_ruber_artifact_hash(path: Path | str) -> str:
    """The content hash of the artifact folder ``path``, computed from its files (module docstring)."""
    import torch

    path = Path(path)
    missing = [name for name in HASHED_FILES if not (path / name).is_file()]
    if missing:
        raise CrossRuberArtifactError(f"{path}: not a Cross-RUBER artifact, missing {', '.join(missing)}")
    lines = []
    for name in HASHED_FILES:
        if name == WEIGHTS_FILE:
            digest = state_dict_digest(torch.load(path / name, map_location="cpu", weights_only=True))
        else:
            digest = hashlib.sha256((path / name).read_bytes()).hexdigest()
        lines.append(f"{name} {digest}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def verified_hash(path: Path) -> str:
    """The folder's content hash, after checking that it matches ``hash.txt``."""
    content_hash = cross_ruber_artifact_hash(path)
    hash_file = path / HASH_FILE
    recorded = hash_file.read_text(encoding="utf-8").strip() if hash_file.is_file() else ""
    if recorded != content_hash:
        raise CrossRuberArtifactError(
            f"{path}: files do not match {HASH_FILE} ({recorded[:12] or 'none'} != {content_hash[:12]})"
        )
    return content_hash


def read_cross_ruber_artifact(path: Path | str) -> CrossRuberArtifact:
    """The description of a saved artifact (config, curve, recorded hash), without loading weights."""
    path = Path(path)
    return CrossRuberArtifact(
        path=path,
        content_hash=(path / HASH_FILE).read_text(encoding="utf-8").strip(),
        config=json.loads((path / CONFIG_FILE).read_text(encoding="utf-8")),
        curve=json.loads((path / CURVE_FILE).read_text(encoding="utf-8")),
    )

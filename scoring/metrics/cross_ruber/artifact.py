"""A trained Cross-RUBER artifact on disk, its content hash, and loading it.

The folder (the file names every learned metric's folder has, ``scoring.metrics.artifacts``):

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

from pathlib import Path

from scoring.metrics.artifacts import (
    CONFIG_FILE,
    CURVE_FILE,
    ArtifactError,
    TrainedArtifact,
    artifact_description,
    weights_artifact_hash,
)

WEIGHTS_FILE = "weights.pt"
HASHED_FILES = (CONFIG_FILE, WEIGHTS_FILE, CURVE_FILE)
CACHE_FOLDER = "cache"


class CrossRuberArtifactError(ArtifactError):
    """A Cross-RUBER artifact folder that is incomplete, or whose files do not match its hash, or whose
    encoder is not the one installed."""


class CrossRuberArtifact(TrainedArtifact[list[dict[str, float]]]):
    """A trained Cross-RUBER folder: its path, content hash, config and curve (one row per epoch)."""


def cross_ruber_artifact_hash(path: Path | str) -> str:
    """The content hash of the artifact folder ``path``, computed from its files (module docstring), as
    every learned metric's is (``scoring.metrics.artifacts.files_hash``)."""
    return weights_artifact_hash(
        path, HASHED_FILES, weights_file=WEIGHTS_FILE, kind="Cross-RUBER", error=CrossRuberArtifactError
    )


def read_cross_ruber_artifact(path: Path | str) -> CrossRuberArtifact:
    """The description of a saved artifact (config, curve, recorded hash), without loading weights."""
    return artifact_description(path, CrossRuberArtifact)

"""A trained RUBER model on disk, its content hash, and the loaded model that scores (Tao et al., 2018, section 3).

An artifact is a folder:

- ``config.json``: every hyper-parameter, the corpus description, the seed, library versions;
- ``vocabulary.json``: the word2vec words in row order;
- ``word2vec.npy``: the [V, D] float32 word2vec matrix (s_R and the vector-pool baseline use it);
- ``unreferenced.pt``: the s_U weights (a torch ``state_dict``);
- ``training_curve.json``: per epoch, the mean training hinge loss and the validation ranking
  accuracy and loss;
- ``timings.json``: seconds per stage (not hashed: it differs between identical runs);
- ``hash.txt``: the content hash.

The content hash is sha256 over ``"<file name> <sha256>"`` lines in the fixed order above. torch.save
writes a random id into its zip archive, so the weights' digest is taken over the tensors themselves
(name, dtype, shape and little-endian bytes, by name), not over the file's bytes. The files, the hash
and the hash-checked loading are those of every learned metric (:mod:`scoring.metrics.artifacts`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scoring.metrics.artifacts import (
    CONFIG_FILE,
    CURVE_FILE,
    HASH_FILE,
    TIMINGS_FILE,
    VECTORS_FILE,
    VOCABULARY_FILE,
    ArtifactError,
    ArtifactLoader,
    LoadedModel,
    TrainedArtifact,
    VerifiedArtifact,
    loaded_weights,
    model_device,
    state_dict_digest,
    verified_artifact,
    weights_artifact_hash,
    write_json,
    write_shared_files,
)
from scoring.metrics.ruber.scores import referenced_scores, vector_pool_scores
from scoring.metrics.tokenize import tokenize

# the shared files' names and writers are also RUBER's (importers of this module use them from here)
__all__ = [
    "CONFIG_FILE",
    "CURVE_FILE",
    "HASHED_FILES",
    "HASH_FILE",
    "RUBER_LOADER",
    "TIMINGS_FILE",
    "VECTORS_FILE",
    "VOCABULARY_FILE",
    "WEIGHTS_FILE",
    "ArtifactError",
    "RuberArtifact",
    "RuberModel",
    "artifact_hash",
    "clear_ruber_cache",
    "load_ruber",
    "read_artifact",
    "state_dict_digest",
    "write_json",
    "write_shared_files",
]

WEIGHTS_FILE = "unreferenced.pt"
HASHED_FILES = (CONFIG_FILE, VOCABULARY_FILE, VECTORS_FILE, WEIGHTS_FILE, CURVE_FILE)


class RuberArtifact(TrainedArtifact[list[dict[str, float]]]):
    """A trained RUBER folder: path, content hash, config and training curve."""


def artifact_hash(path: Path) -> str:
    """The content hash of the artifact folder ``path``, computed from its files (see module docstring)."""
    return weights_artifact_hash(
        path, HASHED_FILES, weights_file=WEIGHTS_FILE, kind="RUBER", error=ArtifactError
    )


class RuberModel(LoadedModel):
    """A loaded RUBER artifact: batch scoring of raw text (tokenized with the artifact's language).

    - :meth:`referenced`: s_R (eqs. 1-2), max over each item's references; ``None`` where the reply or
      every reference has no known word (count the Nones for the warning).
    - :meth:`unreferenced`: the neural s_U, always defined (unknown words are <unk>).
    - :meth:`vector_pool_unreferenced`: pooled cosine of query and reply; ``None`` like s_R.
    """

    def __init__(self, path: Path, verified: VerifiedArtifact, device: Any, *, scorer: Any) -> None:
        super().__init__(path, verified, device)
        self.scorer = scorer
        self.max_length = int(self.config["max_length"])

    def referenced(
        self, replies: Sequence[str], references_lists: Sequence[Sequence[str]]
    ) -> list[float | None]:
        return referenced_scores(
            [self._tokens(reply) for reply in replies],
            [[self._tokens(reference) for reference in references] for references in references_lists],
            self.vectors,
        ).values

    def vector_pool_unreferenced(self, queries: Sequence[str], replies: Sequence[str]) -> list[float | None]:
        return vector_pool_scores(
            [self._tokens(query) for query in queries],
            [self._tokens(reply) for reply in replies],
            self.vectors,
        ).values

    def unreferenced(self, queries: Sequence[str], replies: Sequence[str]) -> list[float]:
        from scoring.metrics.ruber.unreferenced_model import score_pairs, token_ids

        if len(queries) != len(replies):
            raise ValueError(f"{len(queries)} queries but {len(replies)} replies")
        vocabulary = self.vectors.vocabulary
        encode = functools.partial(token_ids, vocabulary=vocabulary, max_length=self.max_length)
        return score_pairs(
            self.scorer,
            [encode(self._tokens(query)) for query in queries],
            [encode(self._tokens(reply)) for reply in replies],
            device=self.device,
        )

    def _tokens(self, text: str) -> list[str]:
        return tokenize(text, self.language)

    def __repr__(self) -> str:
        return f"RuberModel(path={str(self.path)!r}, hash={self.content_hash[:12]})"


def _load_uncached(path: Path, device_name: str | None, _encoder: Any) -> RuberModel:
    from scoring.metrics.ruber.unreferenced_model import UnreferencedScorer

    verified = verified_artifact(
        path, content_hash=artifact_hash, error=ArtifactError, vectors_name="ruber-word2vec"
    )
    config = verified.config
    device = model_device(device_name)
    scorer = UnreferencedScorer(
        vocabulary_size=len(verified.vectors),
        embedding_dim=int(config["word2vec"]["dimension"]),
        hidden_size=int(config["hidden_size"]),
        mlp_hidden=int(config["mlp_hidden"]),
    )
    return RuberModel(path, verified, device, scorer=loaded_weights(scorer, path / WEIGHTS_FILE, device))


# Loaded once per process per (resolved path, device); the files are re-hashed on load and must match
# hash.txt. clear_ruber_cache forgets loaded models (e.g. after an artifact was replaced in place).
RUBER_LOADER: ArtifactLoader[RuberArtifact, RuberModel] = ArtifactLoader(RuberArtifact, _load_uncached)
load_ruber = RUBER_LOADER.load
clear_ruber_cache = RUBER_LOADER.clear
read_artifact = RUBER_LOADER.read

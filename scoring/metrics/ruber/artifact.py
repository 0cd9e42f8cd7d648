"""A trained RUBER model on disk, its content hash, and the loaded model that scores (seed 000, section 3).

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
(name, dtype, shape and little-endian bytes, by name), not over the file's bytes.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scoring.metrics.ruber.scores import referenced_scores, vector_pool_scores
from scoring.metrics.tokenize import tokenize
from scoring.metrics.word_vectors import WordVectors

CONFIG_FILE = "config.json"
VOCABULARY_FILE = "vocabulary.json"
VECTORS_FILE = "word2vec.npy"
WEIGHTS_FILE = "unreferenced.pt"
CURVE_FILE = "training_curve.json"
TIMINGS_FILE = "timings.json"
HASH_FILE = "hash.txt"
HASHED_FILES = (CONFIG_FILE, VOCABULARY_FILE, VECTORS_FILE, WEIGHTS_FILE, CURVE_FILE)


class ArtifactError(ValueError):
    """A RUBER artifact folder that is incomplete or whose files do not match its hash."""


@dataclass(frozen=True)
class RuberArtifact:
    path: Path
    content_hash: str
    config: dict[str, Any]
    curve: list[dict[str, float]]


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def write_shared_files(
    output_dir: Path, *, config: Mapping[str, Any], vectors: WordVectors, curve: Any, timings: Any
) -> None:
    """The files every learned-metric artifact has besides its weights: config, word2vec vocabulary and
    vectors (little-endian float32), training curve and timings (RUBER's and BERT-RUBER's alike)."""
    write_json(output_dir / CONFIG_FILE, config)
    write_json(output_dir / VOCABULARY_FILE, list(vectors.vocabulary))
    np.save(output_dir / VECTORS_FILE, np.asarray(vectors.matrix, dtype="<f4"))
    write_json(output_dir / CURVE_FILE, curve)
    write_json(output_dir / TIMINGS_FILE, timings)


def artifact_hash(path: Path) -> str:
    """The content hash of the artifact folder ``path``, computed from its files (see module docstring)."""
    import torch

    path = Path(path)
    missing = [name for name in HASHED_FILES if not (path / name).is_file()]
    if missing:
        raise ArtifactError(f"{path}: not a RUBER artifact, missing {', '.join(missing)}")
    lines = []
    for name in HASHED_FILES:
        if name == WEIGHTS_FILE:
            digest = state_dict_digest(torch.load(path / name, map_location="cpu", weights_only=True))
        else:
            digest = hashlib.sha256((path / name).read_bytes()).hexdigest()
        lines.append(f"{name} {digest}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def state_dict_digest(state: Mapping[str, Any]) -> str:
    """sha256 over the tensors of a state dict: name, dtype, shape and little-endian bytes, by name."""
    digest = hashlib.sha256()
    for name in sorted(state):
        array = state[name].detach().cpu().contiguous().numpy()
        digest.update(f"{name} {array.dtype.str} {list(array.shape)}\n".encode())
        digest.update(np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes())
    return digest.hexdigest()


class RuberModel:
    """A loaded RUBER artifact: batch scoring of raw text (tokenized with the artifact's language).

    - :meth:`referenced`: s_R (eqs. 1-2), max over each item's references; ``None`` where the reply or
      every reference has no known word (count the Nones for the warning).
    - :meth:`unreferenced`: the neural s_U, always defined (unknown words are <unk>).
    - :meth:`vector_pool_unreferenced`: pooled cosine of query and reply; ``None`` like s_R.
    """

    def __init__(
        self,
        *,
        path: Path,
        config: Mapping[str, Any],
        vectors: WordVectors,
        scorer: Any,
        device: Any,
        content_hash: str,
    ) -> None:
        self.path = path
        self.config = dict(config)
        self.vectors = vectors
        self.scorer = scorer
        self.device = device
        self.content_hash = content_hash
        self.language: str = str(config.get("language", "en"))
        self.max_length = int(config["max_length"])

    @property
    def artifact_hash(self) -> str:
        return self.content_hash

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


def load_ruber(path: Path | str, *, device: str | None = None) -> RuberModel:
    """The RUBER model saved in ``path``, loaded once per process per (resolved path, device).

    The files are re-hashed on load and must match ``hash.txt``. :func:`clear_ruber_cache` forgets
    loaded models (e.g. after an artifact was replaced in place).
    """
    return _load_ruber(str(Path(path).resolve()), device)


def _load_ruber_uncached(path_text: str, device_name: str | None) -> RuberModel:
    import torch

    from scoring.metrics.ruber.unreferenced_model import UnreferencedScorer

    path = Path(path_text)
    content_hash = artifact_hash(path)
    recorded = (path / HASH_FILE).read_text(encoding="utf-8").strip() if (path / HASH_FILE).is_file() else ""
    if recorded != content_hash:
        raise ArtifactError(
            f"{path}: files do not match {HASH_FILE} ({recorded[:12] or 'none'} != {content_hash[:12]})"
        )
    config = json.loads((path / CONFIG_FILE).read_text(encoding="utf-8"))
    words = json.loads((path / VOCABULARY_FILE).read_text(encoding="utf-8"))
    matrix = np.load(path / VECTORS_FILE)
    vectors = WordVectors(
        {word: row for row, word in enumerate(words)}, matrix, name=f"ruber-word2vec:{content_hash[:12]}"
    )
    device = torch.device(device_name or ("cuda" if torch.cuda.is_available() else "cpu"))
    scorer = UnreferencedScorer(
        vocabulary_size=len(words),
        embedding_dim=int(config["word2vec"]["dimension"]),
        hidden_size=int(config["hidden_size"]),
        mlp_hidden=int(config["mlp_hidden"]),
    )
    scorer.load_state_dict(torch.load(path / WEIGHTS_FILE, map_location="cpu", weights_only=True))
    scorer.to(device).eval()
    return RuberModel(
        path=path, config=config, vectors=vectors, scorer=scorer, device=device, content_hash=content_hash
    )


_load_ruber = functools.lru_cache(maxsize=8)(_load_ruber_uncached)


def clear_ruber_cache() -> None:
    """Forget every model :func:`load_ruber` has loaded in this process."""
    _load_ruber.cache_clear()


def read_artifact(path: Path) -> RuberArtifact:
    """The description of a saved artifact (config, curve, recorded hash), without loading weights."""
    path = Path(path)
    return RuberArtifact(
        path=path,
        content_hash=(path / HASH_FILE).read_text(encoding="utf-8").strip(),
        config=json.loads((path / CONFIG_FILE).read_text(encoding="utf-8")),
        curve=json.loads((path / CURVE_FILE).read_text(encoding="utf-8")),
    )

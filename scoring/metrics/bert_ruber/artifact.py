"""A trained set of BERT-RUBER unreferenced scorers on disk, its content hash, and the loaded model
that scores (seed 001, section 2.1; the folder follows RUBER's, ``scoring.metrics.ruber.artifact``).

An artifact is a folder:

- ``config.json``: the trained cells, every hyper-parameter, the encoder's name and content hash (when
  a BERT cell was trained), the corpus fingerprints, per-cell best epoch and validation ranking
  accuracy, library versions;
- ``vocabulary.json`` and ``word2vec.npy``: the corpus's word2vec (words in row order, [V, D] float32);
- ``cells/<cell>.pt``: one torch ``state_dict`` per trained cell;
- ``training_curve.json``: ``{cell: [one row per epoch]}``;
- ``timings.json``: seconds per stage (not hashed: it differs between identical runs);
- ``hash.txt``: the content hash.

The content hash is sha256 over ``"<file name> <sha256>"`` lines in the order config, vocabulary,
vectors, the cells' weights in ``ALL_CELLS`` order, curve; weights are digested over their tensors
(``ruber.artifact.state_dict_digest``) since torch.save writes a random id into its archive.

The token vectors of BERT cells come from an encoder outside the folder, so loading checks that the
encoder's content hash is the one recorded at training.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from scoring.metrics.bert_ruber.cells import BERT, DEFAULT_CELL, parse_cell
from scoring.metrics.bert_ruber.features import SentenceTable, encoder_table, word2vec_table
from scoring.metrics.contextual_encoder import DeviceSettings, TokenEncoder, device_settings
from scoring.metrics.ruber.artifact import (  # the file names RUBER's artifacts use, shared
    CONFIG_FILE,
    CURVE_FILE,
    HASH_FILE,
    VECTORS_FILE,
    VOCABULARY_FILE,
    ArtifactError,
    state_dict_digest,
)
from scoring.metrics.word_vectors import WordVectors

CELLS_FOLDER = "cells"
ModelT = TypeVar("ModelT")


class BertRuberArtifactError(ArtifactError):
    """A BERT-RUBER artifact folder that is incomplete or whose files do not match its hash."""


class EncoderMismatchError(BertRuberArtifactError):
    """The encoder given for an artifact's BERT cells is not the one its scorers were trained on."""


@dataclass(frozen=True)
class BertRuberArtifact:
    path: Path
    content_hash: str
    config: dict[str, Any]
    curve: dict[str, list[dict[str, float]]]


def cell_weights_file(cell: str) -> str:
    """The weights file of ``cell``, relative to the artifact folder (e.g. ``cells/bert-max-ce.pt``)."""
    return f"{CELLS_FOLDER}/{cell}.pt"


def hashed_files(cells: Sequence[str]) -> tuple[str, ...]:
    return (
        CONFIG_FILE,
        VOCABULARY_FILE,
        VECTORS_FILE,
        *(cell_weights_file(cell) for cell in cells),
        CURVE_FILE,
    )


def bert_ruber_artifact_hash(path: Path) -> str:
    """The content hash of the artifact folder ``path``, computed from its files (module docstring)."""
    return cells_artifact_hash(path, kind="BERT-RUBER", error=BertRuberArtifactError)


def cells_artifact_hash(path: Path, *, kind: str, error: type[ArtifactError]) -> str:
    """The content hash of an artifact folder laid out as BERT-RUBER's: ``config.json`` listing its
    ``cells``, word2vec, one weights file per cell under ``cells/``, the curve (MaUde's artifacts share
    it). ``kind`` names the artifact in errors, raised as ``error``."""
    import torch

    path = Path(path)
    if not (path / CONFIG_FILE).is_file():
        raise error(f"{path}: not a {kind} artifact, missing {CONFIG_FILE}")
    cells = _read_json(path / CONFIG_FILE).get("cells")
    if not isinstance(cells, list) or not cells:
        raise error(f"{path}: {CONFIG_FILE} lists no trained cell")
    names = hashed_files(cells)
    missing = [name for name in names if not (path / name).is_file()]
    if missing:
        raise error(f"{path}: not a complete {kind} artifact, missing {', '.join(missing)}")
    lines = []
    for name in names:
        if name.startswith(f"{CELLS_FOLDER}/"):
            digest = state_dict_digest(torch.load(path / name, map_location="cpu", weights_only=True))
        else:
            digest = hashlib.sha256((path / name).read_bytes()).hexdigest()
        lines.append(f"{name} {digest}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def verified_cells_artifact(
    path: Path, *, kind: str, error: type[ArtifactError], vectors_name: str
) -> tuple[str, dict[str, Any], WordVectors]:
    """(content hash, config, word2vec) of a cells-layout artifact, after re-hashing its files and checking
    them against ``hash.txt`` (BERT-RUBER's and MaUde's loaders share it)."""
    content_hash = cells_artifact_hash(path, kind=kind, error=error)
    recorded = (path / HASH_FILE).read_text(encoding="utf-8").strip() if (path / HASH_FILE).is_file() else ""
    if recorded != content_hash:
        raise error(
            f"{path}: files do not match {HASH_FILE} ({recorded[:12] or 'none'} != {content_hash[:12]})"
        )
    words = _read_json(path / VOCABULARY_FILE)
    vectors = WordVectors(
        {word: row for row, word in enumerate(words)},
        np.load(path / VECTORS_FILE),
        name=f"{vectors_name}:{content_hash[:12]}",
    )
    return content_hash, _read_json(path / CONFIG_FILE), vectors


class ModelCache(Generic[ModelT]):
    """Loaded models per (resolved path, device, encoder object), loaded once per process.

    Keyed by the encoder's identity: the cached model keeps the encoder alive, so its id is not reused.
    """

    def __init__(self, load: Callable[[Path, str | None, TokenEncoder | None], ModelT]) -> None:
        self._load = load
        self._models: dict[tuple[str, str | None, int | None], ModelT] = {}
        self._lock = threading.Lock()

    def get(self, path: Path | str, device: str | None, encoder: TokenEncoder | None) -> ModelT:
        key = (str(Path(path).resolve()), device, None if encoder is None else id(encoder))
        with self._lock:
            model = self._models.get(key)
            if model is None:
                model = self._models[key] = self._load(Path(key[0]), device, encoder)
        return model

    def clear(self) -> None:
        with self._lock:
            self._models.clear()


class BertRuberModel:
    """A loaded BERT-RUBER artifact: the unreferenced score of any trained cell, for raw text."""

    def __init__(
        self,
        *,
        path: Path,
        config: dict[str, Any],
        vectors: WordVectors,
        heads: dict[str, Any],
        encoder: TokenEncoder | None,
        device: Any,
        content_hash: str,
    ) -> None:
        self.path = path
        self.config = config
        self.vectors = vectors
        self.heads = heads
        self.encoder = encoder
        self.device = device
        self.content_hash = content_hash
        self.cells: tuple[str, ...] = tuple(config["cells"])
        self.language: str = str(config.get("language", "en"))
        self.max_length = int(config["max_length"])

    @property
    def settings(self) -> DeviceSettings:
        """Batch size and autocast of the scorer heads on :attr:`device` (``device_settings``)."""
        return device_settings(str(self.device))

    @property
    def artifact_hash(self) -> str:
        return self.content_hash

    def unreferenced(
        self, queries: Sequence[str], replies: Sequence[str], *, cell: str = DEFAULT_CELL
    ) -> list[float]:
        """The score of ``cell`` in (0, 1) for each (query, reply); each distinct text is encoded once."""
        from scoring.metrics.bert_ruber.heads import score_rows

        parsed = parse_cell(cell)
        if parsed.name not in self.heads:
            raise ValueError(
                f"cell {parsed.name!r} is not trained in {self.path}; trained: {', '.join(self.cells)}"
            )
        if len(queries) != len(replies):
            raise ValueError(f"{len(queries)} queries but {len(replies)} replies")
        if not queries:
            return []
        texts = list(dict.fromkeys([*queries, *replies]))
        row = {text: index for index, text in enumerate(texts)}
        table = self._table(texts, embedding=parsed.embedding, with_tokens=not parsed.pooled)
        return score_rows(
            self.heads[parsed.name],
            table,
            np.array([row[text] for text in queries], dtype=np.int64),
            np.array([row[text] for text in replies], dtype=np.int64),
            device=self.device,
            batch_size=self.settings.scorer_batch_size,
            autocast_dtype=self.settings.scorer_autocast_dtype,
        )

    def _table(self, texts: Sequence[str], *, embedding: str, with_tokens: bool) -> SentenceTable:
        if embedding == BERT:
            assert self.encoder is not None  # load_bert_ruber sets one whenever a BERT cell is trained
            return encoder_table(texts, self.encoder, max_length=self.max_length, with_tokens=with_tokens)
        return word2vec_table(
            texts, self.vectors, language=self.language, max_length=self.max_length, with_tokens=with_tokens
        )

    def __repr__(self) -> str:
        return (
            f"BertRuberModel(path={str(self.path)!r}, cells={len(self.cells)}, hash={self.content_hash[:12]})"
        )


def load_bert_ruber(
    path: Path | str, *, device: str | None = None, encoder: TokenEncoder | None = None
) -> BertRuberModel:
    """The model saved in ``path``, loaded once per process per (resolved path, device, encoder object).

    The files are re-hashed on load and must match ``hash.txt``; for an artifact with BERT cells the
    encoder (``encoder``, else all-MiniLM-L6-v2) must have the content hash recorded at training.
    :func:`clear_bert_ruber_cache` forgets loaded models (e.g. after an artifact was replaced in place).
    """
    return _CACHE.get(path, device, encoder)


def clear_bert_ruber_cache() -> None:
    """Forget every model :func:`load_bert_ruber` has loaded in this process."""
    _CACHE.clear()


def read_bert_ruber_artifact(path: Path | str) -> BertRuberArtifact:
    """The description of a saved artifact (config, curve, recorded hash), without loading weights."""
    path = Path(path)
    return BertRuberArtifact(
        path=path,
        content_hash=(path / HASH_FILE).read_text(encoding="utf-8").strip(),
        config=_read_json(path / CONFIG_FILE),
        curve=_read_json(path / CURVE_FILE),
    )


def _load_uncached(path: Path, device_name: str | None, encoder: TokenEncoder | None) -> BertRuberModel:
    import torch

    from scoring.metrics.bert_ruber.heads import UnreferencedHead

    content_hash, config, vectors = verified_cells_artifact(
        path, kind="BERT-RUBER", error=BertRuberArtifactError, vectors_name="bert-ruber-word2vec"
    )
    device = torch.device(device_name or ("cuda" if torch.cuda.is_available() else "cpu"))
    cells = [parse_cell(name) for name in config["cells"]]
    if any(cell.embedding == BERT for cell in cells):
        encoder = checked_artifact_encoder(path, config.get("encoder") or {}, encoder, device_name)
    heads = {}
    for cell in cells:
        head = UnreferencedHead(
            cell,
            input_dim=int(config["encoder"]["dimension"]) if cell.embedding == BERT else vectors.dimension,
            rnn_hidden=int(config["rnn_hidden"]),
            rnn_layers=int(config["rnn_layers"]),
            mlp_hidden=[int(size) for size in config["mlp_hidden"]],
        )
        state = torch.load(path / cell_weights_file(cell.name), map_location="cpu", weights_only=True)
        head.load_state_dict(state)
        heads[cell.name] = head.to(device).eval()
    return BertRuberModel(
        path=path,
        config=config,
        vectors=vectors,
        heads=heads,
        encoder=encoder,
        device=device,
        content_hash=content_hash,
    )


def checked_artifact_encoder(
    path: Path, recorded: dict[str, Any], encoder: TokenEncoder | None, device_name: str | None
) -> TokenEncoder:
    """``encoder`` (else all-MiniLM-L6-v2), checked to be the encoder ``recorded`` at training: the
    artifact's scorers over encoder vectors (BERT-RUBER's BERT cells, MaUde) mean nothing over another."""
    from scoring.metrics.contextual_encoder import MINILM_NAME, minilm_encoder

    if encoder is None:
        if recorded.get("name") != MINILM_NAME:
            raise EncoderMismatchError(
                f"{path}: its scorers were trained on the encoder {recorded.get('name')!r}; pass that "
                f"encoder when loading it (only {MINILM_NAME} is loaded by default)"
            )
        encoder = minilm_encoder(device=device_name)
    if encoder.content_hash != recorded.get("content_hash"):
        raise EncoderMismatchError(
            f"{path}: its scorers were trained on encoder {recorded.get('name')!r} with content hash "
            f"{recorded.get('content_hash')}, but the encoder given, {encoder.name!r}, has content hash "
            f"{encoder.content_hash}; scores would not be those of the trained model"
        )
    return encoder


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


_CACHE: ModelCache[BertRuberModel] = ModelCache(_load_uncached)

"""The folder a learned metric (RUBER, BERT-RUBER, MaUde) keeps a trained model in, and loading it back.

Every such folder has ``config.json`` (every hyper-parameter, the corpus's fingerprints, library
versions), ``vocabulary.json`` and ``word2vec.npy`` (the corpus's word2vec), its weights (torch
``state_dict`` files), ``training_curve.json``, ``timings.json`` (not hashed: it differs between identical
runs) and ``hash.txt``. The content hash is sha256 over ``"<file name> <sha256>"`` lines in the kind's
fixed order; a weights file is digested over its tensors (:func:`state_dict_digest`), since torch.save
writes a random id into its archive.

BERT-RUBER's and MaUde's folders have one weights file per trained scorer under ``cells/`` and list the
scorers as ``cells`` in ``config.json`` (:func:`cells_artifact_hash`); RUBER's has the one file its kind
names.

Loading (:func:`verified_artifact`) re-hashes the files and refuses a folder that no longer matches
``hash.txt``, then reads the config and word2vec; :func:`loaded_weights` puts a weights file into its
module on the device. An :class:`ArtifactLoader` is one kind's loader: the description of a saved folder
and its models, loaded once per process per path, device and encoder; a :class:`CellsLoader` loads a
folder of scorers under ``cells/`` (BERT-RUBER's, MaUde's), given how the kind builds each scorer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from scoring.metrics.contextual_encoder import TokenEncoder
from scoring.metrics.word_vectors import WordVectors

if TYPE_CHECKING:
    import torch

CONFIG_FILE = "config.json"
VOCABULARY_FILE = "vocabulary.json"
VECTORS_FILE = "word2vec.npy"
CURVE_FILE = "training_curve.json"
TIMINGS_FILE = "timings.json"
HASH_FILE = "hash.txt"
CELLS_FOLDER = "cells"

CurveT = TypeVar("CurveT")
ArtifactT = TypeVar("ArtifactT", bound="TrainedArtifact[Any]")
ModelT = TypeVar("ModelT")
ModuleT = TypeVar("ModuleT", bound="torch.nn.Module")


class ArtifactError(ValueError):
    """An artifact folder that is incomplete or whose files do not match its hash."""


class EncoderMismatchError(ArtifactError):
    """The encoder given for an artifact's scorers over encoder vectors is not the one they were trained on."""


@dataclass(frozen=True)
class TrainedArtifact(Generic[CurveT]):
    """What a trainer returns and :func:`artifact_description` reads back: the folder, its content hash,
    its config and its training curve."""

    path: Path
    content_hash: str
    config: dict[str, Any]
    curve: CurveT


def artifact_description(path: Path | str, kind: type[ArtifactT]) -> ArtifactT:
    """The description of a saved artifact (config, curve, recorded hash) as ``kind``, without loading
    weights."""
    path = Path(path)
    return kind(
        path=path,
        content_hash=(path / HASH_FILE).read_text(encoding="utf-8").strip(),
        config=read_json(path / CONFIG_FILE),
        curve=read_json(path / CURVE_FILE),
    )


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def write_shared_files(
    output_dir: Path, *, config: Mapping[str, Any], vectors: WordVectors, curve: Any, timings: Any
) -> None:
    """The files every learned-metric artifact has besides its weights: config, word2vec vocabulary and
    vectors (little-endian float32), training curve and timings."""
    write_json(output_dir / CONFIG_FILE, config)
    write_json(output_dir / VOCABULARY_FILE, list(vectors.vocabulary))
    np.save(output_dir / VECTORS_FILE, np.asarray(vectors.matrix, dtype="<f4"))
    write_json(output_dir / CURVE_FILE, curve)
    write_json(output_dir / TIMINGS_FILE, timings)


def write_hash(output_dir: Path, content_hash: Callable[[Path], str]) -> str:
    """Hash the finished folder with its kind's ``content_hash``, write ``hash.txt``, return the hash."""
    found = content_hash(output_dir)
    (output_dir / HASH_FILE).write_text(found + "\n", encoding="utf-8")
    return found


def state_dict_digest(state: Mapping[str, Any]) -> str:
    """sha256 over the tensors of a state dict: name, dtype, shape and little-endian bytes, by name."""
    digest = hashlib.sha256()
    for name in sorted(state):
        array = state[name].detach().cpu().contiguous().numpy()
        digest.update(f"{name} {array.dtype.str} {list(array.shape)}\n".encode())
        digest.update(np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes())
    return digest.hexdigest()


def files_hash(path: Path, names: Sequence[str], *, weights: Callable[[str], bool]) -> str:
    """sha256 over one ``"<name> <sha256>"`` line per file of ``names`` (present), in that order; the
    files ``weights`` picks are digested over their tensors."""
    import torch

    lines = []
    for name in names:
        if weights(name):
            digest = state_dict_digest(torch.load(path / name, map_location="cpu", weights_only=True))
        else:
            digest = hashlib.sha256((path / name).read_bytes()).hexdigest()
        lines.append(f"{name} {digest}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def missing_files(path: Path, names: Sequence[str]) -> list[str]:
    return [name for name in names if not (path / name).is_file()]


def cell_weights_file(cell: str) -> str:
    """The weights file of ``cell``, relative to the artifact folder (e.g. ``cells/bert-max-ce.pt``)."""
    return f"{CELLS_FOLDER}/{cell}.pt"


def cells_hashed_files(cells: Sequence[str]) -> tuple[str, ...]:
    return (
        CONFIG_FILE,
        VOCABULARY_FILE,
        VECTORS_FILE,
        *(cell_weights_file(cell) for cell in cells),
        CURVE_FILE,
    )


def cells_artifact_hash(path: Path, *, kind: str, error: type[ArtifactError]) -> str:
    """The content hash of a folder with one weights file per scorer under ``cells/`` (BERT-RUBER's and
    MaUde's): config, vocabulary, vectors, the cells' weights in the order ``config.json`` lists them,
    curve. ``kind`` names the artifact in errors, raised as ``error``."""
    path = Path(path)
    if not (path / CONFIG_FILE).is_file():
        raise error(f"{path}: not a {kind} artifact, missing {CONFIG_FILE}")
    cells = read_json(path / CONFIG_FILE).get("cells")
    if not isinstance(cells, list) or not cells:
        raise error(f"{path}: {CONFIG_FILE} lists no trained cell")
    names = cells_hashed_files(cells)
    missing = missing_files(path, names)
    if missing:
        raise error(f"{path}: not a complete {kind} artifact, missing {', '.join(missing)}")
    return files_hash(path, names, weights=lambda name: name.startswith(f"{CELLS_FOLDER}/"))


@dataclass(frozen=True)
class VerifiedArtifact:
    content_hash: str
    config: dict[str, Any]
    vectors: WordVectors


def weights_artifact_hash(
    path: Path | str, names: Sequence[str], *, weights_file: str, kind: str, error: type[ArtifactError]
) -> str:
    """The content hash of a folder with one weights file (RUBER's, Cross-RUBER's): the files ``names``
    in that order, ``weights_file`` digested over its tensors. ``kind`` names the artifact in errors,
    raised as ``error``."""
    path = Path(path)
    missing = missing_files(path, names)
    if missing:
        raise error(f"{path}: not a {kind} artifact, missing {', '.join(missing)}")
    return files_hash(path, names, weights=lambda name: name == weights_file)


def checked_content_hash(
    path: Path, *, content_hash: Callable[[Path], str], error: type[ArtifactError]
) -> str:
    """The folder's content hash by its kind's ``content_hash``, after checking that it matches
    ``hash.txt`` (a mismatch raises ``error``)."""
    found = content_hash(path)
    recorded = (path / HASH_FILE).read_text(encoding="utf-8").strip() if (path / HASH_FILE).is_file() else ""
    if recorded != found:
        raise error(f"{path}: files do not match {HASH_FILE} ({recorded[:12] or 'none'} != {found[:12]})")
    return found


def verified_artifact(
    path: Path,
    *,
    content_hash: Callable[[Path], str],
    error: type[ArtifactError],
    vectors_name: str,
) -> VerifiedArtifact:
    """The content hash, config and word2vec of the folder ``path``, after re-hashing its files with its
    kind's ``content_hash`` and checking them against ``hash.txt`` (every learned metric's loader)."""
    found = checked_content_hash(path, content_hash=content_hash, error=error)
    words = read_json(path / VOCABULARY_FILE)
    vectors = WordVectors(
        {word: row for row, word in enumerate(words)},
        np.load(path / VECTORS_FILE),
        name=f"{vectors_name}:{found[:12]}",
    )
    return VerifiedArtifact(content_hash=found, config=read_json(path / CONFIG_FILE), vectors=vectors)


class LoadedModel:
    """What every loaded learned-metric model has: its folder, config, word2vec, device, language and
    content hash (the artifact hash in its scores' signatures)."""

    def __init__(self, path: Path, verified: VerifiedArtifact, device: Any) -> None:
        self.path = path
        self.config = verified.config
        self.vectors = verified.vectors
        self.device = device
        self.content_hash = verified.content_hash
        self.language: str = str(self.config.get("language", "en"))

    @property
    def artifact_hash(self) -> str:
        return self.content_hash


def model_device(name: str | None) -> torch.device:
    """The torch device ``name``; None: CUDA when torch sees it, else the CPU (trainers and loaders)."""
    import torch

    return torch.device(name or ("cuda" if torch.cuda.is_available() else "cpu"))


def loaded_weights(module: ModuleT, weights: Path, device: torch.device) -> ModuleT:
    """``module`` with the state dict saved in ``weights``, on ``device``, in eval mode."""
    import torch

    module.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
    return module.to(device).eval()


def encoder_record(encoder: TokenEncoder | None) -> dict[str, Any] | None:
    """What ``config.json`` records of the encoder a model's scorers were trained over (None: none), for
    :func:`checked_artifact_encoder` to check on loading."""
    if encoder is None:
        return None
    return {
        "name": encoder.name,
        "content_hash": encoder.content_hash,
        "dimension": encoder.dimension,
        "language": encoder.language,
    }


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


LoadUncached = Callable[[Path, str | None, TokenEncoder | None], ModelT]


class ArtifactLoader(Generic[ArtifactT, ModelT]):
    """The loader of one kind of learned-metric artifact: the description of a saved folder (:meth:`read`)
    and its models, each loaded by ``load`` (path, device name, encoder) once per process per (resolved path,
    device, encoder object).

    Keyed by the encoder's identity: the cached model keeps the encoder alive, so its id is not reused.
    """

    def __init__(self, artifact: type[ArtifactT], load: LoadUncached[ModelT]) -> None:
        self.artifact = artifact
        self._load = load
        self._models: dict[tuple[str, str | None, int | None], ModelT] = {}
        self._lock = threading.Lock()

    def load(self, path: Path | str, *, device: str | None = None) -> ModelT:
        """The model saved in ``path``, loaded once per process per (resolved path, device); the files are
        re-hashed on load and must match ``hash.txt``."""
        return self._cached(path, device, None)

    def clear(self) -> None:
        """Forget every model loaded in this process (e.g. after an artifact was replaced in place)."""
        with self._lock:
            self._models.clear()

    def read(self, path: Path | str) -> ArtifactT:
        """The description of a saved artifact (config, curve, recorded hash), without loading weights."""
        return artifact_description(path, self.artifact)

    def _cached(self, path: Path | str, device: str | None, encoder: TokenEncoder | None) -> ModelT:
        key = (str(Path(path).resolve()), device, None if encoder is None else id(encoder))
        with self._lock:
            model = self._models.get(key)
            if model is None:
                model = self._models[key] = self._load(Path(key[0]), device, encoder)
        return model


class CellsArtifact(TrainedArtifact[dict[str, list[dict[str, float]]]]):
    """A trained folder of scorers under ``cells/``: path, content hash, config, and each cell's curve."""


class CellsModel(LoadedModel):
    """A loaded folder of scorers under ``cells/``: each trained scorer by its cell's name, on the device,
    and the encoder that the scorers over encoder vectors read (None when no cell does)."""

    def __init__(
        self,
        path: Path,
        verified: VerifiedArtifact,
        device: Any,
        *,
        scorers: dict[str, Any],
        encoder: TokenEncoder | None,
    ) -> None:
        super().__init__(path, verified, device)
        self.scorers = scorers
        self.encoder = encoder


CellsArtifactT = TypeVar("CellsArtifactT", bound=CellsArtifact)
CellsModelT = TypeVar("CellsModelT", bound=CellsModel)


class CellsLoader(ArtifactLoader[CellsArtifactT, CellsModelT]):
    """The loader of a kind whose folder holds one weights file per trained scorer under ``cells/``,
    listed as ``cells`` in ``config.json`` (BERT-RUBER's cells, MaUde's variants): what differs between
    such kinds is how a scorer is built (``build``: its module, given its cell's name and the verified folder, before its
    weights are put in) and which scorers read the encoder's vectors (``over_encoder``), whose encoder
    must then be the one recorded at training (:func:`checked_artifact_encoder`)."""

    def __init__(
        self,
        *,
        name: str,
        artifact: type[CellsArtifactT],
        model: type[CellsModelT],
        error: type[ArtifactError],
        vectors_name: str,
        build: Callable[[str, VerifiedArtifact], torch.nn.Module],
        over_encoder: Callable[[str], bool],
    ) -> None:
        super().__init__(artifact, self._load_cells)
        self.name = name
        self.model = model
        self.error = error
        self.vectors_name = vectors_name
        self.build = build
        self.over_encoder = over_encoder

    def load(
        self, path: Path | str, *, device: str | None = None, encoder: TokenEncoder | None = None
    ) -> CellsModelT:
        """The model saved in ``path``, loaded once per process per (resolved path, device, encoder
        object). The files are re-hashed on load and must match ``hash.txt``; when a scorer reads encoder
        vectors, the encoder (``encoder``, else all-MiniLM-L6-v2) must have the content hash recorded at
        training."""
        return self._cached(path, device, encoder)

    def content_hash(self, path: Path) -> str:
        """The content hash of the folder ``path``, computed from its files (:func:`cells_artifact_hash`)."""
        return cells_artifact_hash(path, kind=self.name, error=self.error)

    def _load_cells(self, path: Path, device_name: str | None, encoder: TokenEncoder | None) -> CellsModelT:
        verified = verified_artifact(
            path, content_hash=self.content_hash, error=self.error, vectors_name=self.vectors_name
        )
        config = verified.config
        device = model_device(device_name)
        cells = [str(cell) for cell in config["cells"]]
        if any(self.over_encoder(cell) for cell in cells):
            encoder = checked_artifact_encoder(path, config.get("encoder") or {}, encoder, device_name)
        scorers = {
            cell: loaded_weights(self.build(cell, verified), path / cell_weights_file(cell), device)
            for cell in cells
        }
        return self.model(path, verified, device, scorers=scorers, encoder=encoder)

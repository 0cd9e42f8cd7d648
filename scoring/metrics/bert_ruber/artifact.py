"""A trained set of BERT-RUBER unreferenced scorers on disk, its content hash, and the loaded model
that scores (Ghazarian et al., 2019, section 2.1; the folder follows RUBER's, ``scoring.metrics.ruber.artifact``).

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
vectors, the cells' weights in the order ``config.json`` lists them, curve; weights are digested over
their tensors since torch.save writes a random id into its archive (the layout, the hash and the loading
are MaUde's too: :mod:`scoring.metrics.artifacts`).

The token vectors of BERT cells come from an encoder outside the folder, so loading checks that the
encoder's content hash is the one recorded at training.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scoring.metrics.artifacts import (
    CELLS_FOLDER,
    ArtifactError,
    EncoderMismatchError,
    LoadedModel,
    ModelCache,
    TrainedArtifact,
    VerifiedArtifact,
    artifact_description,
    cell_weights_file,
    cells_artifact_hash,
    checked_artifact_encoder,
    loaded_weights,
    model_device,
    verified_artifact,
)
from scoring.metrics.bert_ruber.cells import BERT, DEFAULT_CELL, parse_cell
from scoring.metrics.bert_ruber.features import SentenceTable, encoder_table, word2vec_table
from scoring.metrics.contextual_encoder import DeviceSettings, TokenEncoder, device_settings

__all__ = [
    "CELLS_FOLDER",
    "BertRuberArtifact",
    "BertRuberArtifactError",
    "BertRuberModel",
    "EncoderMismatchError",
    "bert_ruber_artifact_hash",
    "cell_weights_file",
    "clear_bert_ruber_cache",
    "load_bert_ruber",
    "read_bert_ruber_artifact",
]


class BertRuberArtifactError(ArtifactError):
    """A BERT-RUBER artifact folder that is incomplete or whose files do not match its hash."""


class BertRuberArtifact(TrainedArtifact[dict[str, list[dict[str, float]]]]):
    """A trained BERT-RUBER folder: path, content hash, config, and the curve of each cell."""


def bert_ruber_artifact_hash(path: Path) -> str:
    """The content hash of the artifact folder ``path``, computed from its files (module docstring)."""
    return cells_artifact_hash(path, kind="BERT-RUBER", error=BertRuberArtifactError)


class BertRuberModel(LoadedModel):
    """A loaded BERT-RUBER artifact: the unreferenced score of any trained cell, for raw text."""

    def __init__(
        self,
        path: Path,
        verified: VerifiedArtifact,
        device: Any,
        *,
        heads: dict[str, Any],
        encoder: TokenEncoder | None,
    ) -> None:
        super().__init__(path, verified, device)
        self.heads = heads
        self.encoder = encoder
        self.cells: tuple[str, ...] = tuple(self.config["cells"])
        self.max_length = int(self.config["max_length"])

    @property
    def settings(self) -> DeviceSettings:
        """Batch size and autocast of the scorer heads on :attr:`device` (``device_settings``)."""
        return device_settings(str(self.device))

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
    return artifact_description(path, BertRuberArtifact)


def _load_uncached(path: Path, device_name: str | None, encoder: TokenEncoder | None) -> BertRuberModel:
    from scoring.metrics.bert_ruber.heads import UnreferencedHead

    verified = verified_artifact(
        path,
        content_hash=bert_ruber_artifact_hash,
        error=BertRuberArtifactError,
        vectors_name="bert-ruber-word2vec",
    )
    config = verified.config
    device = model_device(device_name)
    cells = [parse_cell(name) for name in config["cells"]]
    if any(cell.embedding == BERT for cell in cells):
        encoder = checked_artifact_encoder(path, config.get("encoder") or {}, encoder, device_name)
    heads = {}
    for cell in cells:
        head = UnreferencedHead(
            cell,
            input_dim=int(config["encoder"]["dimension"])
            if cell.embedding == BERT
            else verified.vectors.dimension,
            rnn_hidden=int(config["rnn_hidden"]),
            rnn_layers=int(config["rnn_layers"]),
            mlp_hidden=[int(size) for size in config["mlp_hidden"]],
        )
        heads[cell.name] = loaded_weights(head, path / cell_weights_file(cell.name), device)
    return BertRuberModel(path, verified, device, heads=heads, encoder=encoder)


_CACHE: ModelCache[BertRuberModel] = ModelCache(_load_uncached)

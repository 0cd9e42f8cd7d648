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
are MaUde's too: :class:`scoring.metrics.artifacts.CellsLoader`; this module says how a cell's head is
built).

The token vectors of BERT cells come from an encoder outside the folder, so loading checks that the
encoder's content hash is the one recorded at training.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from scoring.metrics.artifacts import (
    CELLS_FOLDER,
    ArtifactError,
    CellsArtifact,
    CellsLoader,
    CellsModel,
    EncoderMismatchError,
    VerifiedArtifact,
    cell_weights_file,
)
from scoring.metrics.bert_ruber.cells import BERT, DEFAULT_CELL, parse_cell
from scoring.metrics.bert_ruber.features import SentenceTable, encoder_table, word2vec_table
from scoring.metrics.contextual_encoder import DeviceSettings, device_settings

if TYPE_CHECKING:
    import torch

__all__ = [
    "BERT_RUBER_LOADER",
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


class BertRuberArtifact(CellsArtifact):
    """A trained BERT-RUBER folder: path, content hash, config, and the curve of each cell."""


class BertRuberModel(CellsModel):
    """A loaded BERT-RUBER artifact: the unreferenced score of any trained cell, for raw text (its
    ``scorers``: each cell's head)."""

    @property
    def cells(self) -> tuple[str, ...]:
        """The trained cells, in the order ``config.json`` lists them."""
        return tuple(self.config["cells"])

    @property
    def max_length(self) -> int:
        return int(self.config["max_length"])

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
        if parsed.name not in self.scorers:
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
            self.scorers[parsed.name],
            table,
            np.array([row[text] for text in queries], dtype=np.int64),
            np.array([row[text] for text in replies], dtype=np.int64),
            device=self.device,
            batch_size=self.settings.scorer_batch_size,
            autocast_dtype=self.settings.scorer_autocast_dtype,
        )

    def _table(self, texts: Sequence[str], *, embedding: str, with_tokens: bool) -> SentenceTable:
        if embedding == BERT:
            assert self.encoder is not None  # loading sets one whenever a BERT cell is trained
            return encoder_table(texts, self.encoder, max_length=self.max_length, with_tokens=with_tokens)
        return word2vec_table(
            texts, self.vectors, language=self.language, max_length=self.max_length, with_tokens=with_tokens
        )

    def __repr__(self) -> str:
        return (
            f"BertRuberModel(path={str(self.path)!r}, cells={len(self.cells)}, hash={self.content_hash[:12]})"
        )


def _head(cell_name: str, verified: VerifiedArtifact) -> torch.nn.Module:
    """The head of the cell ``cell_name``, sized as ``config.json`` says, before its weights are loaded."""
    from scoring.metrics.bert_ruber.heads import UnreferencedHead

    config = verified.config
    cell = parse_cell(cell_name)
    return UnreferencedHead(
        cell,
        input_dim=int(config["encoder"]["dimension"])
        if cell.embedding == BERT
        else verified.vectors.dimension,
        rnn_hidden=int(config["rnn_hidden"]),
        rnn_layers=int(config["rnn_layers"]),
        mlp_hidden=[int(size) for size in config["mlp_hidden"]],
    )


BERT_RUBER_LOADER: CellsLoader[BertRuberArtifact, BertRuberModel] = CellsLoader(
    name="BERT-RUBER",
    artifact=BertRuberArtifact,
    model=BertRuberModel,
    error=BertRuberArtifactError,
    vectors_name="bert-ruber-word2vec",
    build=_head,
    over_encoder=lambda cell: parse_cell(cell).embedding == BERT,
)
# The kind's names as the package has always exported them (the cache is the kind's: cleared by
# clear_bert_ruber_cache, e.g. after an artifact was replaced in place).
bert_ruber_artifact_hash = BERT_RUBER_LOADER.content_hash
load_bert_ruber = BERT_RUBER_LOADER.load
clear_bert_ruber_cache = BERT_RUBER_LOADER.clear
read_bert_ruber_artifact = BERT_RUBER_LOADER.read

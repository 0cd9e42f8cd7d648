"""A trained MaUde artifact on disk and the loaded model that scores (Sinha et al., 2020).

The folder is laid out as BERT-RUBER's (``bert_ruber.artifact``), one weights file per trained scorer:
``config.json`` (variants as ``cells``, every hyper-parameter, the encoder's name and content hash, the
corpus fingerprints, per-variant best epoch and validation loss/accuracy, library versions),
``vocabulary.json`` + ``word2vec.npy`` (the corpus's word2vec, read by the InferSent and RUBER baselines),
``cells/<variant>.pt``, ``training_curve.json``, ``timings.json`` (not hashed) and ``hash.txt``; the
content hash is :func:`~scoring.metrics.artifacts.cells_artifact_hash`'s, and loading is BERT-RUBER's
(:class:`scoring.metrics.artifacts.CellsLoader`; this module says how a variant's scorer is built).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from scoring.metrics.artifacts import (
    HASH_FILE,
    ArtifactError,
    CellsArtifact,
    CellsLoader,
    CellsModel,
    VerifiedArtifact,
)
from scoring.metrics.contextual_encoder import device_settings
from scoring.metrics.maude.variants import ENCODER_VARIANTS, INFERSENT, MAUDE

if TYPE_CHECKING:
    import torch

__all__ = [
    "HASH_FILE",
    "MAUDE_LOADER",
    "MaudeArtifact",
    "MaudeArtifactError",
    "MaudeModel",
    "clear_maude_cache",
    "load_maude",
    "maude_artifact_hash",
    "read_maude_artifact",
]


class MaudeArtifactError(ArtifactError):
    """A MaUde artifact folder that is incomplete or whose files do not match its hash."""


class MaudeArtifact(CellsArtifact):
    """A trained MaUde folder: path, content hash, config, and the curve of each variant."""


class MaudeModel(CellsModel):
    """A loaded MaUde artifact: the score in (0, 1) of any trained variant for (context turns, reply)."""

    @property
    def variants(self) -> tuple[str, ...]:
        return tuple(self.config["variants"])

    @property
    def context_turns(self) -> int | None:
        """The context turns the model was trained with (None: all)."""
        trained = self.config.get("context_turns")
        return None if trained is None else int(trained)

    def score(
        self,
        contexts: Sequence[Sequence[str]],
        replies: Sequence[str],
        *,
        variant: str = MAUDE,
        turns: int | None = None,
    ) -> list[float]:
        """The score of each reply given its context (turns oldest first), reading the last ``turns``
        turns (None: as many as the model was trained with, all by default); each text is encoded once."""
        from scoring.metrics.bert_ruber.features import word2vec_table
        from scoring.metrics.maude.feeds import Feed, score_examples
        from scoring.metrics.maude.inputs import TextIndex, context_texts, encoder_vectors, example_arrays

        if variant not in self.scorers:
            raise ValueError(
                f"variant {variant!r} is not trained in {self.path}; trained: {', '.join(self.variants)}"
            )
        if not replies and not contexts:
            return []
        index = TextIndex()
        arrays = example_arrays(contexts, replies, index, turns=turns or self.context_turns)
        vectors = utterances = joined = None
        if variant in ENCODER_VARIANTS:
            assert self.encoder is not None
            vectors = encoder_vectors(index.texts, self.encoder, pooling=str(self.config["pooling"]))
        else:
            max_length = int(self.config["max_length"])
            utterances = word2vec_table(
                index.texts, self.vectors, language=self.language, max_length=max_length, with_tokens=True
            )
            if variant == INFERSENT:
                tokens = int(self.config["max_context_tokens"])
                joined = word2vec_table(
                    context_texts(arrays, index.texts, language=self.language, max_tokens=tokens),
                    self.vectors,
                    language=self.language,
                    max_length=tokens,
                    with_tokens=True,
                )
        feed = Feed(variant, arrays, self.device, vectors=vectors, utterances=utterances, contexts=joined)
        (scores,) = score_examples(
            self.scorers[variant],
            feed,
            np.arange(len(arrays), dtype=np.int64),
            [arrays.reply_rows],
            batch_size=device_settings(str(self.device)).scorer_batch_size,
        )
        return [float(value) for value in scores]

    def __repr__(self) -> str:
        return f"MaudeModel(path={str(self.path)!r}, variants={list(self.variants)}, hash={self.content_hash[:12]})"


def _scorer(variant: str, verified: VerifiedArtifact) -> torch.nn.Module:
    """The scorer of ``variant`` over its inputs' dimension, before its weights are loaded: the encoder's
    (twice it for mean-max pooling) or word2vec's."""
    from scoring.metrics.maude.scorers import build_scorer

    config = verified.config
    if variant in ENCODER_VARIANTS:
        dimension = int(config["encoder"]["dimension"]) * (2 if config["pooling"] == "mean-max" else 1)
    else:
        dimension = verified.vectors.dimension
    return build_scorer(variant, input_dim=dimension, settings=config)


MAUDE_LOADER: CellsLoader[MaudeArtifact, MaudeModel] = CellsLoader(
    name="MaUde",
    artifact=MaudeArtifact,
    model=MaudeModel,
    error=MaudeArtifactError,
    vectors_name="maude-word2vec",
    build=_scorer,
    over_encoder=lambda variant: variant in ENCODER_VARIANTS,
)
# The kind's names as the package has always exported them.
maude_artifact_hash = MAUDE_LOADER.content_hash
load_maude = MAUDE_LOADER.load
clear_maude_cache = MAUDE_LOADER.clear
read_maude_artifact = MAUDE_LOADER.read

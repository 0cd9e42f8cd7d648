"""A trained MaUde artifact on disk and the loaded model that scores (Sinha et al., 2020).

The folder is laid out as BERT-RUBER's (``bert_ruber.artifact``), one weights file per trained scorer:
``config.json`` (variants as ``cells``, every hyper-parameter, the encoder's name and content hash, the
corpus fingerprints, per-variant best epoch and validation loss/accuracy, library versions),
``vocabulary.json`` + ``word2vec.npy`` (the corpus's word2vec, read by the InferSent and RUBER baselines),
``cells/<variant>.pt``, ``training_curve.json``, ``timings.json`` (not hashed) and ``hash.txt``; the
content hash is :func:`~scoring.metrics.artifacts.cells_artifact_hash`'s, and loading is BERT-RUBER's
(:mod:`scoring.metrics.artifacts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scoring.metrics.artifacts import (
    HASH_FILE,
    ArtifactError,
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
from scoring.metrics.contextual_encoder import TokenEncoder, device_settings
from scoring.metrics.maude.variants import ENCODER_VARIANTS, INFERSENT, MAUDE

__all__ = [
    "HASH_FILE",
    "MaudeArtifact",
    "MaudeArtifactError",
    "MaudeModel",
    "load_maude",
    "maude_artifact_hash",
]


class MaudeArtifactError(ArtifactError):
    """A MaUde artifact folder that is incomplete or whose files do not match its hash."""


class MaudeArtifact(TrainedArtifact[dict[str, list[dict[str, float]]]]):
    """A trained MaUde folder: path, content hash, config, and the curve of each variant."""


def maude_artifact_hash(path: Path) -> str:
    return cells_artifact_hash(path, kind="MaUde", error=MaudeArtifactError)


class MaudeModel(LoadedModel):
    """A loaded MaUde artifact: the score in (0, 1) of any trained variant for (context turns, reply)."""

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
        self.variants: tuple[str, ...] = tuple(self.config["variants"])
        trained = self.config.get("context_turns")
        self.context_turns: int | None = None if trained is None else int(trained)

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


def load_maude(
    path: Path | str, *, device: str | None = None, encoder: TokenEncoder | None = None
) -> MaudeModel:
    """The model saved in ``path``, loaded once per process per (resolved path, device, encoder object);
    the files are re-hashed and must match ``hash.txt``, the encoder must be the one recorded at training."""
    return _CACHE.get(path, device, encoder)


def clear_maude_cache() -> None:
    _CACHE.clear()


def read_maude_artifact(path: Path | str) -> MaudeArtifact:
    """The description of a saved artifact (config, curve, recorded hash), without loading weights."""
    return artifact_description(path, MaudeArtifact)


def _load_uncached(path: Path, device_name: str | None, encoder: TokenEncoder | None) -> MaudeModel:
    from scoring.metrics.maude.scorers import build_scorer

    verified = verified_artifact(
        path, content_hash=maude_artifact_hash, error=MaudeArtifactError, vectors_name="maude-word2vec"
    )
    config = verified.config
    device = model_device(device_name)
    variants = list(config["variants"])
    if any(variant in ENCODER_VARIANTS for variant in variants):
        encoder = checked_artifact_encoder(path, config.get("encoder") or {}, encoder, device_name)
    scorers = {}
    for variant in variants:
        if variant in ENCODER_VARIANTS:
            dimension = int(config["encoder"]["dimension"]) * (2 if config["pooling"] == "mean-max" else 1)
        else:
            dimension = verified.vectors.dimension
        scorer = build_scorer(variant, input_dim=dimension, settings=config)
        scorers[variant] = loaded_weights(scorer, path / cell_weights_file(variant), device)
    return MaudeModel(path, verified, device, scorers=scorers, encoder=encoder)


_CACHE: ModelCache[MaudeModel] = ModelCache(_load_uncached)

"""MaUde (Sinha et al., 2020): an unreferenced metric that scores a reply against the whole
multi-turn context, trained by noise contrastive estimation, with the paper's baselines trained the same
way (BERT-NLI, InferSent, RUBER).

- :mod:`.negatives`: the syntactic (word order, drop, repeat) and semantic (random utterance) negatives.
- :mod:`.dialogs`: dialog corpora (DailyDialog, dialogs JSONL, pairs JSONL) and their (context, reply)
  examples.
- :mod:`.inputs`: texts as rows, the encoder's pooled vectors and word2vec tokens, once per text.
- :mod:`.scorers` / :mod:`.feeds`: the torch modules (eq. 4) and how batches reach them.
- :mod:`.training`: ``train_maude`` and ``MaudeConfig`` (eq. 2).
- :mod:`.artifact`: the saved folder (BERT-RUBER's layout and hash), ``load_maude`` and ``MaudeModel``.

Importing this package imports neither torch nor transformers; training and loading a model do.
"""

from scoring.metrics.maude.artifact import (
    MaudeArtifact,
    MaudeArtifactError,
    MaudeModel,
    clear_maude_cache,
    load_maude,
    read_maude_artifact,
)
from scoring.metrics.maude.variants import ALL_VARIANTS, DEFAULT_VARIANTS, MAUDE

__all__ = [
    "ALL_VARIANTS",
    "DEFAULT_VARIANTS",
    "MAUDE",
    "MaudeArtifact",
    "MaudeArtifactError",
    "MaudeModel",
    "clear_maude_cache",
    "load_maude",
    "read_maude_artifact",
]

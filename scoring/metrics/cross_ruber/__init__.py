"""Cross-RUBER: a cross-encoder in RUBER's family, trained from dialogs without human labels.

RUBER's referenced and unreferenced scores and blends (Tao et al., 2018), with the unreferenced
scorer a fine-tuned MiniLM in which the reply's word pieces attend to the context's (BERT-RUBER's
contextual embeddings, Ghazarian et al. (2019), fine-tuned instead of frozen; MaUde's multi-turn context, negatives and
combination head, Sinha et al. (2020)). docs/metrics.md, "Cross-RUBER", has the equations and the measurements.

- :mod:`.config`: metric names, ``CrossRuberConfig``.
- :mod:`.network`: the torch module (MiniLM cut at layer k, turn embeddings, head).
- :mod:`.token_states`: word pieces and the frozen layers' token states, cached on disk.
- :mod:`.batches`, :mod:`.training_data`: inputs and candidate replies.
- :mod:`.training`: ``train_cross_ruber``.
- :mod:`.artifact`, :mod:`.model`: the saved folder, ``load_cross_ruber`` and ``cross_ruber_scores``.

Importing this package imports neither torch nor transformers; training, loading and scoring do.
"""

from scoring.metrics.cross_ruber.artifact import (
    CrossRuberArtifact,
    CrossRuberArtifactError,
    cross_ruber_artifact_hash,
    read_cross_ruber_artifact,
)
from scoring.metrics.cross_ruber.config import METRIC_NAMES, CrossRuberConfig
from scoring.metrics.cross_ruber.model import (
    CrossRuberModel,
    CrossRuberScores,
    clear_cross_ruber_cache,
    cross_ruber_scores,
    load_cross_ruber,
)

__all__ = [
    "METRIC_NAMES",
    "CrossRuberArtifact",
    "CrossRuberArtifactError",
    "CrossRuberConfig",
    "CrossRuberModel",
    "CrossRuberScores",
    "clear_cross_ruber_cache",
    "cross_ruber_artifact_hash",
    "cross_ruber_scores",
    "load_cross_ruber",
    "read_cross_ruber_artifact",
]

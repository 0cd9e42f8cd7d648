"""BERT-RUBER's unreferenced scorers (Ghazarian et al., 2019, section 2.1): the paper's
factorial of word embedding (word2vec | BERT) x sentence representation (Bi-GRU | max | mean pooling)
x objective (ranking | cross entropy), 12 cells, each trainable and selectable by name.

- :mod:`.cells`: the cell names, ``parse_cell``, ``ALL_CELLS``, ``DEFAULT_CELL`` ("bert-max-ce").
- :mod:`.features`: the frozen inputs (word2vec or contextual token vectors, pooled or as sequences).
- :mod:`.heads`: the scorer of one cell ([q ; q^T M r ; r] -> MLP 256-512-128 tanh), in torch.
- :mod:`.training`: ``train_bert_ruber`` and ``BertRuberConfig`` (section 4.3).
- :mod:`.artifact`: the saved folder, its content hash, ``load_bert_ruber`` (cached) and the model.

The referenced half of BERT-RUBER is ``scoring.metrics.bert_ruber_referenced``. Importing this package
imports neither torch nor gensim nor transformers; only training and loading a model do.
"""

from scoring.metrics.bert_ruber.artifact import (
    BertRuberArtifact,
    BertRuberArtifactError,
    BertRuberModel,
    EncoderMismatchError,
    clear_bert_ruber_cache,
    load_bert_ruber,
    read_bert_ruber_artifact,
)
from scoring.metrics.bert_ruber.cells import ALL_CELLS, DEFAULT_CELL, Cell, parse_cell
from scoring.metrics.bert_ruber.training import BertRuberConfig, train_bert_ruber

__all__ = [
    "ALL_CELLS",
    "DEFAULT_CELL",
    "BertRuberArtifact",
    "BertRuberArtifactError",
    "BertRuberConfig",
    "BertRuberModel",
    "Cell",
    "EncoderMismatchError",
    "clear_bert_ruber_cache",
    "load_bert_ruber",
    "parse_cell",
    "read_bert_ruber_artifact",
    "train_bert_ruber",
]

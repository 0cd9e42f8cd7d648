"""The cells of BERT-RUBER's factorial design of unreferenced scorers (Ghazarian et al., 2019,
section 2.1, Figure 1, Table 3), and their names.

The paper crosses word embedding (word2vec | BERT, section 2.1.1) x sentence representation (Bi-RNN |
pooling, 2.1.2; Table 3 splits pooling into max and mean) x training objective (ranking loss | cross
entropy, 2.1.3): 2 x 3 x 2 = 12 cells. A cell is named ``<embedding>-<representation>-<objective>``,
e.g. ``bert-max-ce`` (the paper's best, and the default) or ``word2vec-rnn-ranking`` (RUBER's own
s_U, with frozen embeddings).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

EMBEDDINGS = ("word2vec", "bert")
REPRESENTATIONS = ("rnn", "max", "mean")
OBJECTIVES = ("ranking", "ce")

WORD2VEC = "word2vec"
BERT = "bert"
RNN = "rnn"
RANKING = "ranking"

ALL_CELLS: tuple[str, ...] = tuple(
    f"{embedding}-{representation}-{objective}"
    for embedding, representation, objective in itertools.product(EMBEDDINGS, REPRESENTATIONS, OBJECTIVES)
)
DEFAULT_CELL = "bert-max-ce"  # Table 3: Pearson 0.55, Spearman 0.45, the best unreferenced model
# The cells that train in minutes on a CPU: the pooling cells, over MiniLM (bert-max/mean-ranking/ce) and
# word2vec (word2vec-max/mean-ranking/ce). The Bi-GRU cells (*-rnn-*) read token sequences through a GRU
# and take hours on a CPU: `train_metric bert-ruber` and the training form train them only when asked.
FAST_CELLS: tuple[str, ...] = tuple(name for name in ALL_CELLS if f"-{RNN}-" not in name)


@dataclass(frozen=True)
class Cell:
    """One factorial cell; ``str(cell)`` is its name."""

    embedding: str
    representation: str
    objective: str

    @property
    def name(self) -> str:
        return f"{self.embedding}-{self.representation}-{self.objective}"

    @property
    def pooled(self) -> bool:
        """True for max/mean pooling (no trainable sentence encoder), False for the Bi-GRU."""
        return self.representation != RNN

    def __str__(self) -> str:
        return self.name


def parse_cell(name: str) -> Cell:
    """The :class:`Cell` called ``name``; a ValueError names the part that is wrong and the choices."""
    parts = name.split("-")
    if len(parts) != 3:
        raise ValueError(
            f"cell {name!r} is not <embedding>-<representation>-<objective>; "
            f"e.g. {DEFAULT_CELL!r}; cells: {', '.join(ALL_CELLS)}"
        )
    embedding, representation, objective = parts
    for what, value, choices in (
        ("embedding", embedding, EMBEDDINGS),
        ("representation", representation, REPRESENTATIONS),
        ("objective", objective, OBJECTIVES),
    ):
        if value not in choices:
            raise ValueError(f"cell {name!r}: unknown {what} {value!r}; choose one of {', '.join(choices)}")
    return Cell(embedding, representation, objective)


def parse_cells(names: tuple[str, ...] | list[str]) -> tuple[Cell, ...]:
    """Each named cell once, in :data:`ALL_CELLS` order (so the artifact's files do not depend on the order
    a caller listed them in); an empty list is refused."""
    cells = {parse_cell(name).name for name in names}
    if not cells:
        raise ValueError(f"no cell to train; cells: {', '.join(ALL_CELLS)}")
    return tuple(parse_cell(name) for name in ALL_CELLS if name in cells)

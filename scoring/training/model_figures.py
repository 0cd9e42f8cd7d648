"""The figures the model list shows for a trained model: what it trained on (query-reply
pairs; dialogs for MaUde), the epochs the scoring cell ran and the one it kept, its validation ranking
accuracy and the folder's size, read from the artifact's config, curve and folder.

"The scoring cell" is what the model's metric scores with: RUBER's one model, BERT-RUBER's
``bert-ruber-unreferenced`` cell (:data:`~scoring.metrics.bert_ruber.cells.DEFAULT_CELL`, when it was
trained), MaUde's ``maude`` variant. Its figures are the model's, not the best cell's or the longest curve's
(the list showed the best BERT-RUBER cell's accuracy and the longest cell's epochs). A validation
ranking accuracy within :data:`NEAR_CHANCE_MARGIN` of chance (0.5: the true reply scored above a random one
half of the time) is flagged: such a model tells replies apart barely better than a coin.

New models store some of them on their row when they are registered (``TrainedModel.pairs`` ...); the list
computes them from the config and curve whenever it can (:func:`figures_compute`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.trainers import dialog_kinds, kind_trainers

TIMINGS_FILE = "timings.json"  # MaUde's timings name its (context, reply) examples
CHANCE = 0.5  # ranking accuracy of a scorer that guesses
NEAR_CHANCE_MARGIN = 0.05


@dataclass(frozen=True)
class ModelFigures:
    pairs: int | None  # (query, reply) training pairs; None for MaUde, which trains on dialogs
    epochs: int | None  # epochs the scoring cell ran
    cells: tuple[str, ...]
    validation_accuracy: float | None  # the scoring cell's, at the epoch it kept
    size_bytes: int | None
    dialogs: int | None = None  # MaUde's training dialogs
    scoring_cell: str = ""  # the cell (variant) whose figures these are; "" for a single model
    kept_epoch: int | None = None  # the epoch whose weights were kept (the best on validation)
    max_epochs: int | None = None  # the epochs it was allowed (early stopping may end it sooner)

    @property
    def trained_on(self) -> str:
        """ "12,000 pairs" or "800 dialogs" ("-" when unknown)."""
        if self.dialogs is not None:
            return f"{self.dialogs:,} dialogs"
        return "-" if self.pairs is None else f"{self.pairs:,} pairs"

    @property
    def near_chance(self) -> bool:
        return self.validation_accuracy is not None and self.validation_accuracy < CHANCE + NEAR_CHANCE_MARGIN

    @property
    def stopped_early(self) -> bool:
        return self.epochs is not None and self.max_epochs is not None and self.epochs < self.max_epochs


def figures_compute(
    *,
    config: Mapping[str, Any],
    curve: Any,
    path: Path | str | None,
    pairs: int | None = None,
    kind: str = "",
) -> ModelFigures:
    """The figures of an artifact of ``kind``. ``pairs``: what the caller knows it trained on, used when
    the config does not record it."""
    folder = Path(path) if path else None
    cell = _scoring_cell(kind, config, curve)
    rows = _cell_rows(curve, cell)
    kept_epoch, accuracy = _kept(config, cell, rows)
    on_dialogs = kind in dialog_kinds()
    dialogs = _dialogs(config) if on_dialogs else None
    if accuracy is None and cell == "":
        accuracy = _best_accuracy(config, curve)  # a model of several cells without the scoring one
    epochs = config.get("epochs")
    return ModelFigures(
        pairs=None if on_dialogs else _pairs(config, folder, pairs),
        epochs=len(rows) if rows else _longest(curve),
        cells=tuple(str(cell) for cell in config.get("cells", ()) or ()),
        validation_accuracy=accuracy,
        size_bytes=folder_size(folder) if folder is not None else None,
        dialogs=dialogs,
        scoring_cell=cell,
        kept_epoch=kept_epoch,
        max_epochs=int(epochs) if isinstance(epochs, int) else None,
    )


def training_summary(figures: ModelFigures) -> str:
    """The outcome of a training in words, for its job page and ``train_metric``: the epochs run, early
    stopping and the epoch kept, the validation accuracy, and a warning when that is near chance."""
    if figures.epochs is None:
        return ""
    cell = f"cell {figures.scoring_cell}: " if figures.scoring_cell else ""
    epochs = f"{figures.epochs} epoch{'s' if figures.epochs != 1 else ''}"
    if figures.stopped_early:
        epochs = f"stopped early after epoch {figures.epochs} of {figures.max_epochs} (no better validation result)"
    kept = f", kept epoch {figures.kept_epoch}" if figures.kept_epoch is not None else ""
    text = f"{cell}{epochs}{kept}"
    if figures.validation_accuracy is not None:
        text += f"; validation accuracy {figures.validation_accuracy:.3f}"
    if figures.near_chance:
        text += (
            f" — near chance ({CHANCE}): the model barely tells the true reply from a random one; "
            "train on more data or for more epochs before scoring with it"
        )
    return text


def scoring_cells() -> dict[str, str]:
    """The cell each kind's metric scores with, as its trainer declares it (kinds of one scorer: none)."""
    return {trainer.kind: trainer.scoring_cell for trainer in kind_trainers() if trainer.scoring_cell}


def folder_size(folder: Path) -> int | None:
    """Bytes of the files under ``folder``; None when it is missing (a model whose folder was removed)."""
    if not folder.is_dir():
        return None
    return sum(item.stat().st_size for item in folder.rglob("*") if item.is_file())


def _curves(curve: Any) -> list[list[Mapping[str, Any]]]:
    """RUBER's curve is a list of epoch rows; BERT-RUBER's and MaUde's a list per cell (variant)."""
    if isinstance(curve, list):
        return [curve]
    if isinstance(curve, Mapping):
        return [rows for rows in curve.values() if isinstance(rows, list)]
    return []


def _scoring_cell(kind: str, config: Mapping[str, Any], curve: Any) -> str:
    """The cell the kind's metric scores with, when the model has it; "" for a single model or without."""
    cell = scoring_cells().get(kind, "")
    trained = set(curve) if isinstance(curve, Mapping) else set()
    results = config.get("results")
    if isinstance(results, Mapping):
        trained |= set(results)
    return cell if cell in trained else ""


def _cell_rows(curve: Any, cell: str) -> list[Mapping[str, Any]]:
    if cell and isinstance(curve, Mapping):
        rows = curve.get(cell)
        return [row for row in rows if isinstance(row, Mapping)] if isinstance(rows, list) else []
    if isinstance(curve, list):
        return [row for row in curve if isinstance(row, Mapping)]
    return []


def _kept(
    config: Mapping[str, Any], cell: str, rows: list[Mapping[str, Any]]
) -> tuple[int | None, float | None]:
    """(epoch kept, its validation accuracy): the cell's ``results`` entry (BERT-RUBER, MaUde), or the
    ``best_epoch`` row of the curve (RUBER's config, Cross-RUBER's ``results``: it keeps the lowest
    validation loss); without a record, the curve's best accuracy (RUBER keeps that)."""
    results = config.get("results")
    if cell and isinstance(results, Mapping) and isinstance(results.get(cell), Mapping):
        entry = results[cell]
        epoch = entry.get("best_epoch")
        accuracy = entry.get("validation_accuracy")
        return (
            int(epoch) if isinstance(epoch, int) else None,
            float(accuracy) if isinstance(accuracy, int | float) else None,
        )
    if cell:
        return None, None
    scored = [row for row in rows if isinstance(row.get("validation_accuracy"), int | float)]
    if not scored:
        return None, None
    best_epoch = config.get("best_epoch")
    if best_epoch is None and isinstance(results, Mapping):
        best_epoch = results.get("best_epoch")  # one scorer keeping its own record (Cross-RUBER)
    chosen = next((row for row in scored if row.get("epoch") == best_epoch), None)
    if chosen is None:
        chosen = max(scored, key=lambda row: float(row["validation_accuracy"]))
    epoch = chosen.get("epoch")
    return (int(epoch) if isinstance(epoch, int) else None), float(chosen["validation_accuracy"])


def _longest(curve: Any) -> int | None:
    lengths = [len(rows) for rows in _curves(curve) if rows]
    return max(lengths) if lengths else None


def _best_accuracy(config: Mapping[str, Any], curve: Any) -> float | None:
    """Without the scoring cell: the best of each cell's kept epoch (``results``), else of every epoch."""
    results = config.get("results")
    if isinstance(results, Mapping):
        kept = [
            float(row["validation_accuracy"])
            for row in results.values()
            if isinstance(row, Mapping) and isinstance(row.get("validation_accuracy"), int | float)
        ]
        if kept:
            return max(kept)
    values = [
        float(row["validation_accuracy"])
        for rows in _curves(curve)
        for row in rows
        if isinstance(row, Mapping) and isinstance(row.get("validation_accuracy"), int | float)
    ]
    return max(values) if values else None


def _pairs(config: Mapping[str, Any], folder: Path | None, known: int | None) -> int | None:
    corpus = config.get("corpus")
    if isinstance(corpus, Mapping) and isinstance(corpus.get("training_pairs"), int):
        return int(corpus["training_pairs"])
    if known is not None:
        return known
    if folder is not None and (folder / TIMINGS_FILE).is_file():
        try:
            timings = json.loads((folder / TIMINGS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if isinstance(timings, Mapping) and isinstance(timings.get("training_examples"), int):
            return int(timings["training_examples"])
    return None


def _dialogs(config: Mapping[str, Any]) -> int | None:
    corpus = config.get("corpus")
    if isinstance(corpus, Mapping) and isinstance(corpus.get("training_dialogs"), int):
        return int(corpus["training_dialogs"])
    return None

"""The figures the model list shows for a trained model (issue 14): training pairs, epochs, cells, best
validation ranking accuracy and the folder's size, read from the artifact's config, curve and folder.

New models store them on their row when they are registered (``TrainedModel.pairs`` ...); rows registered
before those fields existed have them empty, and the list computes them from the same sources when it
shows them (:func:`model_figures_of`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TIMINGS_FILE = "timings.json"  # MaUde's and Cross-RUBER's timings name their (context, reply) examples


@dataclass(frozen=True)
class ModelFigures:
    pairs: int | None
    epochs: int | None
    cells: tuple[str, ...]
    validation_accuracy: float | None
    size_bytes: int | None


def figures_compute(
    *, config: Mapping[str, Any], curve: Any, path: Path | str | None, pairs: int | None = None
) -> ModelFigures:
    """The figures of an artifact. ``pairs`` when the caller knows them (what it trained on), else the
    config's corpus record (RUBER, BERT-RUBER) or the timings' example count (MaUde)."""
    folder = Path(path) if path else None
    return ModelFigures(
        pairs=pairs if pairs is not None else _pairs(config, folder),
        epochs=_epochs(curve),
        cells=tuple(str(cell) for cell in config.get("cells", ()) or ()),
        validation_accuracy=_best_accuracy(config, curve),
        size_bytes=folder_size(folder) if folder is not None else None,
    )


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


def _epochs(curve: Any) -> int | None:
    lengths = [len(rows) for rows in _curves(curve) if rows]
    return max(lengths) if lengths else None


def _best_accuracy(config: Mapping[str, Any], curve: Any) -> float | None:
    """RUBER: the best epoch's; several cells: the best of each cell's kept epoch (``results``), else of
    every epoch of the curve."""
    results = config.get("results")
    if isinstance(results, Mapping) and isinstance(results.get("validation_accuracy"), int | float):
        return float(results["validation_accuracy"])  # one scorer (Cross-RUBER): its kept epoch's
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


def kept_epochs_text(config: Mapping[str, Any]) -> str:
    """Which epoch early stopping kept, in words: "kept epoch 2" (one scorer: RUBER, Cross-RUBER), "kept
    epoch 2 (maude), 3 (bert-nli)" (one per cell or variant), "" when the config does not say."""
    if isinstance(config.get("best_epoch"), int):
        return f"kept epoch {config['best_epoch']}"
    results = config.get("results")
    if not isinstance(results, Mapping):
        return ""
    if isinstance(results.get("best_epoch"), int):
        return f"kept epoch {results['best_epoch']}"
    cells = [
        f"{row['best_epoch']} ({name})"
        for name, row in results.items()
        if isinstance(row, Mapping) and isinstance(row.get("best_epoch"), int)
    ]
    return f"kept epoch {', '.join(cells)}" if cells else ""


def _pairs(config: Mapping[str, Any], folder: Path | None) -> int | None:
    corpus = config.get("corpus")
    if isinstance(corpus, Mapping) and isinstance(corpus.get("training_pairs"), int):
        return int(corpus["training_pairs"])
    if folder is not None and (folder / TIMINGS_FILE).is_file():
        try:
            timings = json.loads((folder / TIMINGS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if isinstance(timings, Mapping) and isinstance(timings.get("training_examples"), int):
            return int(timings["training_examples"])
    return None

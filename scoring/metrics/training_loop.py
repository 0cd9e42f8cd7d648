"""The training loop BERT-RUBER's cells and MaUde's variants share, and the pieces RUBER shares too.

:func:`train_cells` trains each named scorer in turn and saves its kept weights as ``cells/<name>.pt``;
:func:`train_scorer` is the loop of one scorer. What BERT-RUBER (Ghazarian et al., 2019, section 4.3) and MaUde
(Sinha et al., 2020, sections 3-4) agree on, and this module does:

- every scorer starts from the same seed (torch's global generator, which initialises its weights, and
  a ``torch.Generator`` for the metric's own draws), so a scorer's weights do not depend on which others
  are trained with it;
- Adam over mini-batches; the epoch's training loss is summed on the device in float64 (the same IEEE
  operations as summing ``float(loss) * size`` in Python, without waiting for the device at every step)
  and read every ``loss_every`` batches;
- after each epoch the validation figures, a curve row (epoch, training loss, the metric's validation
  columns, the learning rate when it can decay) and a report; early stopping after ``patience`` epochs
  without a better monitored figure (:class:`Monitor`), keeping the best epoch's weights; optionally the
  learning rate decays on a plateau of that figure (``ReduceLROnPlateau``);
- tqdm bars, and ``on_progress`` reports (:mod:`scoring.metrics.training_progress`) of each batch and
  epoch, with the scorer's name and index; raising ``TrainingCancelled`` from ``on_progress`` stops it.

What a metric passes in is a :class:`Scorer`: its torch module, one epoch's batches, a batch's loss and
the validation figures (features, heads, objectives and negatives are the metric's own).

RUBER (Tao et al., 2018) trains one scorer with a loss and a curve of its own; it shares the seeds
(:func:`seed_generators`), the thread setting (:func:`training_threads`), :class:`EarlyStopping` and
:func:`seconds_since`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from scoring.metrics.artifacts import (
    ArtifactT,
    cell_weights_file,
    write_hash,
    write_shared_files,
)
from scoring.metrics.contextual_encoder import device_settings
from scoring.metrics.training_progress import (
    BATCH_STAGE,
    EPOCH_STAGE,
    ProgressCallback,
    TrainingReport,
    report_progress,
)
from scoring.metrics.word_vectors import WordVectors

if TYPE_CHECKING:
    import torch

BatchT = TypeVar("BatchT")
ACCURACY_COLUMN = "validation_accuracy"
LOSS_COLUMN = "validation_loss"
POSTFIX_EVERY = 20  # batches between updates of the tqdm bar's running loss


@dataclass(frozen=True)
class Validation:
    """One epoch's figures on the validation set: the ranking accuracy (the true reply scored above its
    negatives) and the scorer's own loss, as early stopping and the epoch's report read them, and the
    curve row's validation columns, in the metric's order."""

    accuracy: float
    loss: float
    columns: dict[str, float]


@dataclass(frozen=True)
class Monitor:
    """The validation figure that decides which epoch is kept (and, with a plateau, when to decay)."""

    column: str  # ACCURACY_COLUMN or LOSS_COLUMN
    higher_is_better: bool

    def value(self, validation: Validation) -> float:
        return validation.accuracy if self.column == ACCURACY_COLUMN else validation.loss

    def kept_row(self, curve: Sequence[dict[str, float]]) -> dict[str, float]:
        """The curve row of the kept epoch: the curve's first best row. Early stopping compares the unrounded
        figures, the curve holds them rounded to 6 decimals: they name the same epoch unless two epochs
        tie at 6 decimals."""
        pick = max if self.higher_is_better else min
        return pick(curve, key=lambda row: row[self.column])


BEST_ACCURACY = Monitor(ACCURACY_COLUMN, higher_is_better=True)
LOWEST_LOSS = Monitor(LOSS_COLUMN, higher_is_better=False)


@dataclass(frozen=True)
class Plateau:
    """Multiply the learning rate by ``factor`` after ``patience`` epochs without a better figure."""

    factor: float
    patience: int


@dataclass(frozen=True)
class LoopSettings:
    """What a metric sets of the loop (its config's numbers, and where BERT-RUBER and MaUde differ)."""

    epochs: int
    patience: int  # epochs without a better monitored figure before stopping
    seed: int
    learning_rate: float
    monitor: Monitor
    plateau: Plateau | None = None
    fused_on_cuda: bool = False  # Adam's fused CUDA kernel (one launch for every parameter)
    loss_every: int = 1  # batches between reads of the running loss (each read waits for the device)


class Scorer(Protocol[BatchT]):
    """One metric's scorer as the loop trains it (a BERT-RUBER cell, a MaUde variant)."""

    @property
    def module(self) -> torch.nn.Module: ...

    def epoch_batches(self) -> Sequence[BatchT]:
        """One epoch's mini-batches (drawn from the loop's generator and the metric's own)."""
        ...

    def batch_loss(self, batch: BatchT) -> tuple[torch.Tensor, int]:
        """The batch's mean loss, with gradients, and how many examples it averages."""
        ...

    def validate(self) -> Validation: ...


@dataclass(frozen=True)
class TrainedScorer:
    state: dict[str, Any]  # the kept epoch's weights, on the CPU
    curve: list[dict[str, float]]
    epoch_seconds: list[float]


@dataclass(frozen=True)
class TrainedCells:
    curves: dict[str, list[dict[str, float]]]
    results: dict[str, dict[str, float]]  # per scorer: the kept epoch and its figures
    timings: dict[str, dict[str, Any]]  # per scorer: seconds per epoch and in all


class EarlyStopping:
    """Keeps the weights of the best epoch so far; says when ``patience`` epochs in a row were no better."""

    def __init__(self, *, patience: int, higher_is_better: bool) -> None:
        self.patience = patience
        self.higher_is_better = higher_is_better
        self.best = -float("inf") if higher_is_better else float("inf")
        self.state: dict[str, Any] = {}
        self.stale = 0

    def should_stop(self, value: float, module: torch.nn.Module) -> bool:
        better = value > self.best if self.higher_is_better else value < self.best
        if better:
            self.best, self.stale = value, 0
            self.state = {name: tensor.detach().cpu().clone() for name, tensor in module.state_dict().items()}
            return False
        self.stale += 1
        return self.stale >= self.patience


def seed_generators(seed: int) -> None:
    """Seed Python's and numpy's global generators (torch's: per scorer, in :func:`train_scorer`)."""
    random.seed(seed)
    np.random.seed(seed)


@contextlib.contextmanager
def training_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``threads`` in the block (None: as they are), restored after."""
    import torch

    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def seconds_since(started: float) -> float:
    return round(time.perf_counter() - started, 3)


def train_cells(
    names: Sequence[str],
    build: Callable[[str, torch.Generator], Scorer[Any]],
    *,
    settings: LoopSettings,
    result_columns: Sequence[str],
    device: torch.device,
    output_dir: Path,
    progress: bool,
    on_progress: ProgressCallback | None,
) -> TrainedCells:
    """Train each of ``names`` (``build(name, generator)`` makes its scorer) and save its kept weights
    under ``output_dir``; the results give the kept epoch and its ``result_columns``."""
    import torch

    curves: dict[str, list[dict[str, float]]] = {}
    results: dict[str, dict[str, float]] = {}
    timings: dict[str, dict[str, Any]] = {}
    for index, name in enumerate(names, start=1):
        started = time.perf_counter()

        def cell_progress(report: TrainingReport, index: int = index) -> None:
            report_progress(on_progress, dataclasses.replace(report, cell_index=index, cells=len(names)))

        trained = train_scorer(
            name,
            functools.partial(build, name),
            settings=settings,
            device=device,
            progress=progress,
            on_progress=cell_progress if on_progress is not None else None,
        )
        torch.save(trained.state, output_dir / cell_weights_file(name))
        kept = settings.monitor.kept_row(trained.curve)
        curves[name] = trained.curve
        results[name] = {"best_epoch": kept["epoch"], **{column: kept[column] for column in result_columns}}
        timings[name] = {"epoch_seconds": trained.epoch_seconds, "total_seconds": seconds_since(started)}
    return TrainedCells(curves=curves, results=results, timings=timings)


def save_cells_artifact(
    output_dir: Path,
    kind: type[ArtifactT],
    *,
    config: dict[str, Any],
    vectors: WordVectors,
    cells: TrainedCells,
    timings: dict[str, Any],
    device: torch.device,
    content_hash: Callable[[Path], str],
) -> ArtifactT:
    """Write the config (with the cells' results), word2vec, curves and timings (with the device and
    threads) next to the saved weights, then ``hash.txt``; the artifact as ``kind``."""
    import torch

    timings["device"] = str(device)
    timings["torch_threads"] = torch.get_num_threads()
    config["results"] = cells.results
    write_shared_files(output_dir, config=config, vectors=vectors, curve=cells.curves, timings=timings)
    found = write_hash(output_dir, content_hash)
    return kind(path=output_dir, content_hash=found, config=config, curve=cells.curves)


def train_scorer(
    name: str,
    build: Callable[[torch.Generator], Scorer[BatchT]],
    *,
    settings: LoopSettings,
    device: torch.device,
    progress: bool,
    on_progress: ProgressCallback | None,
) -> TrainedScorer:
    """Train the scorer ``build(generator)`` makes (after seeding torch) by the loop of the module
    docstring; its kept weights, curve and seconds per epoch."""
    import torch
    from tqdm import tqdm

    torch.manual_seed(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    scorer = build(generator)
    module = scorer.module
    optimiser, scheduler = _optimiser(module, settings, device)
    monitor = settings.monitor
    stopping = EarlyStopping(patience=settings.patience, higher_is_better=monitor.higher_is_better)
    curve: list[dict[str, float]] = []
    epoch_seconds: list[float] = []
    for epoch in range(1, settings.epochs + 1):
        epoch_started = time.perf_counter()
        train_loss, steps = _train_epoch(
            scorer,
            optimiser,
            name,
            epoch,
            settings=settings,
            device=device,
            progress=progress,
            on_progress=on_progress,
        )
        validation = scorer.validate()
        row: dict[str, float] = {"epoch": epoch, "train_loss": round(train_loss, 6), **validation.columns}
        if scheduler is not None:
            row["learning_rate"] = optimiser.param_groups[0]["lr"]
        curve.append(row)
        epoch_seconds.append(seconds_since(epoch_started))
        report_progress(
            on_progress,
            TrainingReport(
                EPOCH_STAGE,
                epoch=epoch,
                epochs=settings.epochs,
                step=steps,
                steps=steps,
                loss=row["train_loss"],
                validation_accuracy=validation.accuracy,
                validation_loss=row[LOSS_COLUMN],
                cell=name,
            ),
        )
        if progress:
            tqdm.write(
                f"{name} epoch {epoch}: train loss {train_loss:.4f}, validation loss {validation.loss:.4f}, "
                f"accuracy {validation.accuracy:.4f}"
            )
        figure = monitor.value(validation)
        if scheduler is not None:
            scheduler.step(figure)
        if stopping.should_stop(figure, module):
            break
    return TrainedScorer(state=stopping.state, curve=curve, epoch_seconds=epoch_seconds)


def _optimiser(module: torch.nn.Module, settings: LoopSettings, device: torch.device) -> tuple[Any, Any]:
    """Adam (fused on CUDA when asked) and, with a plateau, its ``ReduceLROnPlateau`` (else None)."""
    import torch

    fused: dict[str, Any] = (
        {"fused": True} if settings.fused_on_cuda and device_settings(str(device)).is_cuda else {}
    )
    optimiser = torch.optim.Adam(module.parameters(), lr=settings.learning_rate, **fused)
    scheduler = (
        None
        if settings.plateau is None
        else torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimiser,
            mode="max" if settings.monitor.higher_is_better else "min",
            factor=settings.plateau.factor,
            patience=settings.plateau.patience,
        )
    )
    return optimiser, scheduler


def _train_epoch(
    scorer: Scorer[BatchT],
    optimiser: Any,
    name: str,
    epoch: int,
    *,
    settings: LoopSettings,
    device: torch.device,
    progress: bool,
    on_progress: ProgressCallback | None,
) -> tuple[float, int]:
    """One epoch of Adam over the scorer's batches; the epoch's mean training loss (summed on the device in
    float64, read every ``loss_every`` batches) and the number of batches."""
    import torch
    from tqdm import tqdm

    scorer.module.train()
    batches = scorer.epoch_batches()
    summed = torch.zeros((), dtype=torch.float64, device=device)
    count = 0
    bar = tqdm(batches, desc=f"{name} epoch {epoch}", disable=not progress, leave=False)
    for step, batch in enumerate(bar, start=1):
        loss, size = scorer.batch_loss(batch)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        summed += loss.detach().double() * size
        count += size
        last = step == len(batches)
        read_loss = step % settings.loss_every == 0 or last
        if progress and (step % POSTFIX_EVERY == 0 or last):
            bar.set_postfix(loss=f"{float(summed) / count:.4f}")
        if on_progress is not None:
            report_progress(
                on_progress,
                TrainingReport(
                    BATCH_STAGE,
                    epoch=epoch,
                    epochs=settings.epochs,
                    step=step,
                    steps=len(batches),
                    loss=float(summed) / count if read_loss else None,
                    cell=name,
                ),
            )
    bar.close()
    return float(summed) / count, len(batches)

"""What a trainer tells its caller while it trains, and how the caller stops it.

The trainers of RUBER, BERT-RUBER and MaUde take an optional ``on_progress`` callback and call it with a
:class:`TrainingReport`: at each stage (word2vec, encoding the utterances), after every mini-batch
(``stage="batch"``, cheap: the caller decides how often to write anything) and after every epoch with its
validation figures (``stage="epoch"``, the points of a training curve). To stop a training, the callback
raises :class:`TrainingCancelled`; the trainer lets it propagate, and the caller that made the output folder
removes it. Pure Python: the web app's Celery job writes the reports on a database row, the command line
shows tqdm bars instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

WORD2VEC_STAGE = "word2vec"
ENCODING_STAGE = "encoding"
BATCH_STAGE = "batch"
EPOCH_STAGE = "epoch"


class TrainingCancelled(Exception):
    """Raised by a progress callback to stop the training where it is; nothing is saved."""


@dataclass(frozen=True)
class TrainingReport:
    """One report. ``epoch`` of ``epochs`` (the maximum: early stopping may stop sooner); ``step`` of
    ``steps`` within the stage (batches of the epoch, word2vec epochs, texts encoded); ``loss`` the running
    mean training loss of the epoch (None when not read at this step: on a GPU reading it waits for the
    device); ``cell`` the BERT-RUBER cell or MaUde variant being trained, ``cell_index`` of ``cells``."""

    stage: str
    epoch: int = 0
    epochs: int = 0
    step: int = 0
    steps: int = 0
    loss: float | None = None
    validation_accuracy: float | None = None
    validation_loss: float | None = None
    cell: str = ""
    cell_index: int = 0
    cells: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


ProgressCallback = Callable[[TrainingReport], None]


def report_progress(on_progress: ProgressCallback | None, report: TrainingReport) -> None:
    """Call ``on_progress`` when there is one (a trainer's single call site for each report)."""
    if on_progress is not None:
        on_progress(report)


def word2vec_progress(
    on_progress: ProgressCallback | None, *, epochs: int, cells: int
) -> Callable[[int, int], None]:
    """Report the start of the word2vec stage (every learned metric's trainer trains word2vec first; RUBER's
    reports no ``cells``) and return the per-epoch callback for ``train_word2vec(on_epoch=...)``."""
    report_progress(on_progress, TrainingReport(WORD2VEC_STAGE, epochs=epochs, cells=cells))

    def on_epoch(done: int, total: int) -> None:
        report = TrainingReport(WORD2VEC_STAGE, epochs=epochs, step=done, steps=total, cells=cells)
        report_progress(on_progress, report)

    return on_epoch


@contextlib.contextmanager
def encoding_progress(
    on_progress: ProgressCallback | None, *, texts: int, epochs: int, cells: int, desc: str, progress: bool
) -> Iterator[Callable[[int], None]]:
    """The encoding stage's ``on_chunk`` callback (BERT-RUBER's and MaUde's trainers encode every distinct
    text once): each chunk of ``count`` texts moves a tqdm bar (``progress``) and is reported as step
    done-of-``texts``."""
    from tqdm import tqdm

    bar = tqdm(total=texts, desc=desc, unit="text", disable=not progress)
    done = 0

    def encoded_chunk(count: int) -> None:
        nonlocal done
        done += count
        bar.update(count)
        report = TrainingReport(ENCODING_STAGE, epochs=epochs, step=done, steps=texts, cells=cells)
        report_progress(on_progress, report)

    try:
        yield encoded_chunk
    finally:
        bar.close()

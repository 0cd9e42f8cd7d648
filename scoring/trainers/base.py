"""What every trainer of a learned metric is given and gives back, and the error of a model request.

A trainer turns a :class:`TrainingRequest` and its corpus into an artifact folder; the services around it
(:mod:`scoring.trained_model_services`) choose the folder, move it into place and register the model. The
request carries every kind's options; each trainer reads the ones of its kind and declares which
(:attr:`KindTrainer.options`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from scoring.metrics.training_progress import ProgressCallback


class TrainedModelError(ValueError):
    """A model that cannot be used or registered as asked, with what to do about it."""


@dataclass(frozen=True)
class TrainingRequest:
    kind: str  # "ruber", "bert-ruber", "maude" or "cross-ruber"
    name: str
    corpus_description: str
    epochs: int | None = None
    device: str | None = None
    language: str = "en"
    cells: Sequence[str] = ()  # BERT-RUBER only; empty: every cell
    threads: int | None = None  # torch CPU threads while training; None: the training's own default
    variants: Sequence[str] = ()  # MaUde only; empty: its default variants (maude, bert-nli)
    context_turns: int | None = None  # MaUde (None: the whole history), Cross-RUBER (None: its default, 3)
    pooling: str | None = None  # MaUde only: mean | max | mean-max of the encoder's token vectors
    # MaUde: utterance, order, drop, repeat (empty: all of them); Cross-RUBER: its kinds (empty: its default)
    negatives: Sequence[str] = ()
    frozen_layers: int | None = None  # Cross-RUBER only: k, MiniLM's lower layers frozen and cached
    interaction: str | None = None  # Cross-RUBER only: how the reply meets the context


# (the artifact's configuration, its learning curve, its content hash)
TrainedArtifact = tuple[dict[str, Any], Any, str]


class Trainer(Protocol):
    """Train a model of one kind into ``output_dir`` and say what was written."""

    def __call__(
        self,
        request: TrainingRequest,
        training: Sequence[Any],
        validation: Sequence[Any],
        output_dir: Path,
        progress: bool,
        on_progress: ProgressCallback | None,
    ) -> TrainedArtifact: ...


@dataclass(frozen=True)
class NameList:
    """A list of names the training of one kind takes (BERT-RUBER's cells, MaUde's variants): its request
    parameter ``key``, the training form's boxes (``choices``, ``initial`` ticked, ``label``, ``help_text``,
    the error ``none_ticked``), and ``checked``: given the names asked (empty: none named) and the corpus
    language, the names to train in their canonical order, or a ValueError saying what is wrong. ``owner``
    names the kind in the error of a request that gives the list to another kind ("cells are
    BERT-RUBER's")."""

    key: str
    owner: str
    label: str
    choices: tuple[str, ...]
    initial: tuple[str, ...]
    none_ticked: str
    checked: Callable[[list[str], str], list[str]]
    help_text: str = ""


# (the metrics a run asks for, the chosen model's name, its configuration): raises a TrainedModelError for a
# metric that needs a part of the model (a cell, a variant) the model was not trained with
TrainedCheck = Callable[[Sequence[str], str, Mapping[str, Any]], None]


@dataclass(frozen=True)
class KindTrainer:
    """Everything that differs between model kinds outside the metric core, declared by the kind's module:
    ``train`` the model, the ``label`` the forms offer and the kind's name in prose (``display_name``,
    "MaUde"), the ``name_lists`` its training takes, the other :class:`TrainingRequest` fields of its own
    it reads (``options``: "pooling", "negatives", ...; ``train_metric`` refuses their flags for a kind
    that reads none) and the synthetic ``negatives`` it knows, a check of the corpus language
    (``check_language`` raises a ValueError for one it cannot learn), whether it trains on whole dialogs
    rather than (query, reply) pairs, the cell (variant) its metric scores with, whose figures the model
    list shows (``scoring_cell``; "" for a model of one scorer), whether ``train_default_models`` trains
    it unless told otherwise (``trained_by_default``, with the ``train_metric`` arguments
    ``default_model_arguments``), and ``trained_check``, the check that a chosen model has the parts the
    run's metrics read."""

    kind: str
    label: str
    train: Trainer
    display_name: str
    name_lists: tuple[NameList, ...] = ()
    options: tuple[str, ...] = ()
    negatives: tuple[str, ...] = ()
    check_language: Callable[[str], None] | None = None
    trains_on_dialogs: bool = False
    scoring_cell: str = ""
    trained_by_default: bool = False
    default_model_arguments: tuple[str, ...] = ()
    trained_check: TrainedCheck | None = None

    def takes(self, option: str) -> bool:
        """Whether its training reads the request field ``option`` (one of its options or name lists)."""
        return option in self.options or any(names.key == option for names in self.name_lists)


def untrained_part_check(
    *, kind: str, key: str, noun: str, needed: Callable[[str], str | None]
) -> TrainedCheck:
    """A :data:`TrainedCheck` for a model whose configuration lists its trained parts under ``key``
    (BERT-RUBER's "cells", MaUde's "variants"): a metric whose part (``needed``: the part it reads, or None)
    the model lacks is refused, with the ``train_metric`` command that trains it."""

    def check(metrics: Sequence[str], model_name: str, config: Mapping[str, Any]) -> None:
        trained = list(config.get(key, []))
        for metric in metrics:
            part = needed(metric)
            if part and part not in trained:
                raise TrainedModelError(
                    f"{metric} needs the {noun} {part}, which the {model_name} model was not trained with "
                    f"(its {key}: {', '.join(trained) or 'none'}); train it with `manage.py train_metric "
                    f"{kind} --{key} {part} ...`"
                )

    return check


def common_overrides(request: TrainingRequest) -> dict[str, Any]:
    """The configuration every kind takes from a request: language, corpus, and epochs and device when
    the request sets them (the kind's own defaults otherwise)."""
    overrides: dict[str, Any] = {
        "language": request.language,
        "corpus_description": request.corpus_description,
    }
    if request.epochs is not None:
        overrides["epochs"] = request.epochs
    if request.device is not None:
        overrides["device"] = request.device
    return overrides


def torch_overrides(request: TrainingRequest) -> dict[str, Any]:
    """:func:`common_overrides` for a kind trained with torch: its CPU threads are ``torch_threads``."""
    overrides = common_overrides(request)
    if request.threads is not None:
        overrides["torch_threads"] = request.threads
    return overrides

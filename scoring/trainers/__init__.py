"""The trainers of the learned metrics, by model kind: a new learned metric is its trainer module here and
one line in :data:`_BUILTIN` (its specs name the same ``model_kind``); nothing else dispatches on kinds.

Each trainer (:class:`~scoring.trainers.base.Trainer`) reads the options of its kind from the request and
calls the pure metric core's training (``scoring.metrics.<kind>.training``), imported only when a model of
that kind is trained (torch and the encoders load on demand).
"""

from __future__ import annotations

from scoring.metrics.learned_specs import BERT_RUBER_KIND, CROSS_RUBER_KIND, MAUDE_KIND, RUBER_KIND
from scoring.trainers.base import TrainedModelError, Trainer, TrainingRequest
from scoring.trainers.bert_ruber import bert_ruber_train
from scoring.trainers.cross_ruber import cross_ruber_train
from scoring.trainers.maude import maude_train
from scoring.trainers.ruber import ruber_train

_BUILTIN: dict[str, Trainer] = {
    RUBER_KIND: ruber_train,
    BERT_RUBER_KIND: bert_ruber_train,
    MAUDE_KIND: maude_train,
    CROSS_RUBER_KIND: cross_ruber_train,
}
_TRAINERS: dict[str, Trainer] = dict(_BUILTIN)


def register_trainer(kind: str, trainer: Trainer) -> None:
    """Make ``trainer`` the trainer of models of ``kind`` (one per kind)."""
    if kind in _TRAINERS:
        raise ValueError(f"a trainer of {kind!r} models is already registered")
    _TRAINERS[kind] = trainer


def trainer_kinds() -> list[str]:
    """Every kind of model that can be trained, in registration order."""
    return list(_TRAINERS)


def trainer_for(kind: str) -> Trainer:
    """The trainer of ``kind``; a TrainedModelError naming the kinds there are otherwise."""
    try:
        return _TRAINERS[kind]
    except KeyError:
        raise TrainedModelError(
            f"unknown model kind {kind!r}; choose one of {', '.join(_TRAINERS)}"
        ) from None


__all__ = [
    "TrainedModelError",
    "Trainer",
    "TrainingRequest",
    "register_trainer",
    "trainer_for",
    "trainer_kinds",
]

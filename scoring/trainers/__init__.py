"""The trainers of the learned metrics, by model kind: a new learned metric is its trainer module here and
one line in :data:`_BUILTIN` (its specs name the same ``model_kind``); nothing else dispatches on kinds.

Each kind's module declares a :class:`~scoring.trainers.base.KindTrainer`: how it trains (reading the
options of its kind from the request and calling the pure metric core's training,
``scoring.metrics.<kind>.training``, imported only when a model of that kind is trained: torch and the
encoders load on demand), the label the forms offer, the name lists its training takes (the checks of the
training service and the boxes of the training form), the other options it reads and the negatives it
knows (the checks of ``manage.py train_metric``), its language check, whether it trains on dialogs, the
cell whose figures the model list shows, whether ``manage.py train_default_models`` trains it, and the
check that a chosen model has the cells (variants) a run's metrics read. The model kind's choices of the
models, forms and API are :func:`model_kind_choices`: a choice list that is no database constraint, so
adding a kind needs no migration.
"""

from __future__ import annotations

from scoring.trainers.base import KindTrainer, NameList, TrainedModelError, Trainer, TrainingRequest
from scoring.trainers.bert_ruber import BERT_RUBER_TRAINER
from scoring.trainers.cross_ruber import CROSS_RUBER_TRAINER
from scoring.trainers.maude import MAUDE_TRAINER
from scoring.trainers.ruber import RUBER_TRAINER

# registration order is the order of the forms' choices and of train_default_models' training
_BUILTIN: tuple[KindTrainer, ...] = (RUBER_TRAINER, BERT_RUBER_TRAINER, MAUDE_TRAINER, CROSS_RUBER_TRAINER)
_TRAINERS: dict[str, KindTrainer] = {trainer.kind: trainer for trainer in _BUILTIN}


def register_trainer(trainer: KindTrainer) -> None:
    """Make ``trainer`` the trainer of models of its kind (one per kind)."""
    if trainer.kind in _TRAINERS:
        raise ValueError(f"a trainer of {trainer.kind!r} models is already registered")
    _TRAINERS[trainer.kind] = trainer


def trainer_kinds() -> list[str]:
    """Every kind of model that can be trained, in registration order."""
    return list(_TRAINERS)


def kind_trainers() -> list[KindTrainer]:
    """Every registered kind's trainer, in registration order."""
    return list(_TRAINERS.values())


def kind_trainer(kind: str) -> KindTrainer:
    """The trainer of ``kind``; a TrainedModelError naming the kinds there are otherwise."""
    try:
        return _TRAINERS[kind]
    except KeyError:
        raise TrainedModelError(
            f"unknown model kind {kind!r}; choose one of {', '.join(_TRAINERS)}"
        ) from None


def trainer_for(kind: str) -> Trainer:
    """The function that trains a model of ``kind`` (see :func:`kind_trainer`)."""
    return kind_trainer(kind).train


def model_kind_choices() -> list[tuple[str, str]]:
    """``(kind, label)`` of every registered kind: the choices of the model kind fields, forms and API."""
    return [(trainer.kind, trainer.label) for trainer in _TRAINERS.values()]


def dialog_kinds() -> tuple[str, ...]:
    """The kinds trained on whole dialogs (context, reply) rather than on (query, reply) pairs."""
    return tuple(trainer.kind for trainer in _TRAINERS.values() if trainer.trains_on_dialogs)


def default_kinds() -> tuple[str, ...]:
    """The kinds ``manage.py train_default_models`` trains unless told otherwise, in registration order."""
    return tuple(trainer.kind for trainer in _TRAINERS.values() if trainer.trained_by_default)


def name_list_keys() -> list[str]:
    """The keys of every kind's name lists ("cells", "variants"), in registration order."""
    return [names.key for trainer in _TRAINERS.values() for names in trainer.name_lists]


def kinds_taking(option: str) -> tuple[str, ...]:
    """The kinds whose training reads the request field ``option`` (a name list or another option)."""
    return tuple(trainer.kind for trainer in _TRAINERS.values() if trainer.takes(option))


__all__ = [
    "KindTrainer",
    "NameList",
    "TrainedModelError",
    "Trainer",
    "TrainingRequest",
    "default_kinds",
    "dialog_kinds",
    "kind_trainer",
    "kind_trainers",
    "kinds_taking",
    "model_kind_choices",
    "name_list_keys",
    "register_trainer",
    "trainer_for",
    "trainer_kinds",
]

"""Trained models of the learned metrics: train and register one, choose one for a study, and resolve the
models a scoring run uses.

Training itself is the pure metric core's, called by the trainer of the model's kind
(:mod:`scoring.trainers`, keyed by model kind); this module puts the artifact folder under
``settings.DIALEVAL_MODEL_DIR`` and records it as a :class:`~scoring.models.TrainedModel`. A run records
the id, name, path and content hash of every model it uses (``ScoringRun.trained_models``), so that its
scores' signatures name the exact artifact, and the worker refuses a folder whose files changed since.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from annotation.models import Study
from scoring.metrics.maude.dialogs import DIALOGS_JSONL, Dialog, read_dialogs, split_dialogs
from scoring.metrics.ruber.artifact import HASH_FILE
from scoring.metrics.ruber.corpus import (
    DAILYDIALOG,
    PAIRS_JSONL,
    CorpusError,
    QueryReplyPair,
    read_corpus,
    split_validation,
)
from scoring.metrics.training_progress import ProgressCallback
from scoring.models import ACTIVE_TRAINING_STATUSES, StudyModelChoice, TrainedModel, TrainingJob
from scoring.selectors import trained_model_for_study, training_job_awaited
from scoring.trainers import (
    TrainedModelError,
    TrainingRequest,
    dialog_kinds,
    kind_trainers,
    name_list_keys,
    trainer_for,
    trainer_kinds,
)
from scoring.training.model_figures import figures_compute


@dataclass(frozen=True)
class TrainingCorpus:
    """What a model trains on: pairs (RUBER, BERT-RUBER) or dialogs (MaUde, Cross-RUBER), and what
    validates it."""

    training: list[Any]
    validation: list[Any]
    description: str

    @property
    def example_count(self) -> int:
        return example_count(self.training)


def example_count(items: Sequence[Any]) -> int:
    """(query, reply) pairs, or MaUde's (context, reply) examples: every turn after a dialog's first."""
    if not items or isinstance(items[0], QueryReplyPair):
        return len(items)
    return sum(max(0, len(dialog) - 1) for dialog in items)


def training_corpus_formats(kind: str) -> tuple[str, ...]:
    """The corpus formats a model of ``kind`` trains on (MaUde and Cross-RUBER read whole dialogs too)."""
    if kind in dialog_kinds():
        return (DAILYDIALOG, DIALOGS_JSONL, PAIRS_JSONL)
    return (DAILYDIALOG, PAIRS_JSONL)


def training_corpus_load(
    *,
    kind: str,
    path: Path,
    corpus_format: str,
    validation: Path | None = None,
    max_pairs: int | None = None,
) -> TrainingCorpus:
    """Read a training corpus with the metric core's loaders (``ruber.corpus``, ``maude.dialogs``).

    Given DailyDialog's root folder, training uses its ``train/`` split and early stopping its
    ``validation/`` split; a corpus without a validation split (or ``validation``) keeps 5% of its pairs
    (MaUde: of its dialogs) for validation, drawn with seed 0. A bad corpus raises ``CorpusError`` naming the
    file and line."""
    path = Path(path)
    if corpus_format not in training_corpus_formats(kind):
        raise CorpusError(
            f"format {corpus_format!r}: a {kind} model trains on {' or '.join(training_corpus_formats(kind))}"
        )
    if corpus_format == DAILYDIALOG and (path / "train").is_dir():
        path = path / "train"  # the corpus's root folder: train on its training split
    if max_pairs is not None and max_pairs < 2:
        raise CorpusError(f"at most {max_pairs} pairs: training needs at least 2")
    dialogs = kind in dialog_kinds()

    def read(source: Path) -> list[Any]:
        if dialogs:
            return list(read_dialogs(source, corpus_format=corpus_format))
        return list(read_corpus(source, corpus_format=corpus_format))

    training = read(path)
    if max_pairs:
        training = training[:max_pairs]
    validation_path = validation or _sibling_validation(path, corpus_format)
    description = f"{path} ({corpus_format})"
    if validation_path is not None:
        return TrainingCorpus(training, read(validation_path), f"{description}; validation {validation_path}")
    if dialogs:
        kept, held = split_dialogs(training, seed=0)
        return TrainingCorpus(
            list(kept), list(held), f"{description}; validation: 5% of the dialogs held out (seed 0)"
        )
    kept_pairs, held_pairs = split_validation(training, seed=0)
    return TrainingCorpus(
        list(kept_pairs), list(held_pairs), f"{description}; validation: 5% held out (seed 0)"
    )


def _sibling_validation(corpus: Path, corpus_format: str) -> Path | None:
    """DailyDialog's layout: train/, validation/, test/ side by side."""
    if corpus_format != DAILYDIALOG or not corpus.is_dir() or corpus.name != "train":
        return None
    sibling = corpus.parent / "validation"
    return sibling if sibling.is_dir() else None


def train_command(kind: str) -> str:
    """The command that trains a model of ``kind`` on DailyDialog and makes it the default."""
    return (
        f"python manage.py train_metric {kind} --corpus ../shared/data/dailydialog "
        f"--format dailydialog --name dd-{kind} --default"
    )


def train_hint(kind: str) -> str:
    """The command that trains a model of ``kind`` on DailyDialog, for error messages."""
    return f"train one with `{train_command(kind)}`"


def missing_models_text(kinds: Sequence[str]) -> str:
    """The start of a refusal that names every kind of model ``kinds`` lacks at once ("The requested ruber
    and maude metrics need a trained ruber model and a trained maude model"): naming the first alone had a
    researcher train one model, ask again, and only then learn of the next."""
    return (
        f"The requested {words_and(kinds)} metrics need "
        f"{words_and([f'a trained {kind} model' for kind in kinds])}"
    )


def words_and(words: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def trained_model_train(
    *,
    request: TrainingRequest,
    pairs: Sequence[QueryReplyPair] | Sequence[Dialog],
    validation_pairs: Sequence[QueryReplyPair] | Sequence[Dialog],
    make_default: bool = False,
    user: User | None = None,
    progress: bool = True,
    on_progress: ProgressCallback | None = None,
    training_job_id: int | None = None,
) -> TrainedModel:
    """Train a model of ``request.kind`` and register it under ``request.name``. RUBER and BERT-RUBER
    train on query-reply ``pairs``, MaUde and Cross-RUBER on whole dialogs (``scoring.metrics.maude.dialogs``).

    The artifact is written to a temporary folder beside its final place and moved there only when training
    succeeded, so a failed or interrupted training (``on_progress`` raising ``TrainingCancelled``, say)
    leaves no half-written model behind. ``training_job_id``: the training job this trains for (the name
    that job holds is free for it; any other active job's name is not).
    """
    if request.kind not in trainer_kinds():
        raise TrainedModelError(
            f"unknown model kind {request.kind!r}; choose one of {', '.join(trainer_kinds())}"
        )
    if TrainedModel.objects.filter(name=request.name).exists():
        raise TrainedModelError(f"a trained model named {request.name!r} exists already; choose another name")
    training = TrainingJob.objects.filter(name=request.name, status__in=ACTIVE_TRAINING_STATUSES)
    if training_job_id is not None:
        training = training.exclude(pk=training_job_id)
    job = training.first()
    if job is not None:
        raise TrainedModelError(
            f"training job {job.pk} is training a model named {request.name!r}; choose another name"
        )
    root = Path(settings.DIALEVAL_MODEL_DIR) / request.kind
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{request.name}-", dir=root))
    try:
        artifact_config, curve, content_hash = trainer_for(request.kind)(
            request, pairs, validation_pairs, scratch, progress, on_progress
        )
        final = root / f"{request.name}-{content_hash[:12]}"
        if final.exists():
            shutil.rmtree(final)
        scratch.rename(final)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return trained_model_register(
        name=request.name,
        kind=request.kind,
        path=final,
        content_hash=content_hash,
        language=request.language,
        corpus=request.corpus_description,
        config=artifact_config,
        curve=curve,
        make_default=make_default,
        user=user,
        pairs=example_count(pairs),
    )


@transaction.atomic
def trained_model_register(
    *,
    name: str,
    kind: str,
    path: Path,
    content_hash: str,
    language: str,
    corpus: str,
    config: Mapping[str, Any],
    curve: Any,
    make_default: bool = False,
    user: User | None = None,
    pairs: int | None = None,
) -> TrainedModel:
    """Record an artifact folder as a trained model (and, with ``make_default``, the default of its kind),
    with the figures the model list shows (pairs, epochs, the scoring cell's validation accuracy, size)."""
    if make_default:
        TrainedModel.objects.filter(kind=kind, is_default=True).update(is_default=False)
    figures = figures_compute(config=config, curve=curve, path=path, pairs=pairs, kind=kind)
    return TrainedModel.objects.create(
        name=name,
        kind=kind,
        path=str(Path(path).resolve()),
        content_hash=content_hash,
        language=language,
        corpus=corpus[:500],
        config=dict(config),
        curve=curve,
        is_default=make_default,
        created_by=user,
        pairs=figures.pairs,
        epochs=figures.epochs,
        validation_accuracy=figures.validation_accuracy,
        size_bytes=figures.size_bytes,
    )


@transaction.atomic
def study_model_choose(*, study: Study, trained_model: TrainedModel | None, kind: str) -> None:
    """Make ``trained_model`` the study's model of ``kind``; None goes back to the default."""
    if kind not in trainer_kinds():
        raise TrainedModelError(f"unknown model kind {kind!r}; choose one of {', '.join(trainer_kinds())}")
    if trained_model is None:
        StudyModelChoice.objects.filter(study=study, kind=kind).delete()
        return
    if trained_model.kind != kind:
        raise TrainedModelError(f"{trained_model.name} is a {trained_model.kind} model, not a {kind} model")
    if trained_model.language != study.language:
        raise TrainedModelError(
            f"{trained_model.name} was trained on {trained_model.language!r} text; "
            f"the study is in {study.language!r}"
        )
    StudyModelChoice.objects.update_or_create(
        study=study, kind=kind, defaults={"trained_model": trained_model}
    )


def scoring_models_resolve(
    *, study: Study, kinds: Sequence[str], names: Sequence[str] = ()
) -> dict[str, TrainedModel]:
    """The model of each of ``kinds`` a run on ``study`` uses: one named in ``names``, else the study's
    choice, else the default. A kind without any raises :class:`TrainedModelError` saying how to train one
    (or which training job is still making it); an unknown name, or a name whose kind no requested metric
    needs, too."""
    resolved = scoring_models_resolve_or_wait(study=study, kinds=kinds, names=names)
    if resolved.training:
        kind, job = next(iter(resolved.training.items()))
        raise TrainedModelError(
            f"the {kind} model {job.name} is still being trained (training job {job.pk}); wait for it, or "
            "start the run through the worker, which waits for it"
        )
    return resolved.models


@dataclass(frozen=True)
class ResolvedModels:
    """The models a run uses, and for kinds whose model is still being trained, the training job."""

    models: dict[str, TrainedModel]
    training: dict[str, TrainingJob]


def scoring_models_resolve_or_wait(
    *, study: Study, kinds: Sequence[str], names: Sequence[str] = ()
) -> ResolvedModels:
    """As :func:`scoring_models_resolve`, but a kind whose model does not exist yet while an active
    training job will make it (the job named in ``names``, or a job that will be the study's choice or the
    default) resolves to that job (the run waits for it)."""
    named: dict[str, TrainedModel | TrainingJob] = {}
    for name in dict.fromkeys(names):
        found: TrainedModel | TrainingJob | None = TrainedModel.objects.filter(name=name).first()
        if found is None:
            found = TrainingJob.objects.filter(name=name, status__in=ACTIVE_TRAINING_STATUSES).first()
        if found is None:
            known = ", ".join(TrainedModel.objects.values_list("name", flat=True)) or "none yet"
            raise TrainedModelError(f"no trained model named {name!r} (trained models: {known})")
        if found.kind in named:
            raise TrainedModelError(f"two {found.kind} models named: {named[found.kind].name} and {name}")
        if found.kind not in kinds:
            raise TrainedModelError(f"{name} is a {found.kind} model, but no requested metric uses one")
        named[found.kind] = found
    models: dict[str, TrainedModel] = {}
    training: dict[str, TrainingJob] = {}
    missing: list[str] = []
    for kind in dict.fromkeys(kinds):
        chosen = named.get(kind) or trained_model_for_study(study=study, kind=kind)
        if chosen is None:
            chosen = training_job_awaited(study=study, kind=kind)
        if chosen is None:
            missing.append(kind)
        elif isinstance(chosen, TrainingJob):
            training[kind] = chosen
        else:
            models[kind] = chosen
    if missing:
        one = len(missing) == 1
        raise TrainedModelError(
            f"{missing_models_text(missing)}, and the study has {'none' if one else 'none of these'} selected "
            f"and there is no default: train {'one' if one else 'them'} from the study page (Train a model), "
            f"or with {' and '.join(train_command(kind) for kind in missing)}."
        )
    return ResolvedModels(models=models, training=training)


def training_job_planned_model(job: TrainingJob) -> TrainedModel:
    """An unsaved model standing for what ``job`` will register: its name, kind and the name lists it
    trains (BERT-RUBER's cells, MaUde's variants), each under its key and all of them under "cells" as its
    artifact lists its trained scorers, for :func:`trained_cells_check` before the model exists."""
    parameters = job.parameters or {}
    lists = {key: list(parameters.get(key) or ()) for key in name_list_keys()}
    scorers = [name for names in lists.values() for name in names]
    return TrainedModel(name=job.name, kind=job.kind, config={**lists, "cells": scorers})


def trained_cells_check(*, metrics: Sequence[str], trained: Mapping[str, TrainedModel]) -> None:
    """Refuse a metric that reads a part of its model (BERT-RUBER's factorial cell, MaUde's variant) the
    chosen model was not trained with: the check of each kind's trainer, over its chosen model."""
    for trainer in kind_trainers():
        model = trained.get(trainer.kind)
        if model is not None and trainer.trained_check is not None:
            trainer.trained_check(metrics, model.name, model.config)


def run_model_record(model: TrainedModel) -> dict[str, Any]:
    """What a scoring run stores about a model it uses."""
    return {"id": model.pk, "name": model.name, "hash": model.content_hash, "path": model.path}


def run_model_paths(records: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """``{kind: artifact folder}`` of a run's models, after checking each folder still has the recorded
    hash (``hash.txt``; the loader then re-hashes the files themselves)."""
    paths = {}
    for kind, record in records.items():
        path = Path(str(record["path"]))
        hash_file = path / HASH_FILE
        if not hash_file.is_file():
            raise TrainedModelError(f"the {kind} model {record['name']} is missing: no {hash_file}")
        on_disk = hash_file.read_text(encoding="utf-8").strip()
        if on_disk != record["hash"]:
            raise TrainedModelError(
                f"the {kind} model {record['name']} at {path} has changed since the run was created "
                f"(hash {on_disk[:12]}, expected {str(record['hash'])[:12]})"
            )
        paths[kind] = str(path)
    return paths

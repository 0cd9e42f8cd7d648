"""Trained models of the learned metrics: train and register one, choose one for a study, and resolve the
models a scoring run uses.

Training itself is the pure metric core's (``scoring.metrics.ruber.training.train_ruber``,
``scoring.metrics.bert_ruber.train_bert_ruber``); this module puts the artifact folder under
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
from scoring.metrics.learned_specs import BERT_RUBER_KIND, MAUDE_KIND, MODEL_KINDS, RUBER_KIND
from scoring.metrics.maude.dialogs import Dialog
from scoring.metrics.maude_specs import maude_variant
from scoring.metrics.registry import metric_spec
from scoring.metrics.ruber.artifact import HASH_FILE
from scoring.metrics.ruber.corpus import QueryReplyPair
from scoring.models import StudyModelChoice, TrainedModel
from scoring.selectors import trained_model_for_study


class TrainedModelError(ValueError):
    """A model that cannot be used or registered as asked, with what to do about it."""


@dataclass(frozen=True)
class TrainingRequest:
    kind: str  # "ruber", "bert-ruber" or "maude"
    name: str
    corpus_description: str
    epochs: int | None = None
    device: str | None = None
    language: str = "en"
    cells: Sequence[str] = ()  # BERT-RUBER only; empty: every cell
    threads: int | None = None  # torch CPU threads while training; None: the training's own default
    variants: Sequence[str] = ()  # MaUde only; empty: its default variants (maude, bert-nli)
    context_turns: int | None = None  # MaUde only; None: the whole history
    pooling: str | None = None  # MaUde only: mean | max | mean-max of the encoder's token vectors
    negatives: Sequence[str] = ()  # MaUde only: utterance, order, drop, repeat; empty: all of them


def train_hint(kind: str) -> str:
    """The command that trains a model of ``kind`` on DailyDialog, for error messages."""
    return (
        f"train one with `python manage.py train_metric {kind} --corpus ../shared/data/dailydialog "
        f"--format dailydialog --name dd-{kind} --default`"
    )


def trained_model_train(
    *,
    request: TrainingRequest,
    pairs: Sequence[QueryReplyPair] | Sequence[Dialog],
    validation_pairs: Sequence[QueryReplyPair] | Sequence[Dialog],
    make_default: bool = False,
    user: User | None = None,
    progress: bool = True,
) -> TrainedModel:
    """Train a model of ``request.kind`` and register it under ``request.name``. RUBER and BERT-RUBER
    train on query-reply ``pairs``, MaUde on whole dialogs (``scoring.metrics.maude.dialogs``).

    The artifact is written to a temporary folder beside its final place and moved there only when training
    succeeded, so a failed or interrupted training leaves no half-written model behind.
    """
    if request.kind not in MODEL_KINDS:
        raise TrainedModelError(
            f"unknown model kind {request.kind!r}; choose one of {', '.join(MODEL_KINDS)}"
        )
    if TrainedModel.objects.filter(name=request.name).exists():
        raise TrainedModelError(f"a trained model named {request.name!r} exists already; choose another name")
    root = Path(settings.DIALEVAL_MODEL_DIR) / request.kind
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{request.name}-", dir=root))
    try:
        artifact_config, curve, content_hash = _train(request, pairs, validation_pairs, scratch, progress)
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
) -> TrainedModel:
    """Record an artifact folder as a trained model (and, with ``make_default``, the default of its kind)."""
    if make_default:
        TrainedModel.objects.filter(kind=kind, is_default=True).update(is_default=False)
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
    )


@transaction.atomic
def study_model_choose(*, study: Study, trained_model: TrainedModel | None, kind: str) -> None:
    """Make ``trained_model`` the study's model of ``kind``; None goes back to the default."""
    if kind not in MODEL_KINDS:
        raise TrainedModelError(f"unknown model kind {kind!r}; choose one of {', '.join(MODEL_KINDS)}")
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
    choice, else the default. A kind without any raises :class:`TrainedModelError` saying how to train one;
    an unknown name, or a name whose kind no requested metric needs, too."""
    named: dict[str, TrainedModel] = {}
    for name in dict.fromkeys(names):
        found = TrainedModel.objects.filter(name=name).first()
        if found is None:
            known = ", ".join(TrainedModel.objects.values_list("name", flat=True)) or "none yet"
            raise TrainedModelError(f"no trained model named {name!r} (trained models: {known})")
        if found.kind in named:
            raise TrainedModelError(f"two {found.kind} models named: {named[found.kind].name} and {name}")
        if found.kind not in kinds:
            raise TrainedModelError(f"{name} is a {found.kind} model, but no requested metric uses one")
        named[found.kind] = found
    resolved: dict[str, TrainedModel] = {}
    for kind in dict.fromkeys(kinds):
        model = named.get(kind) or trained_model_for_study(study=study, kind=kind)
        if model is None:
            raise TrainedModelError(
                f"the requested {kind} metrics need a trained {kind} model, and the study has none selected "
                f"and there is no default; {train_hint(kind)}"
            )
        resolved[kind] = model
    return resolved


def trained_cells_check(*, metrics: Sequence[str], trained: Mapping[str, TrainedModel]) -> None:
    """Refuse BERT-RUBER metrics whose factorial cell, and MaUde metrics whose variant, the chosen model
    was not trained with."""
    maude = trained.get(MAUDE_KIND)
    if maude is not None:
        variants = list(maude.config.get("variants", []))
        for name in metrics:
            variant = maude_variant(name)
            if variant and variant not in variants:
                raise TrainedModelError(
                    f"{name} needs the variant {variant}, which the {maude.name} model was not trained with "
                    f"(its variants: {', '.join(variants) or 'none'}); train it with `manage.py train_metric "
                    f"maude --variants {variant} ...`"
                )
    model = trained.get(BERT_RUBER_KIND)
    if model is None:
        return
    cells = list(model.config.get("cells", []))
    for name in metrics:
        spec = metric_spec(name)
        cell = spec.parameters.get("cell") if spec.model_kind == BERT_RUBER_KIND else None
        if cell and cell not in cells:
            raise TrainedModelError(
                f"{name} needs the cell {cell}, which the {model.name} model was not trained with "
                f"(its cells: {', '.join(cells) or 'none'}); train it with `manage.py train_metric bert-ruber "
                f"--cells {cell} ...`"
            )


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


def _train(
    request: TrainingRequest,
    pairs: Sequence[Any],
    validation_pairs: Sequence[Any],
    output_dir: Path,
    progress: bool,
) -> tuple[dict[str, Any], Any, str]:
    overrides: dict[str, Any] = {
        "language": request.language,
        "corpus_description": request.corpus_description,
    }
    if request.epochs is not None:
        overrides["epochs"] = request.epochs
    if request.device is not None:
        overrides["device"] = request.device
    if request.kind == RUBER_KIND:
        from scoring.metrics.ruber.training import RuberConfig, train_ruber

        if request.threads is not None:
            overrides["threads"] = request.threads
        ruber = train_ruber(
            pairs, validation_pairs, config=RuberConfig(**overrides), output_dir=output_dir, progress=progress
        )
        return ruber.config, ruber.curve, ruber.content_hash
    if request.threads is not None:
        overrides["torch_threads"] = request.threads
    if request.kind == MAUDE_KIND:
        from scoring.metrics.maude.training import MaudeConfig, train_maude

        if request.variants:
            overrides["variants"] = tuple(request.variants)
        if request.pooling:
            overrides["pooling"] = request.pooling
        if request.negatives:
            overrides["negatives"] = tuple(request.negatives)
        overrides["context_turns"] = request.context_turns
        maude = train_maude(
            pairs, validation_pairs, config=MaudeConfig(**overrides), output_dir=output_dir, progress=progress
        )
        return maude.config, maude.curve, maude.content_hash
    assert request.kind == BERT_RUBER_KIND
    from scoring.metrics.bert_ruber import BertRuberConfig, train_bert_ruber

    if request.cells:
        overrides["cells"] = tuple(request.cells)
    bert = train_bert_ruber(
        pairs, validation_pairs, config=BertRuberConfig(**overrides), output_dir=output_dir, progress=progress
    )
    return bert.config, bert.curve, bert.content_hash

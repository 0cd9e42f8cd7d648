"""A multi-reference metric recomputed against each reference on its own, for the number-of-references
curve of the correlation report (Gupta et al., 2019, section 5.3 and Figure 2).

A multi-reference score is the best match over the context's references (Gupta et al., 2019, eq. 1:
score(y, R) = max over r in R of d(y, r)); the curve needs d(y, r) for every reference r, which the stored
score does not keep. They are recomputed from the signature's own parameters (tokenizer, smoothing,
trained model) by a scoring run's 'per-reference' chunks, for the replies the report asks for
(scoring/services/report_scores.py), so that the curve's k = N point is the stored multi-reference score
whenever the context's references are unchanged; the report only reads them (:func:`per_reference_read`).

Only signatures whose metric combines references by ``max`` and is not normalised over the whole set
qualify; for any other the reason is returned instead. The values are kept per (signature, reply) in
:class:`~scoring.models.PerReferenceScore` with a key of the references they were computed against, so a new
rating (which changes the report but no reference) recomputes nothing, and a collected reference only the
replies of its context.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from annotation.models import Response, Study
from scoring.metrics.implementation_choice import default_implementation
from scoring.metrics.registry import UnknownMetricError, compute_metrics, metric_spec
from scoring.metrics.spec import (
    DEFAULT_REFERENCE_AGGREGATION,
    MODEL_PARAMETER,
    MetricImplementation,
    MetricSpec,
    VectorsChoice,
)
from scoring.metrics.tokenize import DEFAULT_TOKENIZER, WHITESPACE_TOKENIZER, tokenizer_name
from scoring.metrics.word_vectors import GLOVE_6B_50D_NAME
from scoring.models import MetricSignature, PerReferenceScore, TrainedModel
from scoring.services.word_vectors import WordVectorsError, word_vectors_record

BATCH_PAIRS = 2048
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class PerReferenceScores:
    """response id -> the metric against each reference of its context, in reference id order."""

    scores: dict[int, tuple[float, ...]]
    width: int  # the most references any of the replies has


class NotRecomputable(ValueError):
    """The signature's per-reference scores cannot be recomputed; the message says why."""


def recomputable_reason(*, signature: MetricSignature, language: str, name: str = "") -> str:
    """Why ``signature`` cannot be recomputed per reference, or "" when it can; the metric is called ``name``
    (the report's display name, which tells apart two signatures of one metric), else by its own name."""
    called = name or signature.name
    try:
        spec = metric_spec(signature.name)
    except UnknownMetricError:
        return f"{called} is not a metric of this app, so it cannot be recomputed per reference"
    parameters = signature.parameters
    if parameters.get("refs") != "multi":
        return ""
    if not spec.needs_references or spec.whole_set:
        return f"{called} is normalised over the whole set; its per-reference scores are not defined"
    if parameters.get("refagg", DEFAULT_REFERENCE_AGGREGATION) != DEFAULT_REFERENCE_AGGREGATION:
        return f"{called} combines references by {parameters.get('refagg')}, not by the best match"
    if spec.implementations and _implementation(spec, parameters) is None:
        return f"{called} has no {parameters.get('impl')} implementation any more"
    implementation = _implementation(spec, parameters)
    version = implementation.version if implementation is not None else spec.version
    if version != parameters.get("version", version):
        return f"{called} has changed since these scores (version {parameters.get('version')})"
    own_tokenizer = implementation is not None and implementation.own_tokenizer  # its tool's tokenizer
    if (
        spec.uses_tokenizer
        and not spec.model_kind
        and not own_tokenizer
        and _tokenizer(parameters, language) is None
    ):
        return f"{called} was scored with tokenizer {parameters.get('tok')}, which is not available here"
    if spec.model_kind and not TrainedModel.objects.filter(content_hash=parameters.get("model", "")).exists():
        return f"the trained model of {called} (hash {str(parameters.get('model'))[:12]}) is not registered"
    if spec.reads_vectors:
        try:
            _vectors(signature)
        except NotRecomputable as error:
            return str(error)
    return ""


def _vectors(signature: MetricSignature) -> VectorsChoice | None:
    """The registered word vectors a signature's scores were computed with (None: the built-in GloVe)."""
    name = str(signature.parameters.get("vectors", GLOVE_6B_50D_NAME))
    if name == GLOVE_6B_50D_NAME:
        return None
    try:
        record = word_vectors_record(name)
    except WordVectorsError:
        raise NotRecomputable(
            f"the word vectors {name} of {signature.name} are no longer registered"
        ) from None
    if record["hash"] != signature.artifact_hash:
        raise NotRecomputable(f"the word vectors {name} of {signature.name} have changed since these scores")
    return VectorsChoice(name=name, folder=str(record["path"]), content_hash=str(record["hash"]))


def per_reference_stale(
    *, study: Study, signature: MetricSignature, response_ids: Sequence[int]
) -> list[int]:
    """The replies among ``response_ids`` (of ``study``, by id) whose values for ``signature`` are not kept,
    or were computed against other references than their context's current ones."""
    stored = _stored(signature, response_ids)
    return [
        response.pk
        for response, key in _replies_with_keys(study, response_ids)
        if stored.get(response.pk, ("", []))[0] != key
    ]


def per_reference_read(
    *, study: Study, signature: MetricSignature, response_ids: Sequence[int]
) -> PerReferenceScores:
    """The kept values of ``signature`` for ``response_ids`` that are current (computed against the
    replies' current references); a reply without such values is left out. Reads only."""
    stored = _stored(signature, response_ids)
    scores: dict[int, tuple[float, ...]] = {}
    for response, key in _replies_with_keys(study, response_ids):
        known = stored.get(response.pk)
        if known is not None and known[0] == key:
            scores[response.pk] = tuple(float("nan") if value is None else float(value) for value in known[1])
    return PerReferenceScores(scores=scores, width=max((len(row) for row in scores.values()), default=0))


def per_reference_compute(
    *,
    study: Study,
    signature: MetricSignature,
    response_ids: Sequence[int],
    progress: Progress | None = None,
) -> list[PerReferenceScore]:
    """The signature's metric for each (reply, reference) pair of ``response_ids``, as unsaved rows (a
    scoring run's 'per-reference' chunk stores them under its fence: scoring/services/report_scores.py);
    raises :class:`NotRecomputable` with the reason when the signature does not allow it. ``progress`` gets
    (pairs done, pairs in total)."""
    reason = recomputable_reason(signature=signature, language=study.language)
    if reason or signature.parameters.get("refs") != "multi":
        raise NotRecomputable(reason or f"{signature.text} is not a multi-reference score")
    spec = metric_spec(signature.name)
    parameters = signature.parameters
    implementation = _implementation(spec, parameters)
    defaults = implementation.parameters if implementation is not None else spec.parameters
    own = {key: str(value) for key, value in parameters.items() if key in defaults and key != "refagg"}
    models = {}
    if spec.model_kind:
        model = TrainedModel.objects.get(content_hash=parameters["model"])
        models[spec.model_kind] = model.path
    tokenizer = _tokenizer(parameters, study.language) or DEFAULT_TOKENIZER
    vectors = _vectors(signature) if spec.reads_vectors else None
    keys: dict[int, str] = {}
    pairs: list[tuple[int, str, str, str]] = []  # (response id, reply, reference, query) to compute
    for response, key in _replies_with_keys(study, response_ids):
        keys[response.pk] = key
        references = sorted(response.context.references.all(), key=lambda reference: reference.pk)
        pairs.extend((response.pk, response.text, ref.text, response.context.query) for ref in references)
    values: dict[int, list[float]] = {response_id: [] for response_id in keys}
    for start in range(0, len(pairs), BATCH_PAIRS):
        batch = pairs[start : start + BATCH_PAIRS]
        computed = compute_metrics(
            [spec.name],
            [pair[1] for pair in batch],
            [[pair[2]] for pair in batch],
            [pair[3] for pair in batch],
            study.language,
            params={key: value for key, value in own.items() if key != MODEL_PARAMETER},
            models=models,
            tokenizer=tokenizer,
            implementations={spec.name: implementation.name} if implementation is not None else None,
            vectors=vectors,
        )[spec.name]
        for pair, value in zip(batch, computed, strict=True):
            values[pair[0]].append(float("nan") if value is None else float(value))
        if progress is not None:
            progress(min(start + BATCH_PAIRS, len(pairs)), len(pairs))
    return [
        PerReferenceScore(
            signature=signature,
            response_id=response_id,
            references_key=keys[response_id],
            values=[value if math.isfinite(value) else None for value in computed_values],
        )
        for response_id, computed_values in values.items()
    ]


def _replies_with_keys(study: Study, response_ids: Sequence[int]) -> list[tuple[Response, str]]:
    """The study's replies among ``response_ids`` by id, with their contexts' references prefetched and the
    key of those references."""
    responses = (
        Response.objects.filter(context__study=study, pk__in=list(response_ids))
        .select_related("context")
        .prefetch_related("context__references")
        .order_by("id")
    )
    return [
        (
            response,
            _references_key(
                sorted(
                    ((reference.pk, reference.text) for reference in response.context.references.all()),
                    key=lambda pair: pair[0],
                )
            ),
        )
        for response in responses
    ]


def _stored(signature: MetricSignature, response_ids: Sequence[int]) -> dict[int, tuple[str, list]]:
    return {
        response_id: (key, values)
        for response_id, key, values in PerReferenceScore.objects.filter(
            signature=signature, response_id__in=list(response_ids)
        ).values_list("response_id", "references_key", "values")
    }


def _implementation(spec: MetricSpec, parameters: dict[str, str]) -> MetricImplementation | None:
    """The implementation that computed the signature's scores (its ``impl``: the tool a run chose), None for
    a metric computed one way only, or for an ``impl`` the metric no longer has."""
    if not spec.implementations:
        return None
    return spec.implementations.get(str(parameters.get("impl") or default_implementation(spec)))


def _references_key(references: Sequence[tuple[int, str]]) -> str:
    """What a reply's per-reference values depend on besides the signature: its references, in order."""
    digest = hashlib.sha256()
    for reference_id, text in references:
        digest.update(f"{reference_id}\x1f{text}\x1e".encode())
    return digest.hexdigest()


def _tokenizer(parameters: dict[str, str], language: str) -> str | None:
    """The tokenizer choice that reproduces the signature's ``tok``; None when none does."""
    recorded = parameters.get("tok")
    if recorded is None or recorded == tokenizer_name(language):
        return DEFAULT_TOKENIZER
    if recorded == WHITESPACE_TOKENIZER:
        return WHITESPACE_TOKENIZER
    return None

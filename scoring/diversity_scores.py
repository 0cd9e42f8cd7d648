"""Diversity metrics of one system's replies to one context, for the diversity table of the correlation report
(Gupta et al. (2019) section 5.2, Table 5): each judged (system, context) pair's Distinct-n, Self-BLEU and recall-BLEU.

They are computed by a scoring run's 'diversity' chunks (scoring/services/report_scores.py) and kept per
(signature, system, context) in :class:`~scoring.models.ContextSystemScore` with a key of the replies and
references they were computed from, so a new rating recomputes nothing and a new reply only its pair; the
report only reads them (:func:`diversity_read`). The values are those of the system-level metric computed
over that one context with its default parameters; their signatures say so (``level:context``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence

from annotation.models import DiversityJudgment, Reference, Response, Study
from scoring.metrics.registry import compute_system_metric, system_metric_spec
from scoring.metrics.signature import metric_signature
from scoring.metrics.system_specs import ContextOutputs
from scoring.metrics.tokenize import DEFAULT_TOKENIZER
from scoring.models import ContextSystemScore, MetricSignature, ReferencesMode

DIVERSITY_METRICS = ("distinct-1", "distinct-2", "distinct-3", "self-bleu-2", "self-bleu-4", "recall-bleu-2")
CONTEXT_LEVEL = "context"  # the ``level`` of their signatures: one value per (system, context)

Pair = tuple[int, int]  # (system id, context id)
Progress = Callable[[int], None]  # pairs done


def diversity_signature_parameters(*, language: str) -> dict[str, dict[str, str]]:
    """metric name -> the parameters of its per-(system, context) signature in ``language``."""
    result = {}
    for name in DIVERSITY_METRICS:
        parameters = system_metric_spec(name).signature_parameters(
            language=language, references=ReferencesMode.MULTI, tokenizer=DEFAULT_TOKENIZER
        )
        result[name] = {**parameters, "level": CONTEXT_LEVEL}
    return result


def diversity_signatures(*, language: str) -> dict[str, MetricSignature]:
    """The stored per-(system, context) signatures of the diversity metrics in ``language`` (those that exist)."""
    texts = {
        metric_signature(name, parameters): name
        for name, parameters in diversity_signature_parameters(language=language).items()
    }
    return {texts[row.text]: row for row in MetricSignature.objects.filter(text__in=texts)}


def diversity_pairs_judged(*, study: Study) -> list[Pair]:
    """The (system, context) pairs of the study that annotators judged for diversity, in order."""
    return sorted(
        set(DiversityJudgment.objects.filter(context__study=study).values_list("system_id", "context_id"))
    )


def diversity_stale(*, signatures: Mapping[str, MetricSignature], pairs: Sequence[Pair]) -> list[Pair]:
    """The pairs among ``pairs`` with replies whose values of a signature in ``signatures`` are not kept, or
    were computed from other replies or references than the current ones."""
    inputs = _inputs(pairs)
    kept = _stored(signatures, inputs)
    stale = []
    for pair, (outputs, references) in inputs.items():
        key = _key(outputs, references)
        if any(kept.get((signature.pk, *pair), ("", None))[0] != key for signature in signatures.values()):
            stale.append(pair)
    return stale


def diversity_compute(
    *,
    language: str,
    signatures: Mapping[str, MetricSignature],
    pairs: Sequence[Pair],
    progress: Progress | None = None,
) -> list[ContextSystemScore]:
    """Every metric of ``signatures`` for each pair of ``pairs`` that has replies, as unsaved rows (a scoring
    run's 'diversity' chunk stores them under its fence)."""
    rows = []
    for done, (pair, (outputs, references)) in enumerate(_inputs(pairs).items(), start=1):
        key = _key(outputs, references)
        for name, signature in signatures.items():
            value = compute_system_metric(name, [ContextOutputs(outputs, references)], language).value
            rows.append(
                ContextSystemScore(
                    signature=signature,
                    system_id=pair[0],
                    context_id=pair[1],
                    inputs_key=key,
                    value=float(value) if value is not None and math.isfinite(value) else None,
                )
            )
        if progress is not None:
            progress(done)
    return rows


def diversity_read(*, study: Study) -> dict[str, dict[Pair, float]]:
    """metric name -> (system id, context id) -> value, for the study's judged pairs whose kept values are
    current (a pair without replies, or whose value is undefined, has none). Reads only."""
    signatures = diversity_signatures(language=study.language)
    inputs = _inputs(diversity_pairs_judged(study=study))
    stored = _stored(signatures, inputs)
    result: dict[str, dict[Pair, float]] = {}
    for name in DIVERSITY_METRICS:
        values: dict[Pair, float] = {}
        signature = signatures.get(name)
        for pair, (outputs, references) in inputs.items():
            key, value = stored.get((signature.pk, *pair), ("", None)) if signature else ("", None)
            if key == _key(outputs, references) and value is not None and math.isfinite(value):
                values[pair] = float(value)
        result[name] = values
    return result


def _inputs(pairs: Sequence[Pair]) -> dict[Pair, tuple[list[str], list[str]]]:
    """pair -> (the system's replies to the context by id, the context's references by id), for the pairs
    that have replies; two queries."""
    wanted = set(pairs)
    contexts = {context_id for _, context_id in wanted}
    outputs: dict[Pair, list[str]] = {}
    for system_id, context_id, text in (
        Response.objects.filter(context_id__in=contexts)
        .order_by("id")
        .values_list("system_id", "context_id", "text")
    ):
        if (system_id, context_id) in wanted:
            outputs.setdefault((system_id, context_id), []).append(text)
    references: dict[int, list[str]] = {}
    for context_id, text in (
        Reference.objects.filter(context_id__in=contexts).order_by("id").values_list("context_id", "text")
    ):
        references.setdefault(context_id, []).append(text)
    return {pair: (outputs[pair], references.get(pair[1], [])) for pair in sorted(outputs)}


def _stored(
    signatures: Mapping[str, MetricSignature], inputs: Mapping[Pair, object]
) -> dict[tuple[int, int, int], tuple[str, float | None]]:
    """(signature id, system id, context id) -> (inputs key, value) of the kept rows of ``inputs``' pairs."""
    contexts = {context_id for _, context_id in inputs}
    return {
        (signature_id, system_id, context_id): (key, value)
        for signature_id, system_id, context_id, key, value in ContextSystemScore.objects.filter(
            signature__in=list(signatures.values()), context_id__in=contexts
        ).values_list("signature_id", "system_id", "context_id", "inputs_key", "value")
    }


def _key(outputs: Sequence[str], references: Sequence[str]) -> str:
    """What a pair's values depend on besides the signature: the replies and the references, in order."""
    digest = hashlib.sha256()
    for text in outputs:
        digest.update(f"o\x1f{text}\x1e".encode())
    for text in references:
        digest.update(f"r\x1f{text}\x1e".encode())
    return digest.hexdigest()

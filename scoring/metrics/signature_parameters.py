"""The signature of a metric's scores: everything that made them besides the metric's name.

A score is stored under its signature (:mod:`scoring.metrics.signature`, after sacrebleu's): two scores
are comparable exactly when their signatures are equal. What goes into it is what can change the value:
the metric's parameters (its implementation's, for a metric several tools compute), its version, the
references it read, the tokenizer, the trained model's content hash, the artifact it reads (word
vectors, an encoder), and the plugin that computed it. Each spec declares which of these apply to it
(``MetricSpec.signature_parameters``, from ``needs_references``, ``uses_tokenizer``, ``model_kind``,
``artifact_hash`` and its implementations' ``own_tokenizer``; a plugin's spec may declare its own); this
module checks the call and gives the spec its parameters, its implementation and the plugin's release.
"""

from __future__ import annotations

from collections.abc import Mapping

from scoring.metrics.lookup import (
    _PLUGIN_OF,
    MissingModelError,
    implementation_of,
    metric_parameters,
    metric_spec,
    options_for,
)
from scoring.metrics.spec import VectorsChoice
from scoring.metrics.tokenize import DEFAULT_TOKENIZER, checked_tokenizer


def signature_parameters(
    name: str,
    *,
    language: str,
    references: str,
    params: Mapping[str, str] | None = None,
    model_hash: str = "",
    tokenizer: str = DEFAULT_TOKENIZER,
    implementation: str = "",
    artifact_hash: str = "",
) -> dict[str, str]:
    """Everything that goes into the signature of ``name``'s scores besides the name itself.

    ``references`` ("single" or "multi") is recorded only for metrics that use references; the
    tokenizer's name only for metrics that tokenize (``tok:en-v1``, or ``tok:none`` with
    ``tokenizer="none"``; learned metrics always record the language's tokenizer, which their model was
    trained with; an implementation that tokenizes as its tool does records its own, e.g. ``tok:13a``);
    ``model_hash`` (the trained model's content hash) only for learned metrics, which must have one;
    ``plugin`` (``<distribution>@<version>``) only for a plugin's metrics.

    A metric with implementations records the one it was computed with (``impl:nlg-eval``, its
    default's when ``implementation`` is ""), that implementation's parameters with ``params`` applied,
    its version, and the case it compares text in (``case:lc`` after the project tokenizer, which
    lowercases; ``case:mixed`` with ``tok:none``). ``artifact_hash`` replaces the spec's fixed artifact
    (word vectors a run chose instead of GloVe 6B 50d).
    """
    checked_tokenizer(tokenizer)
    spec = metric_spec(name)
    if spec.model_kind and not model_hash:
        raise MissingModelError(
            f"The learned metric {name} needs its trained model's hash for its signature."
        )
    chosen = implementation_of(spec, implementation)
    plugin = _PLUGIN_OF.get(name)
    return spec.signature_parameters(
        metric_parameters(name, params, implementation=chosen.name if chosen else ""),
        language=language,
        references=references,
        tokenizer=tokenizer,
        implementation=chosen,
        model_hash=model_hash,
        artifact_hash=artifact_hash,
        plugin=plugin.signature_value if plugin is not None else "",
    )


def chosen_signature_parameters(
    name: str,
    *,
    language: str,
    references: str,
    tokenizer: str,
    implementation: str,
    options: Mapping[str, str],
    model_hash: str = "",
    vectors: VectorsChoice | None = None,
) -> tuple[dict[str, str], str]:
    """:func:`signature_parameters` of ``name`` under a run's choices (the run's ``options`` that apply to
    its implementation, and the word vectors it chose when it reads vectors), with the artifact hash of
    those vectors ("" : none chosen). A scoring run and the scoring of a file sign alike through it."""
    params = options_for(name, implementation, options)
    artifact = ""
    if metric_spec(name).reads_vectors and vectors is not None:
        params["vectors"], artifact = vectors.name, vectors.content_hash
    parameters = signature_parameters(
        name,
        language=language,
        references=references,
        model_hash=model_hash,
        tokenizer=tokenizer,
        implementation=implementation,
        params=params,
        artifact_hash=artifact,
    )
    return parameters, artifact

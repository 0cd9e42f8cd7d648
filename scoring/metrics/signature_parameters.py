"""The signature of a metric's scores: everything that made them besides the metric's name.

A score is stored under its signature (:mod:`scoring.metrics.signature`, after sacrebleu's): two scores
are comparable exactly when their signatures are equal. What goes into it is what can change the value:
the metric's parameters (its implementation's, for a metric several tools compute), its version, the
references it read, the tokenizer, the trained model's content hash, the artifact it reads (word
vectors, an encoder), and the plugin that computed it. Each spec declares which of these apply to it
(``needs_references``, ``uses_tokenizer``, ``model_kind``, ``artifact_hash``, its implementations'
``own_tokenizer``); this module writes them in one place.
"""

from __future__ import annotations

from collections.abc import Mapping

from scoring.metrics.lookup import (
    _PLUGIN_OF,
    PLUGIN_SIGNATURE_KEY,
    MissingModelError,
    implementation_of,
    metric_parameters,
    metric_spec,
)
from scoring.metrics.spec import IMPLEMENTATION_PARAMETER
from scoring.metrics.tokenize import DEFAULT_TOKENIZER, checked_tokenizer, tokenizer_name


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
    signature = metric_parameters(name, params, implementation=chosen.name if chosen else "")
    if spec.needs_references:
        signature["refs"] = references
        if references == "single":  # how several references are combined does not apply to one
            signature.pop("refagg", None)
    if chosen is not None:
        signature[IMPLEMENTATION_PARAMETER] = chosen.name
        if not chosen.own_tokenizer and spec.uses_tokenizer:
            signature["case"] = "mixed" if tokenizer == "none" else "lc"
    if spec.uses_tokenizer and not (chosen is not None and chosen.own_tokenizer):
        signature["tok"] = tokenizer_name(language, DEFAULT_TOKENIZER if spec.model_kind else tokenizer)
    if artifact_hash or spec.artifact_hash:
        signature["artifact"] = artifact_hash or spec.artifact_hash
    plugin = _PLUGIN_OF.get(name)
    if plugin is not None:  # which package computed it, and which release of it
        signature[PLUGIN_SIGNATURE_KEY] = plugin.signature_value
    if spec.model_kind:
        signature["model"] = model_hash
    signature["version"] = chosen.version if chosen is not None else spec.version
    return signature

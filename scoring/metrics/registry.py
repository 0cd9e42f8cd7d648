"""Every metric the app can compute, by name, and the one entry point that computes several at once.

A metric is registered as a :class:`~scoring.metrics.spec.MetricSpec`; metrics that share work are
registered together with their :class:`~scoring.metrics.spec.MetricFamily`, and :func:`compute_metrics`
calls each family once for all of its requested members (BLEU-1..4 tokenize and count n-grams once).
Registered now: BLEU-1..4, ROUGE-L, METEOR and the three embedding baselines (seed 003, Table 2), and
BERT-RUBER's referenced score (seed 001, over MiniLM); the trained metrics (RUBER, BERT-RUBER's
unreferenced heads) are added the same way in :func:`_register_builtin_metrics`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scoring.metrics.bert_ruber_referenced import bert_ruber_referenced_spec
from scoring.metrics.bleu_family import bleu_specs
from scoring.metrics.embedding_specs import embedding_specs
from scoring.metrics.overlap_specs import overlap_specs
from scoring.metrics.spec import MetricFamily, MetricSpec
from scoring.metrics.tokenize import tokenizer_name

_SPECS: dict[str, MetricSpec] = {}
_FAMILIES: dict[str, MetricFamily] = {}


class UnknownMetricError(ValueError):
    """A metric name that is not registered; the message lists the known names."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        unknown = ", ".join(repr(name) for name in names)
        noun = "metric" if len(names) == 1 else "metrics"
        super().__init__(f"unknown {noun} {unknown}; known metrics: {', '.join(available_metric_names())}")


def register_metric(spec: MetricSpec) -> None:
    if spec.name in _SPECS:
        raise ValueError(f"metric {spec.name!r} is already registered")
    if spec.name != spec.name.lower() or not spec.name or any(c in spec.name for c in " |:_"):
        raise ValueError(f"metric names are lowercase and hyphenated, got {spec.name!r}")
    if spec.family and spec.family not in _FAMILIES:
        raise ValueError(f"metric {spec.name!r} names family {spec.family!r}, which is not registered")
    _SPECS[spec.name] = spec


def register_metric_family(family: MetricFamily, specs: Sequence[MetricSpec]) -> None:
    if family.name in _FAMILIES:
        raise ValueError(f"metric family {family.name!r} is already registered")
    _FAMILIES[family.name] = family
    for spec in specs:
        if spec.family != family.name:
            raise ValueError(f"metric {spec.name!r} belongs to family {spec.family!r}, not {family.name!r}")
        register_metric(spec)


def available_metric_names() -> list[str]:
    """Every registered metric name, in registration order (families stay together)."""
    return list(_SPECS)


def metric_spec(name: str) -> MetricSpec:
    try:
        return _SPECS[name]
    except KeyError:
        raise UnknownMetricError([name]) from None


def metric_specs(names: Sequence[str]) -> list[MetricSpec]:
    """The specs of ``names``, or one :class:`UnknownMetricError` naming every unknown name."""
    unknown = [name for name in names if name not in _SPECS]
    if unknown:
        raise UnknownMetricError(unknown)
    return [_SPECS[name] for name in names]


def metric_parameters(name: str, params: Mapping[str, str] | None = None) -> dict[str, str]:
    """The metric's default parameters with ``params`` applied; unknown keys are an error."""
    spec = metric_spec(name)
    merged = dict(spec.parameters)
    for key, value in (params or {}).items():
        if key not in spec.parameters:
            known = ", ".join(spec.parameters) or "none"
            raise ValueError(f"metric {name!r} has no parameter {key!r} (its parameters: {known})")
        merged[key] = value
    return merged


def signature_parameters(
    name: str, *, language: str, references: str, params: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Everything that goes into the signature of ``name``'s scores besides the name itself.

    ``references`` ("single" or "multi") is recorded only for metrics that use references; the
    tokenizer's name only for metrics that tokenize.
    """
    spec = metric_spec(name)
    signature = metric_parameters(name, params)
    if spec.needs_references:
        signature["refs"] = references
        if references == "single":  # how several references are combined does not apply to one
            signature.pop("refagg", None)
    if spec.uses_tokenizer:
        signature["tok"] = tokenizer_name(language)
    if spec.artifact_hash:
        signature["artifact"] = spec.artifact_hash
    signature["version"] = spec.version
    return signature


def compute_metrics(
    names: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    queries: Sequence[str],
    language: str,
    params: Mapping[str, str] | None = None,
) -> dict[str, list[float]]:
    """``{name: [score per item]}`` for every metric in ``names``, each family computed once.

    ``params`` overrides default parameters of the metrics that have them (e.g. ``{"smooth": "method2"}``).
    """
    if not len(hypotheses) == len(references) == len(queries):
        raise ValueError(
            f"hypotheses, references and queries differ in length: "
            f"{len(hypotheses)}, {len(references)}, {len(queries)}"
        )
    specs = metric_specs(names)
    unused = sorted(set(params or {}) - {key for spec in specs for key in spec.parameters})
    if unused:
        raise ValueError(f"no metric among {', '.join(names)} has the parameter(s) {', '.join(unused)}")
    results: dict[str, list[float]] = {}
    by_family: dict[str, list[MetricSpec]] = {}
    for spec in specs:
        if spec.family:
            by_family.setdefault(spec.family, []).append(spec)
        else:
            results[spec.name] = spec.compute(
                hypotheses, references, queries, language, _own_parameters(spec, params)
            )
    for family_name, members in by_family.items():
        family_params: dict[str, str] = {}
        for spec in members:
            family_params.update(_own_parameters(spec, params))
        scores = _FAMILIES[family_name].compute(
            [spec.name for spec in members], hypotheses, references, queries, language, family_params
        )
        results.update(scores)
    return {name: results[name] for name in names}


def _own_parameters(spec: MetricSpec, params: Mapping[str, str] | None) -> dict[str, str]:
    return metric_parameters(spec.name, {k: v for k, v in (params or {}).items() if k in spec.parameters})


def _register_builtin_metrics() -> None:
    family, specs = bleu_specs()
    register_metric_family(family, specs)
    for spec in overlap_specs():
        register_metric(spec)
    family, specs = embedding_specs()
    register_metric_family(family, specs)
    register_metric(bert_ruber_referenced_spec())


_register_builtin_metrics()

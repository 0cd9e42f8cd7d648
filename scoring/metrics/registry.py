"""Every metric the app can compute, by name, and the one entry point that computes several at once.

A metric is registered as a :class:`~scoring.metrics.spec.MetricSpec`; metrics that share work are
registered together with their :class:`~scoring.metrics.spec.MetricFamily`, and :func:`compute_metrics`
calls each family once for all of its requested members (BLEU-1..4 tokenize and count n-grams once).
Registered: BLEU-1..4, ROUGE-L, METEOR and the three embedding baselines (seed 003, Table 2), RUBER's
scores and blends over a trained model (seed 000), BERT-RUBER's referenced score over MiniLM and its
unreferenced factorial cells and blends over a trained model (seed 001), MaUde and its baselines over
a trained model (seed 004; context-aware: they read every context turn).

Names are lowercase and hyphenated; a variant of a metric is ``name:variant`` (BERT-RUBER's factorial
cells, ``bert-ruber-unreferenced:bert-max-ce``). Variants are computed only when asked for by name:
``"all"`` in a scoring request means the metrics without a variant.

Other packages add metrics through entry points of the group ``dialeval.metrics``
(:mod:`scoring.metrics.plugins`), registered after the built-in ones: a plugin metric's signature records
``plugin:<distribution>@<version>`` and :func:`metric_origin` says "plugin". A plugin that fails to load,
or names a metric that is already registered, is skipped with a logged warning and listed by
:func:`metric_plugins` with its error; the app goes on without it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from scoring.metrics.bert_ruber_referenced import bert_ruber_referenced_spec
from scoring.metrics.bleu_family import bleu_specs
from scoring.metrics.embedding_specs import embedding_specs
from scoring.metrics.learned_specs import bert_ruber_specs, ruber_specs
from scoring.metrics.maude_specs import maude_specs
from scoring.metrics.overlap_specs import overlap_specs
from scoring.metrics.plugins import MetricPlugin, discovered_plugins, spec_problem
from scoring.metrics.spec import MODEL_PARAMETER, TOKENIZER_PARAMETER, MetricFamily, MetricSpec
from scoring.metrics.system_specs import ContextOutputs, SystemMetricSpec, SystemScore, system_metric_specs
from scoring.metrics.tokenize import DEFAULT_TOKENIZER, checked_tokenizer, tokenizer_name

_SPECS: dict[str, MetricSpec] = {}
_FAMILIES: dict[str, MetricFamily] = {}
_SYSTEM_SPECS: dict[str, SystemMetricSpec] = {}  # one value per system (diversity, corpus BLEU)
_PLUGINS: list[MetricPlugin] = []  # every entry point of the group, loaded or broken
_PLUGIN_OF: dict[str, MetricPlugin] = {}  # plugin metric name -> the plugin that registered it

logger = logging.getLogger(__name__)

# Where a metric's scores come from, as recorded on its stored signature (scoring.models.MetricOrigin).
BUILTIN_ORIGIN = "builtin"
PLUGIN_ORIGIN = "plugin"
PLUGIN_SIGNATURE_KEY = "plugin"


VARIANT_SEPARATOR = ":"


class MissingModelError(ValueError):
    """A learned metric was asked for without a trained model of its kind."""


class UnknownMetricError(ValueError):
    """A metric name that is not registered; the message lists the known names."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        unknown = ", ".join(repr(name) for name in names)
        noun = "metric" if len(names) == 1 else "metrics"
        known = ", ".join([*available_metric_names(), *available_system_metric_names()])
        super().__init__(f"unknown {noun} {unknown}; known metrics: {known}")


def register_metric(spec: MetricSpec) -> None:
    _check_registrable(spec)
    _SPECS[spec.name] = spec


def _check_registrable(spec: MetricSpec) -> None:
    if spec.name in _SPECS or spec.name in _SYSTEM_SPECS:
        owner = _PLUGIN_OF.get(spec.name)
        where = f"by plugin {owner.describe()}" if owner else "built in"
        raise ValueError(f"metric {spec.name!r} is already registered ({where})")
    base, _, variant = spec.name.partition(VARIANT_SEPARATOR)
    for part in (base, variant) if variant else (base,):
        if part != part.lower() or not part or any(c in part for c in " |:_"):
            raise ValueError(f"metric names are lowercase and hyphenated (name:variant), got {spec.name!r}")
    if spec.family and spec.family not in _FAMILIES:
        raise ValueError(f"metric {spec.name!r} names family {spec.family!r}, which is not registered")


def register_metric_family(family: MetricFamily, specs: Sequence[MetricSpec]) -> None:
    if family.name in _FAMILIES:
        raise ValueError(f"metric family {family.name!r} is already registered")
    _FAMILIES[family.name] = family
    for spec in specs:
        if spec.family != family.name:
            raise ValueError(f"metric {spec.name!r} belongs to family {spec.family!r}, not {family.name!r}")
        register_metric(spec)


def available_metric_names() -> list[str]:
    """Every registered per-response metric name, in registration order (families stay together)."""
    return list(_SPECS)


def metric_origin(name: str) -> str:
    """Where ``name``'s scores come from: :data:`PLUGIN_ORIGIN` for a plugin's metric, else
    :data:`BUILTIN_ORIGIN` (the values of ``scoring.models.MetricOrigin``)."""
    return PLUGIN_ORIGIN if name in _PLUGIN_OF else BUILTIN_ORIGIN


def metric_plugin(name: str) -> MetricPlugin | None:
    """The plugin that registered ``name``, or None for a built-in metric."""
    return _PLUGIN_OF.get(name)


def metric_plugins() -> list[MetricPlugin]:
    """Every entry point of the ``dialeval.metrics`` group found at the last load: the ones registered
    (``loaded``) and the ones skipped, with their ``error``."""
    return list(_PLUGINS)


def metric_plugins_reload() -> list[MetricPlugin]:
    """Unregister every plugin metric and load the entry points again (after a package was installed or
    removed in this process, e.g. a test's plugin on ``sys.path``); returns :func:`metric_plugins`."""
    for name in _PLUGIN_OF:
        _SPECS.pop(name, None)
    _PLUGIN_OF.clear()
    _PLUGINS.clear()
    _register_plugin_metrics()
    return metric_plugins()


def available_system_metric_names() -> list[str]:
    """Every registered system-level metric (one value per system: diversity, corpus BLEU)."""
    return list(_SYSTEM_SPECS)


def is_system_metric(name: str) -> bool:
    return name in _SYSTEM_SPECS


def system_metric_spec(name: str) -> SystemMetricSpec:
    try:
        return _SYSTEM_SPECS[name]
    except KeyError:
        raise UnknownMetricError([name]) from None


def compute_system_metric(
    name: str,
    contexts: Sequence[ContextOutputs],
    language: str,
    params: Mapping[str, str] | None = None,
    *,
    tokenizer: str = DEFAULT_TOKENIZER,
) -> SystemScore:
    """The system-level metric ``name`` of one system, from its outputs per context.

    ``tokenizer`` is "default" (the language's tokenizer) or "none" (whitespace split, for text that is
    already tokenized); see :mod:`scoring.metrics.tokenize`.
    """
    spec = system_metric_spec(name)
    unknown = sorted(set(params or {}) - set(spec.parameters))
    if unknown:
        raise ValueError(f"metric {name!r} has no parameter(s) {', '.join(unknown)}")
    merged = {**spec.parameters, **(params or {}), TOKENIZER_PARAMETER: checked_tokenizer(tokenizer)}
    return spec.compute(contexts, language, merged)


def is_variant(name: str) -> bool:
    """Whether ``name`` is a variant (``name:variant``), computed only when asked for by name."""
    return VARIANT_SEPARATOR in name


def undefined_reason(name: str) -> str:
    """Why the metric ``name`` (per reply or per system) has no value where it has none: each spec names
    its own cause (Self-BLEU: no context with two replies of the system; embeddings: no word with a
    vector), so run notes and the report say what happened rather than guess."""
    if name in _SYSTEM_SPECS:
        return _SYSTEM_SPECS[name].undefined_when
    if name in _SPECS:
        return _SPECS[name].undefined_when
    return "the metric gave no value"


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


def split_metric_names(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """(per-response names, system-level names); one :class:`UnknownMetricError` for every unknown name."""
    unknown = [name for name in names if name not in _SPECS and name not in _SYSTEM_SPECS]
    if unknown:
        raise UnknownMetricError(unknown)
    return [name for name in names if name in _SPECS], [name for name in names if name in _SYSTEM_SPECS]


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
    name: str,
    *,
    language: str,
    references: str,
    params: Mapping[str, str] | None = None,
    model_hash: str = "",
    tokenizer: str = DEFAULT_TOKENIZER,
) -> dict[str, str]:
    """Everything that goes into the signature of ``name``'s scores besides the name itself.

    ``references`` ("single" or "multi") is recorded only for metrics that use references; the
    tokenizer's name only for metrics that tokenize (``tok:en-v1``, or ``tok:none`` with
    ``tokenizer="none"``; learned metrics always record the language's tokenizer, which their model was
    trained with); ``model_hash`` (the trained model's content hash) only for learned metrics, which
    must have one; ``plugin`` (``<distribution>@<version>``) only for a plugin's metrics.
    """
    checked_tokenizer(tokenizer)
    spec = metric_spec(name)
    if spec.model_kind and not model_hash:
        raise MissingModelError(f"{name} is a learned metric: its signature needs the trained model's hash")
    signature = metric_parameters(name, params)
    if spec.needs_references:
        signature["refs"] = references
        if references == "single":  # how several references are combined does not apply to one
            signature.pop("refagg", None)
    if spec.uses_tokenizer:
        signature["tok"] = tokenizer_name(language, DEFAULT_TOKENIZER if spec.model_kind else tokenizer)
    if spec.artifact_hash:
        signature["artifact"] = spec.artifact_hash
    plugin = _PLUGIN_OF.get(name)
    if plugin is not None:  # which package computed it, and which release of it
        signature[PLUGIN_SIGNATURE_KEY] = plugin.signature_value
    if spec.model_kind:
        signature["model"] = model_hash
    signature["version"] = spec.version
    return signature


def compute_metrics(
    names: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    queries: Sequence[str],
    language: str,
    params: Mapping[str, str] | None = None,
    models: Mapping[str, str] | None = None,
    *,
    tokenizer: str = DEFAULT_TOKENIZER,
    progress: Callable[[int], None] | None = None,
    progress_every: int = 64,
    contexts: Sequence[Sequence[str]] | None = None,
) -> dict[str, list[float | None]]:
    """``{name: [score per item]}`` for every metric in ``names``, each family computed once.

    ``progress``, when given, is called with the number of items done after every slice of items (slices
    of ``progress_every`` items, larger while they compute in under half a second; scores do not depend on
    the slicing, except for whole-set metrics, which are computed in one call and report once). Scoring
    workers write their heartbeat from it, so a long model call is never mistaken for a dead worker; an
    exception it raises (e.g. the run was cancelled) stops the computation.

    ``params`` overrides default parameters of the metrics that have them (e.g. ``{"smooth": "method2"}``).
    ``models`` gives learned metrics their trained model: ``{model kind: artifact folder}``. ``tokenizer``
    is "default" (the language's tokenizer) or "none" (whitespace split, for text that is already
    tokenized), for every metric that tokenizes except learned ones. A score is ``None`` where the metric
    has no value for the item.

    ``contexts`` gives each item's every context turn, oldest first, to context-aware metrics (MaUde);
    without it they read the one-turn context ``[queries[i]]``.
    """
    checked_tokenizer(tokenizer)
    if not len(hypotheses) == len(references) == len(queries):
        raise ValueError(
            f"hypotheses, references and queries differ in length: "
            f"{len(hypotheses)}, {len(references)}, {len(queries)}"
        )
    if contexts is not None and len(contexts) != len(hypotheses):
        raise ValueError(f"{len(contexts)} contexts for {len(hypotheses)} hypotheses")
    specs = metric_specs(names)
    if (
        progress is not None
        and not any(spec.whole_set for spec in specs)
        and len(hypotheses) > progress_every
    ):
        return _compute_in_slices(
            names,
            hypotheses,
            references,
            queries,
            language,
            params,
            models,
            tokenizer,
            progress,
            progress_every,
            contexts,
        )
    unused = sorted(set(params or {}) - {key for spec in specs for key in spec.parameters})
    if unused:
        raise ValueError(f"no metric among {', '.join(names)} has the parameter(s) {', '.join(unused)}")
    missing = sorted(
        {spec.model_kind for spec in specs if spec.model_kind and not (models or {}).get(spec.model_kind)}
    )
    if missing:
        needing = ", ".join(spec.name for spec in specs if spec.model_kind in missing)
        raise MissingModelError(
            f"{needing} need(s) a trained {' and a '.join(missing)} model; none was given"
        )
    results: dict[str, list[float | None]] = {}
    by_family: dict[str, list[MetricSpec]] = {}
    for spec in specs:
        if spec.family:
            by_family.setdefault(spec.family, []).append(spec)
        elif spec.context_compute is not None:
            values = spec.context_compute(
                hypotheses,
                contexts if contexts is not None else [[query] for query in queries],
                language,
                _own_parameters(spec, params, models, tokenizer),
            )
            results[spec.name] = _checked_length(spec.name, values, len(hypotheses))
        else:
            values = spec.compute(
                hypotheses, references, queries, language, _own_parameters(spec, params, models, tokenizer)
            )
            results[spec.name] = _checked_length(spec.name, values, len(hypotheses))
    for family_name, members in by_family.items():
        family_params: dict[str, str] = {}
        for spec in members:
            family_params.update(_own_parameters(spec, params, models, tokenizer))
        scores = _FAMILIES[family_name].compute(
            [spec.name for spec in members], hypotheses, references, queries, language, family_params
        )
        for spec in members:
            results[spec.name] = _checked_length(spec.name, scores[spec.name], len(hypotheses))
    if progress is not None:
        progress(len(hypotheses))
    return {name: results[name] for name in names}


def _compute_in_slices(
    names: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    queries: Sequence[str],
    language: str,
    params: Mapping[str, str] | None,
    models: Mapping[str, str] | None,
    tokenizer: str,
    progress: Callable[[int], None],
    size: int,
    contexts: Sequence[Sequence[str]] | None,
) -> dict[str, list[float | None]]:
    """Slices of ``size`` items, doubled while a slice takes under half a second (fast metrics then pay the
    per-call cost a few times, not once per 64 items; slow ones keep reporting every ``size`` items)."""
    results: dict[str, list[float | None]] = {name: [] for name in names}
    start, size = 0, max(1, size)
    while start < len(hypotheses):
        end = start + size
        began = time.perf_counter()
        part = compute_metrics(
            names,
            hypotheses[start:end],
            references[start:end],
            queries[start:end],
            language,
            params,
            models,
            tokenizer=tokenizer,
            contexts=None if contexts is None else contexts[start:end],
        )
        for name in names:
            results[name].extend(part[name])
        progress(min(end, len(hypotheses)))
        if time.perf_counter() - began < _FAST_SLICE_SECONDS:
            size *= 2
        start = end
    return results


_FAST_SLICE_SECONDS = 0.5


def combine_metric(name: str, components: Mapping[str, Sequence[float | None]]) -> list[float | None]:
    """A whole-set metric's values from its components' values over the whole set (``MetricSpec.combine``).

    ``components`` maps each name in the spec's ``requires`` to one value (or ``None``) per item.
    """
    spec = metric_spec(name)
    if spec.combine is None:
        raise ValueError(f"{name} is not computed from stored components; compute it with compute_metrics")
    missing = [component for component in spec.requires if component not in components]
    if missing:
        raise ValueError(f"{name} needs the values of {', '.join(missing)}")
    lengths = {len(components[component]) for component in spec.requires}
    if len(lengths) > 1:
        raise ValueError(f"{name}: its components have different numbers of values ({sorted(lengths)})")
    values = list(spec.combine(components))
    return _checked_length(name, values, lengths.pop() if lengths else 0)


def _own_parameters(
    spec: MetricSpec, params: Mapping[str, str] | None, models: Mapping[str, str] | None, tokenizer: str
) -> dict[str, str]:
    own = metric_parameters(spec.name, {k: v for k, v in (params or {}).items() if k in spec.parameters})
    if spec.model_kind:
        own[MODEL_PARAMETER] = str((models or {})[spec.model_kind])
    elif spec.uses_tokenizer:
        own[TOKENIZER_PARAMETER] = tokenizer
    return own


def _checked_length(name: str, values: Sequence[float | None], expected: int) -> list[float | None]:
    if len(values) != expected:
        raise RuntimeError(f"{name} returned {len(values)} scores for {expected} items")
    return list(values)


def _register_builtin_metrics() -> None:
    family, specs = bleu_specs()
    register_metric_family(family, specs)
    for spec in overlap_specs():
        register_metric(spec)
    family, specs = embedding_specs()
    register_metric_family(family, specs)
    register_metric(bert_ruber_referenced_spec())
    for system_spec in system_metric_specs():
        _SYSTEM_SPECS[system_spec.name] = system_spec
    for learned_family, learned in (*ruber_specs(), *bert_ruber_specs()):
        if learned_family is None:
            for spec in learned:
                register_metric(spec)
        else:
            register_metric_family(learned_family, learned)
    for spec in maude_specs():
        register_metric(spec)


def _register_plugin_metrics() -> None:
    """Register the metrics of every entry point of the ``dialeval.metrics`` group; skip (and log) a plugin
    that failed to load or whose metrics cannot be registered, all of its metrics together."""
    for plugin in discovered_plugins():
        problem = plugin.error or _plugin_problem(plugin)
        if problem:
            logger.warning("metric plugin %s skipped: %s", plugin.describe(), problem)
            _PLUGINS.append(replace(plugin, specs=(), error=problem))
            continue
        for spec in plugin.specs:
            _SPECS[spec.name] = spec
            _PLUGIN_OF[spec.name] = plugin
        _PLUGINS.append(plugin)


def _plugin_problem(plugin: MetricPlugin) -> str:
    """Why the plugin's metrics cannot all be registered, or ``""``."""
    names = [spec.name for spec in plugin.specs]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        return f"it gives the metric(s) {', '.join(twice)} more than once"
    for spec in plugin.specs:
        problem = spec_problem(spec)
        if problem:
            return problem
        try:
            _check_registrable(spec)
        except ValueError as error:
            return str(error)
        unknown = [name for name in spec.requires if name not in _SPECS and name not in names]
        if unknown:
            return f"metric {spec.name!r} requires {', '.join(unknown)}, which is not registered"
    return ""


_register_builtin_metrics()
_register_plugin_metrics()

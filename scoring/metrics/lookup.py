"""The registered metrics by name: the tables every other room of the metric engine reads.

:mod:`scoring.metrics.registry` fills them (the built-in metrics, then the plugins' of the group
``dialeval.metrics``); this module registers, looks up, and resolves what a run chose for each metric
(its implementation, its options, its parameters). It computes nothing and writes no signature: the
compute strategies are in :mod:`scoring.metrics.compute`, the signatures in
:mod:`scoring.metrics.signature_parameters`; both read these tables, none of them writes back.

Names are lowercase and hyphenated; a variant of a metric is ``name:variant`` (BERT-RUBER's factorial
cells, ``bert-ruber-unreferenced:bert-max-ce``). Variants are computed only when asked for by name:
``"all"`` in a scoring request means the metrics without a variant.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from scoring.metrics.implementation_choice import (
    ImplementationChoice,
    checked_options,
    default_implementation,
)
from scoring.metrics.plugins import MetricPlugin
from scoring.metrics.spec import MetricFamily, MetricImplementation, MetricSpec
from scoring.metrics.system_specs import SystemMetricSpec

_SPECS: dict[str, MetricSpec] = {}
_FAMILIES: dict[str, MetricFamily] = {}
_SYSTEM_SPECS: dict[str, SystemMetricSpec] = {}  # one value per system (diversity, corpus BLEU)
_PLUGINS: list[MetricPlugin] = []  # every entry point of the group, loaded or broken
_PLUGIN_OF: dict[str, MetricPlugin] = {}  # plugin metric name -> the plugin that registered it

# Where a metric's scores come from, as recorded on its stored signature (scoring.models.MetricOrigin).
BUILTIN_ORIGIN = "builtin"
PLUGIN_ORIGIN = "plugin"


VARIANT_SEPARATOR = ":"

# Metrics defined by data rather than code (LLM judges, ``llm-judge:<key>``): a resolver registered for the
# name's prefix builds the family and its specs on first use, and they stay registered in the process.
Resolver = Callable[[str], tuple[MetricFamily, list[MetricSpec]] | None]
_RESOLVERS: dict[str, Resolver] = {}
_RESOLVED: set[str] = set()  # names registered by a resolver: data, not listed among the available metrics


def register_resolver(prefixes: Sequence[str], resolve: Resolver) -> None:
    """Resolve names ``<prefix>:<variant>`` for each of ``prefixes`` with ``resolve`` (None: no such
    metric); the app registers its resolvers once at start-up."""
    for prefix in prefixes:
        _RESOLVERS[prefix] = resolve


def forget_resolved_metrics() -> None:
    """Unregister every metric a resolver defined (they are resolved again on next use): after the
    operator's settings they were built from changed, and between tests."""
    for name in _RESOLVED:
        spec = _SPECS.pop(name, None)
        if spec is not None and spec.family:
            _FAMILIES.pop(spec.family, None)
    _RESOLVED.clear()


def _resolved(names: Sequence[str]) -> None:
    """Register the metrics of ``names`` that a resolver defines and that are not registered yet."""
    for name in names:
        if name in _SPECS:
            continue
        prefix, separator, _ = name.partition(VARIANT_SEPARATOR)
        resolve = _RESOLVERS.get(prefix) if separator else None
        found = resolve(name) if resolve is not None else None
        if found is not None and name not in _SPECS:
            family, specs = found
            if family.name not in _FAMILIES:
                register_metric_family(family, specs)
                _RESOLVED.update(spec.name for spec in specs)


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
    check_registrable(spec)
    _SPECS[spec.name] = spec


def check_registrable(spec: MetricSpec) -> None:
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
    """Every registered per-response metric name, in registration order (families stay together); not the
    metrics a resolver defined from data (LLM judges)."""
    return [name for name in _SPECS if name not in _RESOLVED]


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


def is_variant(name: str) -> bool:
    """Whether ``name`` is a variant (``name:variant``), computed only when asked for by name."""
    return VARIANT_SEPARATOR in name


def undefined_reason(name: str) -> str:
    """Why the metric ``name`` (per reply or per system) has no value where it has none: each spec names
    its own cause (Self-BLEU: no context with two replies of the system; embeddings: no word with a
    vector), so run notes and the report say what happened rather than guess."""
    if name in _SYSTEM_SPECS:
        return _SYSTEM_SPECS[name].undefined_when
    _resolved([name])
    if name in _SPECS:
        return _SPECS[name].undefined_when
    return "the metric gave no value"


def metric_spec(name: str) -> MetricSpec:
    _resolved([name])
    try:
        return _SPECS[name]
    except KeyError:
        raise UnknownMetricError([name]) from None


def metric_specs(names: Sequence[str]) -> list[MetricSpec]:
    """The specs of ``names``, or one :class:`UnknownMetricError` naming every unknown name."""
    _resolved(names)
    unknown = [name for name in names if name not in _SPECS]
    if unknown:
        raise UnknownMetricError(unknown)
    return [_SPECS[name] for name in names]


def split_metric_names(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """(per-response names, system-level names); one :class:`UnknownMetricError` for every unknown name."""
    _resolved([name for name in names if name not in _SYSTEM_SPECS])
    unknown = [name for name in names if name not in _SPECS and name not in _SYSTEM_SPECS]
    if unknown:
        raise UnknownMetricError(unknown)
    return [name for name in names if name in _SPECS], [name for name in names if name in _SYSTEM_SPECS]


def metric_parameters(
    name: str, params: Mapping[str, str] | None = None, *, implementation: str = ""
) -> dict[str, str]:
    """The metric's default parameters (its ``implementation``'s, for a metric that has several) with
    ``params`` applied; unknown keys, and values an implementation does not offer, are an error."""
    spec = metric_spec(name)
    chosen = implementation_of(spec, implementation)
    defaults = chosen.parameters if chosen is not None else spec.parameters
    choices = chosen.choices if chosen is not None else {}
    merged = dict(defaults)
    for key, value in (params or {}).items():
        if key not in defaults:
            known = ", ".join(defaults) or "none"
            raise ValueError(f"metric {name!r} has no parameter {key!r} (its parameters: {known})")
        if key in choices and value not in choices[key]:
            raise ValueError(
                f"metric {name!r}: {key}={value!r} is not one of {', '.join(choices[key])}"
                + (f" ({chosen.name})" if chosen is not None else "")
            )
        merged[key] = value
    return merged


def implementation_names() -> list[str]:
    """Every implementation some registered metric has (nltk first), for choices and messages."""
    names: dict[str, None] = {}
    for spec in _SPECS.values():
        names.update(dict.fromkeys(spec.implementations))
    for system_spec in _SYSTEM_SPECS.values():
        names.update(dict.fromkeys(system_spec.implementations))
    return sorted(names, key=lambda name: (name != "nltk", name))


def implementation_groups() -> list[str]:
    """The family names a per-family choice may use (``bleu``, ``rouge``, ``meteor`` ...)."""
    groups = {spec.group_name for spec in _SPECS.values() if spec.implementations}
    groups |= {spec.group_name for spec in _SYSTEM_SPECS.values() if spec.implementations}
    return sorted(groups)


def implementation_choice(text: str | None) -> ImplementationChoice:
    """The run choice ``text`` spells (see :mod:`scoring.metrics.implementation_choice`), checked."""
    return ImplementationChoice.parse(
        text, implementations=implementation_names(), groups=implementation_groups()
    )


def resolve_implementations(
    names: Sequence[str], choice: str | ImplementationChoice | None
) -> dict[str, str]:
    """``{name: implementation}`` for the metrics of ``names`` (per-response and system-level) that have
    implementations, under the run choice ``choice``; an ImplementationChoiceError when a metric asked
    for lacks the implementation chosen for it."""
    parsed = choice if isinstance(choice, ImplementationChoice) else implementation_choice(choice)
    resolved: dict[str, str] = {}
    for name in names:
        spec = _any_spec(name)
        implementation = parsed.for_spec(spec)
        if implementation:
            resolved[name] = implementation
    return resolved


def _any_spec(name: str) -> MetricSpec | SystemMetricSpec:
    _resolved([name])
    return _SPECS[name] if name in _SPECS else system_metric_spec(name)


def included_by_choice(name: str, choice: str | ImplementationChoice | None) -> bool:
    """Whether "all metrics" under ``choice`` takes ``name`` (see ``ImplementationChoice.includes``)."""
    parsed = choice if isinstance(choice, ImplementationChoice) else implementation_choice(choice)
    spec = _any_spec(name)
    return parsed.includes(spec)


def checked_run_options(
    names: Sequence[str], implementations: Mapping[str, str], options: Mapping[str, str]
) -> dict[str, str]:
    """A run's ``options`` checked against the implementations chosen for its metrics (each option must be
    a parameter one of them lets the researcher set, with a value it offers)."""
    chosen: dict[str, tuple[MetricSpec | SystemMetricSpec, str]] = {}
    for name in names:
        spec = _any_spec(name)
        chosen[name] = (spec, implementations.get(name, ""))
    return checked_options(options, chosen)


def options_for(name: str, implementation: str, options: Mapping[str, str]) -> dict[str, str]:
    """The run ``options`` that apply to metric ``name`` computed by ``implementation`` (those its
    implementation lets a run set, its ``choices``), for :func:`signature_parameters` and
    :func:`compute_metrics`. A parameter an implementation fixes (nlg-eval's ``case:mixed``) and the
    parameters of a metric computed one way only (Self-BLEU's ``smooth``) are not options: an option given
    for another implementation must neither change them nor be written into their signatures."""
    if name in _SYSTEM_SPECS:
        chosen_system = _SYSTEM_SPECS[name].implementation(implementation)
        keys = set(chosen_system.choices if chosen_system is not None else ())
    else:
        chosen = implementation_of(metric_spec(name), implementation)
        keys = set(chosen.choices if chosen is not None else ())
    return {key: value for key, value in options.items() if key in keys}


def implementation_of(spec: MetricSpec, implementation: str) -> MetricImplementation | None:
    """``spec``'s implementation called ``implementation`` (its default for ""); None for a metric
    computed one way only (a ValueError when such a metric is asked for a named implementation)."""
    if not spec.implementations:
        if implementation:
            raise ValueError(
                f"{spec.name} is computed one way only; it has no {implementation} implementation"
            )
        return None
    return spec.implementation(implementation or default_implementation(spec))


def is_whole_set(name: str, implementation: str = "") -> bool:
    """Whether ``name``'s values (under ``implementation``) depend on every item scored together."""
    spec = metric_spec(name)
    chosen = implementation_of(spec, implementation)
    return spec.whole_set or (chosen is not None and chosen.whole_set)


def metric_family(name: str) -> MetricFamily:
    """The registered family called ``name`` (the ``family`` of its members' specs)."""
    return _FAMILIES[name]


def register_system_metric(spec: SystemMetricSpec) -> None:
    """Register a system-level metric (one value per system: diversity, corpus BLEU)."""
    _SYSTEM_SPECS[spec.name] = spec


def register_plugin_metric(spec: MetricSpec, plugin: MetricPlugin) -> None:
    """Register a metric a plugin gives (already checked: :func:`plugin_problem` found nothing)."""
    _SPECS[spec.name] = spec
    _PLUGIN_OF[spec.name] = plugin

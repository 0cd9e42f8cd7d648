"""Every metric the app can compute, by name, and the one entry point that computes several at once.

A metric is registered as a :class:`~scoring.metrics.spec.MetricSpec`; metrics that share work are
registered together with their :class:`~scoring.metrics.spec.MetricFamily`, and :func:`compute_metrics`
calls each family once for all of its requested members (BLEU-1..4 tokenize and count n-grams once).
Registered: BLEU-1..4, ROUGE-L, METEOR and the three embedding baselines (seed 003, Table 2), RUBER's
scores and blends over a trained model (seed 000), BERT-RUBER's referenced score over MiniLM and its
unreferenced factorial cells and blends over a trained model (seed 001), MaUde and its baselines over
a trained model (seed 004; context-aware: they read every context turn), Cross-RUBER's scores and blends
over a trained model (issue 27; its unreferenced score and blends read the context too).

Names are lowercase and hyphenated; a variant of a metric is ``name:variant`` (BERT-RUBER's factorial
cells, ``bert-ruber-unreferenced:bert-max-ce``). Variants are computed only when asked for by name:
``"all"`` in a scoring request means the metrics without a variant.

Several metrics exist in several tools' implementations (issue 23; ``MetricSpec.implementations``):
:func:`resolve_implementations` turns a run's choice (:mod:`scoring.metrics.implementation_choice`) into
the implementation of each metric, which :func:`signature_parameters` records (``impl:nlg-eval``) and
:func:`compute_metrics` computes with.

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
from scoring.metrics.chrf_specs import chrf_specs
from scoring.metrics.cider_specs import cider_spec
from scoring.metrics.contextual_encoder import encoder_heartbeat
from scoring.metrics.cross_ruber_specs import cross_ruber_specs
from scoring.metrics.embedding_specs import embedding_specs
from scoring.metrics.implementation_choice import (
    ImplementationChoice,
    checked_options,
    default_implementation,
)
from scoring.metrics.learned_specs import bert_ruber_specs, ruber_specs
from scoring.metrics.maude_specs import maude_specs
from scoring.metrics.overlap_specs import overlap_specs, rouge_specs
from scoring.metrics.plugins import MetricPlugin, discovered_plugins, spec_problem
from scoring.metrics.spec import (
    IMPLEMENTATION_PARAMETER,
    MODEL_PARAMETER,
    TOKENIZER_PARAMETER,
    VECTOR_HASH_PARAMETER,
    VECTOR_STORE_PARAMETER,
    MetricFamily,
    MetricImplementation,
    MetricSpec,
    VectorsChoice,
)
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
    implementation: str = "",
) -> SystemScore:
    """The system-level metric ``name`` of one system, from its outputs per context.

    ``tokenizer`` is "default" (the language's tokenizer) or "none" (whitespace split, for text that is
    already tokenized); see :mod:`scoring.metrics.tokenize`. ``implementation`` names one of the
    metric's implementations (corpus BLEU by nltk, sacrebleu or nlg-eval); "" its default.
    """
    spec = system_metric_spec(name)
    compute, defaults = spec.compute_for(implementation)
    unknown = sorted(set(params or {}) - set(defaults))
    if unknown:
        raise ValueError(f"metric {name!r} has no parameter(s) {', '.join(unknown)}")
    merged = {**defaults, **(params or {}), TOKENIZER_PARAMETER: checked_tokenizer(tokenizer)}
    return compute(contexts, language, merged)


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


def metric_parameters(
    name: str, params: Mapping[str, str] | None = None, *, implementation: str = ""
) -> dict[str, str]:
    """The metric's default parameters (its ``implementation``'s, for a metric that has several) with
    ``params`` applied; unknown keys, and values an implementation does not offer, are an error."""
    spec = metric_spec(name)
    chosen = _implementation_of(spec, implementation)
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
        spec: MetricSpec | SystemMetricSpec = _SPECS[name] if name in _SPECS else system_metric_spec(name)
        implementation = parsed.for_spec(spec)
        if implementation:
            resolved[name] = implementation
    return resolved


def included_by_choice(name: str, choice: str | ImplementationChoice | None) -> bool:
    """Whether "all metrics" under ``choice`` takes ``name`` (see ``ImplementationChoice.includes``)."""
    parsed = choice if isinstance(choice, ImplementationChoice) else implementation_choice(choice)
    spec: MetricSpec | SystemMetricSpec = _SPECS[name] if name in _SPECS else system_metric_spec(name)
    return parsed.includes(spec)


def checked_run_options(
    names: Sequence[str], implementations: Mapping[str, str], options: Mapping[str, str]
) -> dict[str, str]:
    """A run's ``options`` checked against the implementations chosen for its metrics (each option must be
    a parameter one of them lets the researcher set, with a value it offers)."""
    chosen: dict[str, tuple[MetricSpec | SystemMetricSpec, str]] = {}
    for name in names:
        spec: MetricSpec | SystemMetricSpec = _SPECS[name] if name in _SPECS else system_metric_spec(name)
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
        chosen = _implementation_of(metric_spec(name), implementation)
        keys = set(chosen.choices if chosen is not None else ())
    return {key: value for key, value in options.items() if key in keys}


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
    chosen = _implementation_of(spec, implementation)
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


def _implementation_of(spec: MetricSpec, implementation: str) -> MetricImplementation | None:
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
    chosen = _implementation_of(spec, implementation)
    return spec.whole_set or (chosen is not None and chosen.whole_set)


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
    implementations: Mapping[str, str] | None = None,
    vectors: VectorsChoice | None = None,
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

    ``implementations`` names the implementation of each metric that has several (``{"bleu-4":
    "nlg-eval"}``, from :func:`resolve_implementations`); a metric left out uses its default. ``params``
    then overrides that implementation's parameters (``{"tok": "intl"}`` for sacrebleu). ``vectors``
    gives the metrics that read word vectors other vectors than their default (GloVe 6B 50d).
    """
    checked_tokenizer(tokenizer)
    chosen = dict(implementations or {})
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
        and not any(is_whole_set(spec.name, chosen.get(spec.name, "")) for spec in specs)
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
            chosen,
            vectors,
        )
    own_parameters = {
        spec.name: metric_parameters(spec.name, implementation=chosen.get(spec.name, "")) for spec in specs
    }
    unused = sorted(set(params or {}) - {key for own in own_parameters.values() for key in own})
    if unused:
        raise ValueError(f"no metric among {', '.join(names)} has the parameter(s) {', '.join(unused)}")
    missing = sorted(
        {spec.model_kind for spec in specs if spec.model_kind and not (models or {}).get(spec.model_kind)}
    )
    if missing:  # every missing kind at once, not the first alone (issue 34)
        needing = [spec.name for spec in specs if spec.model_kind in missing]
        wanted = [f"a trained {kind} model" for kind in missing]
        raise MissingModelError(
            f"The {'metric' if len(needing) == 1 else 'metrics'} {_words_and(needing)} "
            f"{'needs' if len(needing) == 1 else 'need'} {_words_and(wanted)}, and none was given."
        )
    results: dict[str, list[float | None]] = {}
    by_family: dict[tuple[str, str], list[MetricSpec]] = {}
    for spec in specs:
        implementation = _implementation_of(spec, chosen.get(spec.name, ""))
        own = _own_parameters(spec, params, models, tokenizer, implementation, vectors)
        if spec.family:
            by_family.setdefault((spec.family, implementation.name if implementation else ""), []).append(
                spec
            )
        elif spec.context_compute is not None:
            values = spec.context_compute(
                hypotheses,
                contexts if contexts is not None else [[query] for query in queries],
                language,
                own,
            )
            results[spec.name] = _checked_length(spec.name, values, len(hypotheses))
        else:
            compute = implementation.compute if implementation is not None else spec.compute
            values = compute(hypotheses, references, queries, language, own)
            results[spec.name] = _checked_length(spec.name, values, len(hypotheses))
    for (family_name, implementation_name), members in by_family.items():
        family_params: dict[str, str] = {}
        for spec in members:
            family_params.update(
                _own_parameters(
                    spec,
                    params,
                    models,
                    tokenizer,
                    _implementation_of(spec, chosen.get(spec.name, "")),
                    vectors,
                )
            )
        family = _FAMILIES[family_name]
        if family.context_compute is not None:
            scores = family.context_compute(
                [spec.name for spec in members],
                hypotheses,
                references,
                contexts if contexts is not None else [[query] for query in queries],
                language,
                family_params,
            )
        else:
            scores = family.compute_for(implementation_name)(
                [spec.name for spec in members], hypotheses, references, queries, language, family_params
            )
        for spec in members:
            results[spec.name] = _checked_length(spec.name, scores[spec.name], len(hypotheses))
    if progress is not None:
        progress(len(hypotheses))
    return {name: results[name] for name in names}


def _words_and(words: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


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
    implementations: Mapping[str, str],
    vectors: VectorsChoice | None,
) -> dict[str, list[float | None]]:
    """Slices of ``size`` items, doubled while a slice takes under half a second (fast metrics then pay the
    per-call cost a few times, not once per 64 items; slow ones keep reporting every ``size`` items).

    Neural metrics (``MetricSpec.one_pass``) are computed first, over every item in one call: their encoder
    then sorts and encodes the call's distinct texts once (slices would encode a text once per slice it
    occurs in, and pad each slice's short batches: about twice the encoder's work, issue 27); the encoder's
    batches beat ``progress`` meanwhile."""
    results: dict[str, list[float | None]] = {name: [] for name in names}
    one_pass = [name for name in names if metric_spec(name).one_pass]
    if one_pass:
        taken = {
            key
            for name in one_pass
            for key in metric_parameters(name, implementation=implementations.get(name, ""))
        }
        with encoder_heartbeat(lambda: progress(0)):
            whole = compute_metrics(
                one_pass,
                hypotheses,
                references,
                queries,
                language,
                {key: value for key, value in (params or {}).items() if key in taken},
                models,
                tokenizer=tokenizer,
                contexts=contexts,
                implementations=implementations,
                vectors=vectors,
            )
        results.update(whole)
        names = [name for name in names if name not in whole]
        if not names:
            progress(len(hypotheses))
            return results
        taken = {
            key
            for name in names
            for key in metric_parameters(name, implementation=implementations.get(name, ""))
        }
        params = {key: value for key, value in (params or {}).items() if key in taken}
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
            implementations=implementations,
            vectors=vectors,
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
    spec: MetricSpec,
    params: Mapping[str, str] | None,
    models: Mapping[str, str] | None,
    tokenizer: str,
    implementation: MetricImplementation | None,
    vectors: VectorsChoice | None = None,
) -> dict[str, str]:
    defaults = implementation.parameters if implementation is not None else spec.parameters
    own = metric_parameters(
        spec.name,
        {k: v for k, v in (params or {}).items() if k in defaults},
        implementation=implementation.name if implementation is not None else "",
    )
    if implementation is not None:
        own[IMPLEMENTATION_PARAMETER] = implementation.name
    if spec.reads_vectors and vectors is not None:
        own["vectors"] = vectors.name
        if vectors.folder:
            own[VECTOR_STORE_PARAMETER] = vectors.folder
            own[VECTOR_HASH_PARAMETER] = vectors.content_hash
    if spec.model_kind:
        own[MODEL_PARAMETER] = str((models or {})[spec.model_kind])
    elif spec.uses_tokenizer and not (implementation is not None and implementation.own_tokenizer):
        own[TOKENIZER_PARAMETER] = tokenizer
    return own


def _checked_length(name: str, values: Sequence[float | None], expected: int) -> list[float | None]:
    if len(values) != expected:
        raise RuntimeError(f"{name} returned {len(values)} scores for {expected} items")
    return list(values)


def _register_builtin_metrics() -> None:
    family, specs = bleu_specs()
    register_metric_family(family, specs)
    family, specs = rouge_specs()
    register_metric_family(family, specs)
    for spec in overlap_specs():
        register_metric(spec)
    register_metric(cider_spec())
    family, specs = chrf_specs()
    register_metric_family(family, specs)
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
    scores, (cross_family, blends) = cross_ruber_specs()
    for spec in scores:
        register_metric(spec)
    register_metric_family(cross_family, blends)


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

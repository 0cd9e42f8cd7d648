"""Every metric the app can compute, by name, and the one entry point that computes several at once.

The metric engine is three rooms with one direction, and this module is their front door:

- :mod:`scoring.metrics.lookup`: the registered specs by name, their families, implementations and
  parameters, and what a run's choice resolves to (registering and looking up only);
- :mod:`scoring.metrics.signature_parameters`: what goes into the signature of a metric's scores, as the
  spec declares it;
- :mod:`scoring.metrics.compute`: the compute strategies (family, per metric, one pass, whole set, per
  system) over one :class:`~scoring.metrics.compute.MetricInputs`.

Each reads the lookup's tables and none writes back; this module fills them once, at import: a metric is
registered as a :class:`~scoring.metrics.spec.MetricSpec`, and metrics that share work together with
their :class:`~scoring.metrics.spec.MetricFamily` (BLEU-1..4 tokenize and count n-grams once).
Registered: BLEU-1..4, ROUGE-L, METEOR, CIDEr-D, chrF and the three embedding baselines (as Gupta et
al., 2019 compare them), RUBER's scores and blends over a trained model (Tao et al., 2018), BERT-RUBER's referenced score
over MiniLM and its unreferenced factorial cells and blends over a trained model (Ghazarian et al.,
2019), MaUde and its baselines over a trained model (Sinha et al., 2020; context-aware: they read every
context turn), Cross-RUBER's scores and blends over a trained model (its unreferenced score and blends
read the context too), and the system-level metrics (diversity, corpus BLEU and chrF).

Several metrics exist in several tools' implementations (``MetricSpec.implementations``):
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from scoring.metrics.bert_ruber_referenced import bert_ruber_referenced_spec
from scoring.metrics.bleu_family import bleu_specs
from scoring.metrics.chrf_specs import chrf_specs
from scoring.metrics.cider_specs import cider_spec
from scoring.metrics.compute import (
    ComputeChoices,
    MetricInputs,
    combine_metric,
    compute_system_metric,
    metrics_compute,
)
from scoring.metrics.cross_ruber_specs import cross_ruber_specs
from scoring.metrics.embedding_specs import embedding_specs
from scoring.metrics.learned_specs import bert_ruber_specs, ruber_specs
from scoring.metrics.lookup import (
    _PLUGIN_OF,
    _PLUGINS,
    _SPECS,
    BUILTIN_ORIGIN,
    PLUGIN_ORIGIN,
    VARIANT_SEPARATOR,
    MissingModelError,
    UnknownMetricError,
    available_metric_names,
    available_system_metric_names,
    check_registrable,
    checked_run_options,
    implementation_choice,
    implementation_groups,
    implementation_names,
    included_by_choice,
    is_system_metric,
    is_variant,
    is_whole_set,
    metric_origin,
    metric_parameters,
    metric_plugin,
    metric_plugins,
    metric_spec,
    metric_specs,
    options_for,
    register_metric,
    register_metric_family,
    register_plugin_metric,
    register_system_metric,
    resolve_implementations,
    split_metric_names,
    system_metric_spec,
    undefined_reason,
)
from scoring.metrics.maude_specs import maude_specs
from scoring.metrics.overlap_specs import overlap_specs, rouge_specs
from scoring.metrics.plugins import MetricPlugin, discovered_plugins, spec_problem
from scoring.metrics.signature_parameters import signature_parameters
from scoring.metrics.spec import (
    PLUGIN_SIGNATURE_KEY,
    MetricFamily,
    MetricImplementation,
    MetricSpec,
    VectorsChoice,
)
from scoring.metrics.system_specs import SystemMetricSpec, system_metric_specs
from scoring.metrics.tokenize import DEFAULT_TOKENIZER

logger = logging.getLogger(__name__)


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
    """``{name: [score per item]}`` for every metric in ``names``, each family computed once: the items as
    one :class:`~scoring.metrics.compute.MetricInputs`, the choices as one
    :class:`~scoring.metrics.compute.ComputeChoices`, computed by :func:`scoring.metrics.compute.metrics_compute`
    (this is its spelled-out form, which benchmarks, tests and the run's chunks call).

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
    return metrics_compute(
        names,
        MetricInputs(hypotheses, references, queries, language, contexts),
        ComputeChoices(
            params=params,
            models=models,
            tokenizer=tokenizer,
            implementations=dict(implementations or {}),
            vectors=vectors,
        ),
        progress=progress,
        progress_every=progress_every,
    )


def metric_plugins_reload() -> list[MetricPlugin]:
    """Unregister every plugin metric and load the entry points again (after a package was installed or
    removed in this process, e.g. a test's plugin on ``sys.path``); returns :func:`metric_plugins`."""
    for name in _PLUGIN_OF:
        _SPECS.pop(name, None)
    _PLUGIN_OF.clear()
    _PLUGINS.clear()
    _register_plugin_metrics()
    return metric_plugins()


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
        register_system_metric(system_spec)
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
            register_plugin_metric(spec, plugin)
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
            check_registrable(spec)
        except ValueError as error:
            return str(error)
        unknown = [name for name in spec.requires if name not in _SPECS and name not in names]
        if unknown:
            return f"metric {spec.name!r} requires {', '.join(unknown)}, which is not registered"
    return ""


_register_builtin_metrics()
_register_plugin_metrics()


__all__ = [
    "BUILTIN_ORIGIN",
    "PLUGIN_ORIGIN",
    "PLUGIN_SIGNATURE_KEY",
    "VARIANT_SEPARATOR",
    "ComputeChoices",
    "MetricFamily",
    "MetricImplementation",
    "MetricInputs",
    "MetricSpec",
    "MissingModelError",
    "SystemMetricSpec",
    "UnknownMetricError",
    "VectorsChoice",
    "available_metric_names",
    "available_system_metric_names",
    "checked_run_options",
    "combine_metric",
    "compute_metrics",
    "compute_system_metric",
    "implementation_choice",
    "implementation_groups",
    "implementation_names",
    "included_by_choice",
    "is_system_metric",
    "is_variant",
    "is_whole_set",
    "metric_origin",
    "metric_parameters",
    "metric_plugin",
    "metric_plugins",
    "metric_plugins_reload",
    "metric_spec",
    "metric_specs",
    "metrics_compute",
    "options_for",
    "register_metric",
    "register_metric_family",
    "resolve_implementations",
    "signature_parameters",
    "split_metric_names",
    "system_metric_spec",
    "undefined_reason",
]

"""Metrics from other Python packages: entry points of the group ``dialeval.metrics``.

A package registers metrics by naming, in its ``pyproject.toml``::

    [project.entry-points."dialeval.metrics"]
    reply-length = "my_package.metrics:reply_length_spec"

The object an entry point names is either a :class:`~scoring.metrics.spec.MetricSpec`, or a callable that
takes no argument and returns one ``MetricSpec`` or an iterable of them. A spec's ``compute`` takes the
built-in metrics' ``(inputs, params)`` (:class:`~scoring.metrics.spec.MetricCompute`: one
:class:`~scoring.metrics.inputs.MetricInputs`), or the fixed argument list ``(hypotheses, references,
queries, language, params)`` of the protocol before it (:class:`~scoring.metrics.spec.BatchCompute`), which
the loader adapts (:func:`plugin_compute`), so that plugins written for it score unchanged; a plugin that is
type-checked wraps such a function in :func:`batch_compute` itself. Plugin metrics stand alone: no
``family`` and no ``model_kind`` (the trained-model kinds are the app's own).

Loading a plugin never stops the app: an entry point that fails to import, returns something else, or
names a metric that is already registered is skipped, with a logged warning that names it, and listed as
broken (``manage.py list_metrics``). This module only finds and loads entry points; the registry
(:mod:`scoring.metrics.registry`) checks the specs against what is registered and registers them.

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from scoring.metrics.inputs import MetricInputs
from scoring.metrics.spec import BatchCompute, MetricCompute, MetricSpec

ENTRY_POINT_GROUP = "dialeval.metrics"
logger = logging.getLogger(__name__)
UNKNOWN = "unknown"


@dataclass(frozen=True)
class MetricPlugin:
    """One entry point of the group: the metrics it gave, or ``error``, why it was skipped."""

    entry_point: str  # the entry point's name
    target: str  # what it names, "module:attribute"
    distribution: str  # the installed package that declares it (its METADATA name)
    version: str  # that package's version
    specs: tuple[MetricSpec, ...] = ()
    error: str = ""

    @property
    def loaded(self) -> bool:
        return not self.error

    @property
    def signature_value(self) -> str:
        """What its metrics' signatures record: ``plugin:<distribution>@<version>``."""
        return f"{self.distribution}@{self.version}"

    def describe(self) -> str:
        return f"{self.entry_point} = {self.target} ({self.distribution} {self.version})"


def discovered_plugins() -> Iterator[MetricPlugin]:
    """Every entry point of :data:`ENTRY_POINT_GROUP` on ``sys.path``, loaded (or with its error)."""
    importlib.invalidate_caches()  # a path added since the last look (a test's plugin) is seen
    try:
        found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=_order)
    except Exception as error:  # a broken installed distribution's metadata: no plugin, but the app runs
        logger.warning("metric plugins: the installed packages' entry points could not be read: %s", error)
        return
    for entry_point in found:
        yield plugin_load(entry_point)


def plugin_load(entry_point: EntryPoint) -> MetricPlugin:
    """The specs an entry point gives; any exception while loading or calling it becomes ``error``."""
    distribution, version = _distribution(entry_point)
    plugin = MetricPlugin(
        entry_point=entry_point.name, target=entry_point.value, distribution=distribution, version=version
    )
    try:
        specs = specs_from(entry_point.load())
    except Exception as error:  # a third-party import or call: anything can go wrong, the app goes on
        return replace(plugin, error=f"could not be loaded: {type(error).__name__}: {error}")
    if not specs:
        return replace(plugin, error="gave no metric")
    return replace(plugin, specs=tuple(_adapted(spec) for spec in specs))


def batch_compute(compute: BatchCompute) -> MetricCompute:
    """A compute of the fixed argument list ``(hypotheses, references, queries, language, params)`` as the
    registry calls a metric: with one :class:`~scoring.metrics.inputs.MetricInputs` and the parameters."""

    def adapted(inputs: MetricInputs, params: Mapping[str, str]) -> Sequence[float | None]:
        return compute(inputs.hypotheses, inputs.references, inputs.queries, inputs.language, params)

    return adapted


def plugin_compute(compute: Any) -> MetricCompute:
    """A plugin spec's ``compute`` as the registry calls it: one that takes the five arguments of
    :class:`~scoring.metrics.spec.BatchCompute` is adapted by :func:`batch_compute`; any other is taken to
    be a :class:`~scoring.metrics.spec.MetricCompute` already."""
    return batch_compute(compute) if _positional_arguments(compute) == _BATCH_ARGUMENTS else compute


_BATCH_ARGUMENTS = 5


def _positional_arguments(compute: Any) -> int:
    """How many positional arguments ``compute`` requires (-1 when it takes ``*args`` or cannot be read)."""
    try:
        parameters = inspect.signature(compute).parameters.values()
    except (TypeError, ValueError):  # a builtin or an object without a readable signature
        return -1
    if any(parameter.kind is inspect.Parameter.VAR_POSITIONAL for parameter in parameters):
        return -1
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(
        1
        for parameter in parameters
        if parameter.kind in positional and parameter.default is inspect.Parameter.empty
    )


def _adapted(spec: MetricSpec) -> MetricSpec:
    """``spec`` with its compute adapted (:func:`plugin_compute`); a spec without a callable compute is
    left for :func:`spec_problem` to name."""
    if not callable(spec.compute):
        return spec
    return replace(spec, compute=plugin_compute(spec.compute))


def specs_from(target: object) -> tuple[MetricSpec, ...]:
    """The specs an entry point's object stands for (see the module docstring); TypeError otherwise."""
    if isinstance(target, MetricSpec):
        return (target,)
    if not callable(target):
        raise TypeError(
            f"it names a {type(target).__name__}, not a MetricSpec or a callable returning MetricSpecs"
        )
    result = target()
    if isinstance(result, MetricSpec):
        return (result,)
    if not isinstance(result, Iterable) or isinstance(result, str | bytes):
        raise TypeError(f"its callable returned a {type(result).__name__}, not MetricSpecs")
    specs = tuple(result)
    wrong = [type(spec).__name__ for spec in specs if not isinstance(spec, MetricSpec)]
    if wrong:
        raise TypeError(f"its callable returned {', '.join(sorted(set(wrong)))} among its MetricSpecs")
    return specs


def spec_problem(spec: MetricSpec) -> str:
    """Why a plugin's spec cannot be registered as it is, or ``""`` (name rules are the registry's)."""
    if spec.family:
        return f"metric {spec.name!r} names a family ({spec.family!r}); plugin metrics stand alone"
    if spec.model_kind:
        return (
            f"metric {spec.name!r} needs a trained {spec.model_kind!r} model; plugins cannot add model kinds"
        )
    if not callable(spec.compute):
        return f"metric {spec.name!r} has no callable compute"
    if not spec.version:
        return f"metric {spec.name!r} has no version (it goes into every signature)"
    return ""


def _distribution(entry_point: EntryPoint) -> tuple[str, str]:
    dist = entry_point.dist
    if dist is None:
        return UNKNOWN, UNKNOWN
    try:
        return str(dist.metadata["Name"] or UNKNOWN), str(dist.version or UNKNOWN)
    except Exception:  # unreadable METADATA: the entry point may still load
        return UNKNOWN, UNKNOWN


def _order(entry_point: EntryPoint) -> tuple[str, str]:
    return entry_point.name, entry_point.value

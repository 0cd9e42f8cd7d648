"""Computing registered metrics over a batch of items: one :class:`MetricInputs`, four strategies.

The strategies, chosen from the specs and never by the caller:

- **family**: metrics that share work (BLEU-1..4 tokenize and count n-grams once; the embedding
  baselines read the vectors once) are computed in one call of their :class:`~scoring.metrics.spec.MetricFamily`
  for all of the family's requested members, under one implementation;
- **per metric**: a metric of its own, by its implementation's compute, or with every context turn for a
  context-aware metric (MaUde, Sinha et al., 2020);
- **one pass**: neural metrics (``MetricSpec.one_pass``) over every item in one call, never slice by slice,
  so that their encoder sorts and encodes the distinct texts once; the other metrics in slices that grow
  while they compute fast, reporting progress after each;
- **whole set**: metrics whose values depend on every item scored together (RUBER's blends, Tao et al.,
  2018; nlg-eval's CIDEr-D) are computed in one call and never sliced; :func:`combine_metric` makes a blend
  from its stored components' values.

System-level metrics (one value per system: diversity, corpus BLEU) are :func:`compute_system_metric`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from scoring.metrics.contextual_encoder import encoder_heartbeat
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.lookup import (
    MissingModelError,
    implementation_of,
    is_whole_set,
    metric_family,
    metric_parameters,
    metric_spec,
    metric_specs,
    system_metric_spec,
)
from scoring.metrics.spec import (
    IMPLEMENTATION_PARAMETER,
    MODEL_PARAMETER,
    TOKENIZER_PARAMETER,
    VECTOR_HASH_PARAMETER,
    VECTOR_STORE_PARAMETER,
    MetricImplementation,
    MetricSpec,
    VectorsChoice,
)
from scoring.metrics.system_specs import ContextOutputs, SystemScore
from scoring.metrics.tokenize import DEFAULT_TOKENIZER, checked_tokenizer

Scores = dict[str, list[float | None]]


@dataclass(frozen=True)
class ComputeChoices:
    """How a call computes its metrics: parameter overrides, trained models by kind (``{kind: artifact
    folder}``), the tokenizer, each metric's implementation, and word vectors other than the default."""

    params: Mapping[str, str] | None = None
    models: Mapping[str, str] | None = None
    tokenizer: str = DEFAULT_TOKENIZER
    implementations: Mapping[str, str] = field(default_factory=dict)
    vectors: VectorsChoice | None = None


def metrics_compute(
    names: Sequence[str],
    inputs: MetricInputs,
    choices: ComputeChoices,
    *,
    progress: Callable[[int], None] | None = None,
    progress_every: int = 64,
) -> Scores:
    """``{name: [score per item]}`` for every metric in ``names`` (see ``registry.compute_metrics``)."""
    checked_tokenizer(choices.tokenizer)
    inputs.check()
    specs = metric_specs(names)
    chosen = choices.implementations
    sliced = not any(is_whole_set(spec.name, chosen.get(spec.name, "")) for spec in specs)
    if progress is not None and sliced and len(inputs) > progress_every:
        return _compute_in_slices(names, inputs, choices, progress, progress_every)
    _check_parameters_and_models(names, specs, choices)
    results: Scores = {}
    by_family: dict[tuple[str, str], list[MetricSpec]] = {}
    for spec in specs:
        implementation = implementation_of(spec, chosen.get(spec.name, ""))
        own = _own_parameters(spec, choices, implementation)
        if spec.family:
            key = (spec.family, implementation.name if implementation else "")
            by_family.setdefault(key, []).append(spec)
        else:
            results[spec.name] = _compute_one(spec, implementation, inputs, own)
    for (family_name, implementation_name), members in by_family.items():
        results.update(_compute_family(family_name, implementation_name, members, inputs, choices))
    if progress is not None:
        progress(len(inputs))
    return {name: results[name] for name in names}


def _check_parameters_and_models(
    names: Sequence[str], specs: Sequence[MetricSpec], choices: ComputeChoices
) -> None:
    """Every parameter given belongs to some metric asked for, and every learned metric has its model."""
    chosen = choices.implementations
    own_parameters = {
        spec.name: metric_parameters(spec.name, implementation=chosen.get(spec.name, "")) for spec in specs
    }
    unused = sorted(set(choices.params or {}) - {key for own in own_parameters.values() for key in own})
    if unused:
        raise ValueError(f"no metric among {', '.join(names)} has the parameter(s) {', '.join(unused)}")
    models = choices.models or {}
    missing = sorted(
        {spec.model_kind for spec in specs if spec.model_kind and not models.get(spec.model_kind)}
    )
    if missing:  # every missing kind at once, not the first alone
        needing = [spec.name for spec in specs if spec.model_kind in missing]
        wanted = [f"a trained {kind} model" for kind in missing]
        raise MissingModelError(
            f"The {'metric' if len(needing) == 1 else 'metrics'} {_words_and(needing)} "
            f"{'needs' if len(needing) == 1 else 'need'} {_words_and(wanted)}, and none was given."
        )


def _compute_one(
    spec: MetricSpec, implementation: MetricImplementation | None, inputs: MetricInputs, own: dict[str, str]
) -> list[float | None]:
    """A metric outside any family, by its implementation's compute (a context-aware one reads
    ``inputs.context_turns``)."""
    compute = implementation.compute if implementation is not None else spec.compute
    return _checked_length(spec.name, compute(inputs, own), len(inputs))


def _compute_family(
    family_name: str,
    implementation_name: str,
    members: Sequence[MetricSpec],
    inputs: MetricInputs,
    choices: ComputeChoices,
) -> Scores:
    """The requested ``members`` of a family in one call of the family's compute for their implementation,
    with the parameters of every member together."""
    family_params: dict[str, str] = {}
    for spec in members:
        implementation = implementation_of(spec, choices.implementations.get(spec.name, ""))
        family_params.update(_own_parameters(spec, choices, implementation))
    family = metric_family(family_name)
    scores = family.compute_for(implementation_name)([spec.name for spec in members], inputs, family_params)
    return {spec.name: _checked_length(spec.name, scores[spec.name], len(inputs)) for spec in members}


def _words_and(words: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _compute_in_slices(
    names: Sequence[str],
    inputs: MetricInputs,
    choices: ComputeChoices,
    progress: Callable[[int], None],
    size: int,
) -> Scores:
    """Slices of ``size`` items, doubled while a slice takes under half a second (fast metrics then pay the
    per-call cost a few times, not once per 64 items; slow ones keep reporting every ``size`` items).

    Neural metrics (``MetricSpec.one_pass``) are computed first, over every item in one call: their encoder
    then sorts and encodes the call's distinct texts once (slices would encode a text once per slice it
    occurs in, and pad each slice's short batches: about twice the encoder's work); the encoder's batches
    beat ``progress`` meanwhile."""
    results: Scores = {name: [] for name in names}
    one_pass = [name for name in names if metric_spec(name).one_pass]
    if one_pass:
        with encoder_heartbeat(lambda: progress(0)):
            whole = metrics_compute(one_pass, inputs, _taking(one_pass, choices))
        results.update(whole)
        names = [name for name in names if name not in whole]
        if not names:
            progress(len(inputs))
            return results
        choices = _taking(names, choices)
    start, size = 0, max(1, size)
    while start < len(inputs):
        end = start + size
        began = time.perf_counter()
        part = metrics_compute(names, inputs.slice(start, end), choices)
        for name in names:
            results[name].extend(part[name])
        progress(min(end, len(inputs)))
        if time.perf_counter() - began < _FAST_SLICE_SECONDS:
            size *= 2
        start = end
    return results


_FAST_SLICE_SECONDS = 0.5


def _taking(names: Sequence[str], choices: ComputeChoices) -> ComputeChoices:
    """``choices`` with only the parameters some metric of ``names`` has."""
    implementations = choices.implementations
    taken = {
        key for name in names for key in metric_parameters(name, implementation=implementations.get(name, ""))
    }
    return replace(
        choices, params={key: value for key, value in (choices.params or {}).items() if key in taken}
    )


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


def _own_parameters(
    spec: MetricSpec, choices: ComputeChoices, implementation: MetricImplementation | None
) -> dict[str, str]:
    """What ``spec``'s compute receives: its parameters with the call's overrides, and what the registry
    sets (implementation, word vectors, trained model or tokenizer)."""
    defaults = implementation.parameters if implementation is not None else spec.parameters
    own = metric_parameters(
        spec.name,
        {k: v for k, v in (choices.params or {}).items() if k in defaults},
        implementation=implementation.name if implementation is not None else "",
    )
    if implementation is not None:
        own[IMPLEMENTATION_PARAMETER] = implementation.name
    vectors = choices.vectors
    if spec.reads_vectors and vectors is not None:
        own["vectors"] = vectors.name
        if vectors.folder:
            own[VECTOR_STORE_PARAMETER] = vectors.folder
            own[VECTOR_HASH_PARAMETER] = vectors.content_hash
    if spec.model_kind:
        own[MODEL_PARAMETER] = str((choices.models or {})[spec.model_kind])
    elif spec.uses_tokenizer and not (implementation is not None and implementation.own_tokenizer):
        own[TOKENIZER_PARAMETER] = choices.tokenizer
    return own


def _checked_length(name: str, values: Sequence[float | None], expected: int) -> list[float | None]:
    if len(values) != expected:
        raise RuntimeError(f"{name} returned {len(values)} scores for {expected} items")
    return list(values)

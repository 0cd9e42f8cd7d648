"""What the registry knows about a metric: its name, what it needs, and how to compute it in batches.

Metric code is batch-first: ``hypotheses[i]`` is the reply to score, ``references[i]`` every reference
for item ``i`` (empty for items without one; reference-based metrics are only given items that have at
least one), ``queries[i]`` the last context turn (for reference-free metrics such as RUBER's unreferenced
score, seed 000 section 3.2). Metrics that share work (BLEU-1..4 share tokenization and n-gram counts)
belong to one :class:`MetricFamily`, whose compute returns several metrics at once.

A score is a float, or ``None`` where the metric has no defined value for the item (RUBER's s_R when the
reply has no word with a vector); callers store nothing for it and count it.

Learned metrics name the kind of trained model they need (``model_kind``: "ruber", "bert-ruber"); their
compute receives the artifact folder as the parameter :data:`MODEL_PARAMETER`, and their signature records
the artifact's content hash. Metrics whose value depends on the whole set scored together (RUBER's blends
normalise min-max over the set, seed 000 eq. 4) are ``whole_set``: they must be computed in one call over
every item, never batch by batch.

Metrics that tokenize with the project tokenizers (``uses_tokenizer`` and no ``model_kind``) receive the
tokenizer chosen for the call (``scoring.metrics.tokenize.TOKENIZERS``) as the parameter
:data:`TOKENIZER_PARAMETER`; learned metrics tokenize as their trained model was trained.

Context-aware metrics (MaUde, seed 004) read every turn of the context, not only the last: they have a
``context_compute`` (:class:`ContextCompute`), called with ``contexts[i]``, the turns of item ``i``
oldest first. Their plain ``compute`` scores with the one-turn context ``[queries[i]]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from scoring.metrics.tokenize import DEFAULT_TOKENIZER


class BatchCompute(Protocol):
    def __call__(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        queries: Sequence[str],
        language: str,
        params: Mapping[str, str],
    ) -> Sequence[float | None]: ...


class FamilyCompute(Protocol):
    def __call__(
        self,
        names: Sequence[str],
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        queries: Sequence[str],
        language: str,
        params: Mapping[str, str],
    ) -> Mapping[str, Sequence[float | None]]: ...


class ContextCompute(Protocol):
    def __call__(
        self,
        hypotheses: Sequence[str],
        contexts: Sequence[Sequence[str]],
        language: str,
        params: Mapping[str, str],
    ) -> Sequence[float | None]: ...


@dataclass(frozen=True)
class MetricFamily:
    """Metrics computed together; ``compute(names, ...)`` returns ``{name: scores}`` for the names asked."""

    name: str
    compute: FamilyCompute


UNDEFINED_WHEN = "the metric is not defined for them (an empty reply or reference)"
NO_VECTOR = "the reply, or every one of its references, has no word with a vector"


@dataclass(frozen=True)
class MetricSpec:
    name: str  # lowercase, hyphenated: "bleu-2", later "rouge-l", "ruber-unref"
    description: str
    needs_references: bool
    version: str  # part of the signature; bump it when a change can change scores
    compute: BatchCompute
    family: str = ""  # the MetricFamily that computes it together with its siblings, if any
    parameters: Mapping[str, str] = field(default_factory=dict)  # defaults; all go into the signature
    uses_tokenizer: bool = True  # the tokenizer's name goes into the signature (see the module docstring)
    prefers_gpu: bool = False  # neural: scored on the "gpu" queue when a GPU worker is registered
    artifact_hash: str = ""  # content hash of a fixed embedding file (GloVe, MiniLM) it reads
    model_kind: str = ""  # "ruber" / "bert-ruber": needs a trained model of that kind (see module docstring)
    whole_set: bool = False  # its scores depend on every item scored together: compute in one call
    requires: tuple[str, ...] = ()  # metrics stored with it, e.g. the raw components of a blend
    # A whole-set metric computed from its ``requires`` components' values alone (RUBER's blends): given
    # ``{component: [value per item]}`` over the whole set, the metric's values. Scoring runs use it to
    # blend the stored raw scores instead of running the model a second time.
    combine: Callable[[Mapping[str, Sequence[float | None]]], Sequence[float | None]] | None = None
    # A context-aware metric (MaUde): given every turn of each item's context (oldest first), its values.
    context_compute: ContextCompute | None = None
    # When the metric has no value for an item (``None``): the cause, named in run notes and the report.
    undefined_when: str = UNDEFINED_WHEN

    @property
    def reads_context(self) -> bool:
        return self.context_compute is not None


# The parameter through which a learned metric's compute receives its trained model's artifact folder.
MODEL_PARAMETER = "model"

# The parameter through which a metric that tokenizes receives the tokenizer choice ("default": the
# language's tokenizer, "none": whitespace split); the registry sets it, callers never pass it in ``params``.
TOKENIZER_PARAMETER = "tokenizer"


def tokenizer_choice(params: Mapping[str, str]) -> str:
    """The tokenizer a compute call was given (:data:`TOKENIZER_PARAMETER`), else the language's own."""
    return params.get(TOKENIZER_PARAMETER, DEFAULT_TOKENIZER)


def family_member_compute(family_compute: FamilyCompute, name: str) -> BatchCompute:
    """The compute of one member of a family, for calling that metric on its own."""

    def compute(
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        queries: Sequence[str],
        language: str,
        params: Mapping[str, str],
    ) -> Sequence[float | None]:
        return family_compute([name], hypotheses, references, queries, language, params)[name]

    return compute


# How a referenced metric combines several references: the best-matching one (seed 003, section 3.2.1,
# eq. 1: score(y, R) = max over r in R of d(y, r)). Recorded in signatures as ``refagg``.
DEFAULT_REFERENCE_AGGREGATION = "max"


def reference_aggregation(
    params: Mapping[str, str],
    *,
    supported: Sequence[str] = (DEFAULT_REFERENCE_AGGREGATION,),
    metric: str = "",
) -> str:
    """The ``refagg`` parameter of a compute call, or a ValueError naming the metric and the choices."""
    aggregation = params.get("refagg", DEFAULT_REFERENCE_AGGREGATION)
    if aggregation not in supported:
        where = f" for {metric}" if metric else ""
        raise ValueError(
            f"unknown reference aggregation {aggregation!r}{where}; choose one of {tuple(supported)}"
        )
    return aggregation

"""What the registry knows about a metric: its name, what it needs, and how to compute it in batches.

Metric code is batch-first: a spec's compute takes one :class:`~scoring.metrics.inputs.MetricInputs`
(``hypotheses[i]`` the reply to score, ``references[i]`` every reference for item ``i``, empty for items
without one, since reference-based metrics are only given items that have at least one; ``queries[i]``
the last context turn, for reference-free metrics such as RUBER's unreferenced score, Tao et al. (2018)
section 3.2; ``context_turns[i]`` every turn) and its parameters, and reads only what it uses
(:class:`MetricCompute`). Metrics that share work (BLEU-1..4 share tokenization and n-gram counts) belong to
one :class:`MetricFamily`, whose compute returns several metrics at once (:class:`FamilyCompute`).

A score is a float, or ``None`` where the metric has no defined value for the item (RUBER's s_R when the
reply has no word with a vector); callers store nothing for it and count it.

Learned metrics name the kind of trained model they need (``model_kind``: "ruber", "bert-ruber"); their
compute receives the artifact folder as the parameter :data:`MODEL_PARAMETER`, and their signature records
the artifact's content hash. Metrics whose value depends on the whole set scored together (RUBER's blends
normalise min-max over the set, Tao et al. (2018) eq. 4) are ``whole_set``: they must be computed in one call over
every item, never batch by batch.

Metrics that tokenize with the project tokenizers (``uses_tokenizer`` and no ``model_kind``) receive the
tokenizer chosen for the call (``scoring.metrics.tokenize.TOKENIZERS``) as the parameter
:data:`TOKENIZER_PARAMETER`; learned metrics tokenize as their trained model was trained.

Context-aware metrics (MaUde, Sinha et al. (2020)) read every turn of the context, not only the last:
they are ``reads_context`` and read ``inputs.context_turns`` (each item's turns oldest first; the one-turn
context ``[queries[i]]`` when the caller has no more).

Implementations. The word-overlap and embedding baselines exist in several published tools
that give different numbers for "the same" metric (tokenizer, smoothing, ROUGE's beta, METEOR's version):
nltk's formulas (the project's default, :data:`DEFAULT_IMPLEMENTATION`), nlg-eval (pycocoevalcap, the
tool the dialog literature's tables used), sacrebleu and Google's rouge-score. Such a metric lists its
:class:`MetricImplementation` objects in ``MetricSpec.implementations``; the chosen one's compute, defaults,
version and tokenizer make the score, and its name goes into the signature as ``impl:<name>``. A metric
with no implementations (learned metrics, plugins) is computed one way only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from scoring.metrics.inputs import MetricInputs
from scoring.metrics.tokenize import DEFAULT_TOKENIZER, tokenizer_name


class MetricCompute(Protocol):
    """A metric's compute: its value per item of ``inputs`` (``None`` where it has none)."""

    def __call__(self, inputs: MetricInputs, params: Mapping[str, str]) -> Sequence[float | None]: ...


class FamilyCompute(Protocol):
    """A family's compute: ``{name: [value per item]}`` for the members ``names`` asked for."""

    def __call__(
        self, names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
    ) -> Mapping[str, Sequence[float | None]]: ...


class BatchCompute(Protocol):
    """The compute protocol of before :class:`MetricCompute`: a fixed argument list, most of it unused by
    most metrics. Plugins (:mod:`scoring.metrics.plugins`) may still give it; the loader adapts it."""

    def __call__(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        queries: Sequence[str],
        language: str,
        params: Mapping[str, str],
    ) -> Sequence[float | None]: ...


@dataclass(frozen=True)
class MetricFamily:
    """Metrics computed together; ``compute(names, ...)`` returns ``{name: scores}`` for the names asked.

    ``implementations`` gives the family compute of each implementation other than the default one
    (``compute``); the registry calls the one its members were asked with. A family that reads every
    context turn (Cross-RUBER's blends) reads ``inputs.context_turns``.
    """

    name: str
    compute: FamilyCompute
    implementations: Mapping[str, FamilyCompute] = field(default_factory=dict)

    def compute_for(self, implementation: str) -> FamilyCompute:
        return self.implementations.get(implementation, self.compute)


# The parameters through which a metric that reads word vectors (``MetricSpec.reads_vectors``) receives
# vectors a researcher registered (scoring.metrics.vector_files): their store folder and content hash. The
# registry sets them from ``compute_metrics(vectors=...)``; callers never pass them in ``params``.
VECTOR_STORE_PARAMETER = "vector-store"
VECTOR_HASH_PARAMETER = "vector-hash"


@dataclass(frozen=True)
class VectorsChoice:
    """The word vectors a run chose for the embedding metrics: ``name`` goes into the signature
    (``vectors:``) and ``content_hash`` as its artifact; ``folder`` is their store ("" : the vectors a
    package ships, GloVe 6B 50d)."""

    name: str
    folder: str = ""
    content_hash: str = ""


# The signature key that names the plugin (``<distribution>@<version>``) that computed a plugin's metric.
PLUGIN_SIGNATURE_KEY = "plugin"

# The implementation a run uses unless it chooses another: nltk's formulas (BLEU with smoothing method1,
# nltk's METEOR port, ROUGE-L F1 on the project tokenizer), the numbers the project has always given.
DEFAULT_IMPLEMENTATION = "nltk"
# The parameter through which a compute call receives the implementation chosen for it (set by the
# registry; callers choose with ``implementations=`` and never pass it in ``params``).
IMPLEMENTATION_PARAMETER = "impl"


@dataclass(frozen=True)
class MetricImplementation:
    """How one published tool computes a metric: what makes its number differ from another tool's.

    ``compute`` is the metric's compute under this implementation (for a family member, its share of
    the family's compute for this implementation); ``version`` the spec version plus the tool's own
    (``0.1.0+pycocoevalcap-1.2``); ``parameters`` its defaults, every one recorded in the signature
    (``case``, ``smooth``, ``beta``, ``tok`` ...); ``choices`` the values a run may give each parameter
    it lets the researcher change (a parameter without choices is fixed). ``own_tokenizer``: the
    implementation tokenizes as its tool does, so the run's tokenizer choice does not apply and
    ``parameters["tok"]`` names the tokenizer; otherwise the project tokenizer chosen for the run is
    used and recorded. ``whole_set``: its values depend on every item scored together (CIDEr-D's
    document frequencies).
    """

    name: str
    compute: MetricCompute
    version: str
    description: str = ""
    parameters: Mapping[str, str] = field(default_factory=dict)
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    own_tokenizer: bool = False
    whole_set: bool = False


UNDEFINED_WHEN = "the metric is not defined for them (an empty reply or reference)"
NO_VECTOR = "the reply, or every one of its references, has no word with a vector"


@dataclass(frozen=True)
class MetricSpec:
    name: str  # lowercase, hyphenated: "bleu-2", later "rouge-l", "ruber-unref"
    description: str
    needs_references: bool
    version: str  # part of the signature; bump it when a change can change scores
    compute: MetricCompute
    family: str = ""  # the MetricFamily that computes it together with its siblings, if any
    parameters: Mapping[str, str] = field(default_factory=dict)  # defaults; all go into the signature
    uses_tokenizer: bool = True  # the tokenizer's name goes into the signature (see the module docstring)
    prefers_gpu: bool = False  # neural: scored on the "gpu" queue when a GPU worker is registered
    # Neural: computed over every item of a call in one pass (its encoder sorts and encodes the call's
    # distinct texts once), never slice by slice; progress heartbeats come from the encoder between its
    # batches (scoring.metrics.contextual_encoder.encoder_heartbeat).
    one_pass: bool = False
    artifact_hash: str = ""  # content hash of a fixed embedding file (GloVe, MiniLM) it reads
    model_kind: str = ""  # "ruber" / "bert-ruber": needs a trained model of that kind (see module docstring)
    whole_set: bool = False  # its scores depend on every item scored together: compute in one call
    requires: tuple[str, ...] = ()  # metrics stored with it, e.g. the raw components of a blend
    # A whole-set metric computed from its ``requires`` components' values alone (RUBER's blends): given
    # ``{component: [value per item]}`` over the whole set, the metric's values. Scoring runs use it to
    # blend the stored raw scores instead of running the model a second time.
    combine: Callable[[Mapping[str, Sequence[float | None]]], Sequence[float | None]] | None = None
    # A context-aware metric (MaUde): its compute reads every turn of each item's context (oldest first,
    # ``MetricInputs.context_turns``), which a scoring run then passes.
    reads_context: bool = False
    # The tools that compute it, by name (see the module docstring); empty: computed one way only.
    implementations: Mapping[str, MetricImplementation] = field(default_factory=dict)
    # It reads word vectors: a run may give it other vectors (``compute_metrics(vectors=...)``).
    reads_vectors: bool = False
    # Where a run's per-family implementation choice names it (``bleu=sacrebleu``): its family, or for a
    # metric without one, a group of metrics computed by the same tools (``rouge``), else its name.
    implementation_group: str = ""
    # When the metric has no value for an item (``None``): the cause, named in run notes and the report.
    undefined_when: str = UNDEFINED_WHEN

    @property
    def group_name(self) -> str:
        """The name a run's per-family implementation choice uses for this metric."""
        return self.implementation_group or self.family or self.name

    def signature_parameters(
        self,
        parameters: Mapping[str, str],
        *,
        language: str,
        references: str,
        tokenizer: str,
        implementation: MetricImplementation | None,
        model_hash: str = "",
        artifact_hash: str = "",
        plugin: str = "",
    ) -> dict[str, str]:
        """What this metric's signature records besides its name: its ``parameters`` (defaults with the
        run's values applied), and then what applies to it: the references mode for a metric that reads
        references (without ``refagg`` for a single reference), the implementation and the case it
        compares text in, the tokenizer for a metric that tokenizes with the project's tokenizers (a
        learned one always its language's, which its model was trained with), the artifact it reads
        (``artifact_hash``: word vectors a run chose instead of the spec's own), the plugin that computed it
        (``<distribution>@<version>``), the trained model's content hash, and the version. A metric that
        needs another signature declares it by overriding this method, as sacrebleu's metrics declare
        their signature type."""
        signature = dict(parameters)
        if self.needs_references:
            signature["refs"] = references
            if references == "single":  # how several references are combined does not apply to one
                signature.pop("refagg", None)
        if implementation is not None:
            signature[IMPLEMENTATION_PARAMETER] = implementation.name
            if not implementation.own_tokenizer and self.uses_tokenizer:
                signature["case"] = "mixed" if tokenizer == "none" else "lc"
        if self.uses_tokenizer and not (implementation is not None and implementation.own_tokenizer):
            signature["tok"] = tokenizer_name(language, DEFAULT_TOKENIZER if self.model_kind else tokenizer)
        if artifact_hash or self.artifact_hash:
            signature["artifact"] = artifact_hash or self.artifact_hash
        if plugin:  # which package computed it, and which release of it
            signature[PLUGIN_SIGNATURE_KEY] = plugin
        if self.model_kind:
            signature["model"] = model_hash
        signature["version"] = implementation.version if implementation is not None else self.version
        return signature

    def implementation(self, name: str) -> MetricImplementation:
        """The implementation called ``name``; a ValueError naming the ones it has otherwise."""
        try:
            return self.implementations[name]
        except KeyError:
            have = ", ".join(self.implementations) or "none: it is computed one way only"
            raise ValueError(f"{self.name} has no {name} implementation (it has: {have})") from None


# The parameter through which a learned metric's compute receives its trained model's artifact folder.
MODEL_PARAMETER = "model"

# The parameter through which a metric that tokenizes receives the tokenizer choice ("default": the
# language's tokenizer, "none": whitespace split); the registry sets it, callers never pass it in ``params``.
TOKENIZER_PARAMETER = "tokenizer"


def tokenizer_choice(params: Mapping[str, str]) -> str:
    """The tokenizer a compute call was given (:data:`TOKENIZER_PARAMETER`), else the language's own."""
    return params.get(TOKENIZER_PARAMETER, DEFAULT_TOKENIZER)


def family_member_compute(family_compute: FamilyCompute, name: str) -> MetricCompute:
    """The compute of one member of a family, for calling that metric on its own."""

    def compute(inputs: MetricInputs, params: Mapping[str, str]) -> Sequence[float | None]:
        return family_compute([name], inputs, params)[name]

    return compute


# How a referenced metric combines several references: the best-matching one (Gupta et al., 2019, section 3.2.1,
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


def check_reference_batch(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, tool: str
) -> None:
    """The batch checks of every tool's wrapper (pycocoevalcap, sacrebleu, rouge-score): one reference list
    per hypothesis, lists (not strings), none empty; the message names the item and ``tool``."""
    if isinstance(hypotheses, str):
        raise TypeError("hypotheses must be a sequence of strings, not one string")
    if len(hypotheses) != len(references):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
            "references[i] must hold every reference of hypothesis i"
        )
    for index, refs in enumerate(references):
        if isinstance(refs, str):
            raise TypeError(f"references[{index}] must be a list of reference strings, not one string")
        if not refs:
            raise ValueError(f"item {index} has no reference: {tool} needs at least one per item")

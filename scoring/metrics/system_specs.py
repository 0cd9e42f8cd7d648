"""System-level metrics: one value per system, from all of its outputs (Gupta et al., 2019, sections 3.2.2 and 5.2).

- ``distinct-1`` .. ``distinct-3``: distinct n-grams / n-grams over every output of the system (Li et al.).
- ``self-bleu-2``, ``self-bleu-4``: per context, each output's BLEU-n against the context's other outputs,
  averaged, then averaged over the contexts with at least two outputs (lower = more diverse).
- ``recall-bleu-2``, ``recall-vector-extrema``: Gupta et al. (2019) eq. 2, recall(c) = mean over references of the
  best output's score, averaged over contexts with outputs and references (needs several outputs per
  context to mean anything; with one output it is the output's mean score over the references).
- ``corpus-bleu``: corpus-level BLEU-4 (Papineni et al.; nltk's corpus_bleu, every reference of a context),
  the corpus statistic that sentence BLEU averages do not reproduce; also as sacrebleu and nlg-eval
  (pycocoevalcap) compute it (implementations). ``corpus-chrf`` and ``corpus-chrf++``: sacrebleu's
  corpus chrF and chrF++ (Popović, 2015, 2017).

A system's outputs are given per context (:class:`ContextOutputs`); a value is ``None`` where the metric is
undefined for the system (Self-BLEU without a context of two outputs), and ``items`` counts the contexts
(or outputs, for Distinct-n and corpus BLEU) that went into it. Every one of them tokenizes, with the
tokenizer chosen for the call (the language's, or "none": whitespace split; see
:mod:`scoring.metrics.tokenize`), whose name goes into the signature.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from scoring.metrics.bleu import corpus_bleu
from scoring.metrics.diversity import bleu_metric, distinct_n, recall_context, self_bleu_context
from scoring.metrics.spec import tokenizer_choice
from scoring.metrics.tokenize import DEFAULT_TOKENIZER, tokenize, tokenizer_name

SYSTEM_METRICS_VERSION = "1.0.0"


@dataclass(frozen=True)
class ContextOutputs:
    """One context's outputs of one system (several when it sampled several) and the context's references."""

    outputs: Sequence[str]
    references: Sequence[str] = ()


@dataclass(frozen=True)
class SystemScore:
    value: float | None
    items: int


SystemCompute = Callable[[Sequence[ContextOutputs], str, Mapping[str, str]], SystemScore]


@dataclass(frozen=True)
class SystemImplementation:
    """One tool's computation of a system-level metric (as :class:`scoring.metrics.spec.MetricImplementation`)."""

    name: str
    compute: SystemCompute
    version: str
    parameters: Mapping[str, str] = field(default_factory=dict)
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    own_tokenizer: bool = False


@dataclass(frozen=True)
class SystemMetricSpec:
    name: str
    description: str
    needs_references: bool
    compute: SystemCompute
    version: str = SYSTEM_METRICS_VERSION
    parameters: Mapping[str, str] = field(default_factory=dict)
    # The tools that compute it (corpus BLEU: nltk, sacrebleu, nlg-eval); empty: computed one way only.
    implementations: Mapping[str, SystemImplementation] = field(default_factory=dict)
    implementation_group: str = ""  # the family a run's per-family choice names it by (``bleu``)

    @property
    def group_name(self) -> str:
        return self.implementation_group or self.name

    def implementation(self, name: str) -> SystemImplementation | None:
        """The implementation ``name`` ("" : the default); None for a metric computed one way only."""
        if not self.implementations:
            if name:
                raise ValueError(f"{self.name} is computed one way only; it has no {name} implementation")
            return None
        chosen = name or ("nltk" if "nltk" in self.implementations else next(iter(self.implementations)))
        try:
            return self.implementations[chosen]
        except KeyError:
            raise ValueError(
                f"{self.name} has no {chosen} implementation (it has: {', '.join(self.implementations)})"
            ) from None

    def compute_for(self, implementation: str) -> tuple[SystemCompute, Mapping[str, str]]:
        """The compute and default parameters of ``implementation`` ("" : the default)."""
        chosen = self.implementation(implementation)
        if chosen is None:
            return self.compute, self.parameters
        return chosen.compute, chosen.parameters

    undefined_when: str = "the system has no replies"  # the one cause of a None value, for run notes

    def signature_parameters(
        self,
        *,
        language: str,
        references: str,
        tokenizer: str = DEFAULT_TOKENIZER,
        implementation: str = "",
        params: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        chosen = self.implementation(implementation)
        signature = dict(chosen.parameters if chosen is not None else self.parameters)
        signature.update({key: value for key, value in (params or {}).items() if key in signature})
        if self.needs_references:
            signature["refs"] = references
        if chosen is not None:
            signature["impl"] = chosen.name
        if chosen is None or not chosen.own_tokenizer:
            signature["tok"] = tokenizer_name(language, tokenizer)
            if chosen is not None:
                signature["case"] = "mixed" if tokenizer == "none" else "lc"
        signature["level"] = "system"
        signature["version"] = chosen.version if chosen is not None else self.version
        return signature


def _distinct(n: int) -> SystemCompute:
    def compute(contexts: Sequence[ContextOutputs], language: str, params: Mapping[str, str]) -> SystemScore:
        tokenizer = tokenizer_choice(params)
        outputs = [tokenize(text, language, tokenizer) for context in contexts for text in context.outputs]
        return SystemScore(distinct_n(outputs, n) if outputs else None, len(outputs))

    return compute


def _self_bleu(n: int) -> SystemCompute:
    def compute(contexts: Sequence[ContextOutputs], language: str, params: Mapping[str, str]) -> SystemScore:
        smoothing = params.get("smooth", "method1")
        tokenizer = tokenizer_choice(params)
        per_context = [
            self_bleu_context([tokenize(text, language, tokenizer) for text in context.outputs], n, smoothing)
            for context in contexts
        ]
        defined = [value for value in per_context if value is not None]
        return SystemScore(sum(defined) / len(defined) if defined else None, len(defined))

    return compute


def _recall(
    metric_factory: Callable[[str], Callable[[Sequence[str], Sequence[str]], float]],
) -> SystemCompute:
    def compute(contexts: Sequence[ContextOutputs], language: str, params: Mapping[str, str]) -> SystemScore:
        metric = metric_factory(language)
        tokenizer = tokenizer_choice(params)
        per_context = [
            recall_context(
                [tokenize(text, language, tokenizer) for text in context.outputs],
                [tokenize(text, language, tokenizer) for text in context.references],
                metric,
            )
            for context in contexts
        ]
        defined = [value for value in per_context if value is not None]
        return SystemScore(sum(defined) / len(defined) if defined else None, len(defined))

    return compute


def _vector_extrema_pairwise(language: str) -> Callable[[Sequence[str], Sequence[str]], float]:
    from scoring.metrics.embedding import embedding_scores_batch
    from scoring.metrics.word_vectors import glove_6b_50d

    vectors = glove_6b_50d()

    def metric(hypothesis: Sequence[str], reference: Sequence[str]) -> float:
        scores = embedding_scores_batch([hypothesis], [[reference]], vectors, metrics=("vector-extrema",))
        return scores.values["vector-extrema"][0]

    return metric


def _corpus_bleu(contexts: Sequence[ContextOutputs], language: str, params: Mapping[str, str]) -> SystemScore:
    hypotheses = []
    references = []
    tokenizer = tokenizer_choice(params)
    for context in contexts:
        if not context.references:
            continue
        tokenized_references = [tokenize(text, language, tokenizer) for text in context.references]
        for text in context.outputs:
            hypotheses.append(tokenize(text, language, tokenizer))
            references.append(tokenized_references)
    if not hypotheses:
        return SystemScore(None, 0)
    return SystemScore(
        corpus_bleu(hypotheses, references, 4, params.get("smooth", "method0")), len(hypotheses)
    )


def _pairs(contexts: Sequence[ContextOutputs]) -> tuple[list[str], list[list[str]]]:
    """Every output of the system with its context's references (contexts without references left out)."""
    hypotheses: list[str] = []
    references: list[list[str]] = []
    for context in contexts:
        if context.references:
            for text in context.outputs:
                hypotheses.append(text)
                references.append(list(context.references))
    return hypotheses, references


def _sacrebleu_corpus_bleu(
    contexts: Sequence[ContextOutputs], language: str, params: Mapping[str, str]
) -> SystemScore:
    from scoring.metrics.sacrebleu_metrics import sacrebleu_corpus_bleu

    hypotheses, references = _pairs(contexts)
    if not hypotheses:
        return SystemScore(None, 0)
    value = sacrebleu_corpus_bleu(
        hypotheses,
        references,
        max_order=4,
        tokenize=params.get("tok", "13a"),
        smooth=params.get("smooth", "exp"),
        lowercase=params.get("case", "mixed") == "lc",
    )
    return SystemScore(value, len(hypotheses))


def _coco_corpus_bleu(
    contexts: Sequence[ContextOutputs], language: str, params: Mapping[str, str]
) -> SystemScore:
    from scoring.metrics.coco import coco_corpus_bleu

    hypotheses, references = _pairs(contexts)
    if not hypotheses:
        return SystemScore(None, 0)
    values = coco_corpus_bleu(
        [text.strip() for text in hypotheses], [[t.strip() for t in ts] for ts in references], max_order=4
    )
    return SystemScore(values[3], len(hypotheses))


def _sacrebleu_corpus_chrf(word_order: int) -> SystemCompute:
    def compute(contexts: Sequence[ContextOutputs], language: str, params: Mapping[str, str]) -> SystemScore:
        from scoring.metrics.sacrebleu_metrics import sacrebleu_corpus_chrf

        hypotheses, references = _pairs(contexts)
        if not hypotheses:
            return SystemScore(None, 0)
        value = sacrebleu_corpus_chrf(
            hypotheses, references, word_order=word_order, lowercase=params.get("case", "mixed") == "lc"
        )
        return SystemScore(value, len(hypotheses))

    return compute


def _corpus_specs() -> list[SystemMetricSpec]:
    """Corpus BLEU-4 in three implementations, and sacrebleu's corpus chrF / chrF++."""
    from scoring.metrics import METRICS_VERSION
    from scoring.metrics.sacrebleu_metrics import sacrebleu_version

    sacrebleu = f"{METRICS_VERSION}+sacrebleu-{sacrebleu_version()}"
    nltk_parameters = {"smooth": "method0"}
    bleu = SystemMetricSpec(
        name="corpus-bleu",
        description="Corpus BLEU-4 of all outputs against every reference of their context: nltk's "
        "corpus_bleu by default, or sacrebleu's or nlg-eval's (pycocoevalcap) corpus BLEU",
        needs_references=True,
        compute=_corpus_bleu,
        parameters=nltk_parameters,
        undefined_when="no context of the system's replies has references",
        implementation_group="bleu",
        implementations={
            "nltk": SystemImplementation(
                name="nltk",
                compute=_corpus_bleu,
                version=SYSTEM_METRICS_VERSION,
                parameters=nltk_parameters,
                choices={"smooth": tuple(f"method{index}" for index in range(8))},
            ),
            "nlg-eval": SystemImplementation(
                name="nlg-eval",
                compute=_coco_corpus_bleu,
                version=f"{METRICS_VERSION}+pycocoevalcap-1.2",
                parameters={"tok": "split", "case": "mixed", "smooth": "coco-1e-15"},
                own_tokenizer=True,
            ),
            "sacrebleu": SystemImplementation(
                name="sacrebleu",
                compute=_sacrebleu_corpus_bleu,
                version=sacrebleu,
                parameters={"tok": "13a", "smooth": "exp", "case": "mixed"},
                choices={
                    "tok": ("13a", "intl", "zh", "none", "char"),
                    "smooth": ("exp", "floor", "add-k", "none"),
                    "case": ("mixed", "lc"),
                },
                own_tokenizer=True,
            ),
        },
    )
    chrf = [
        SystemMetricSpec(
            name=name,
            description=f"Corpus chrF{'++' if word_order else ''} (Popović) of all outputs, as sacrebleu "
            "computes it (0..1)",
            needs_references=True,
            compute=_sacrebleu_corpus_chrf(word_order),
            version=sacrebleu,
            parameters={"nc": "6", "nw": str(word_order), "beta": "2", "case": "mixed"},
            undefined_when="no context of the system's replies has references",
            implementation_group="chrf",
            implementations={
                "sacrebleu": SystemImplementation(
                    name="sacrebleu",
                    compute=_sacrebleu_corpus_chrf(word_order),
                    version=sacrebleu,
                    parameters={"nc": "6", "nw": str(word_order), "beta": "2", "case": "mixed"},
                    choices={"case": ("mixed", "lc")},
                    own_tokenizer=True,
                )
            },
        )
        for name, word_order in (("corpus-chrf", 0), ("corpus-chrf++", 2))
    ]
    return [bleu, *chrf]


def system_metric_specs() -> list[SystemMetricSpec]:
    specs = [
        SystemMetricSpec(
            name=f"distinct-{n}",
            description=f"Distinct-{n}: distinct {n}-grams / all {n}-grams over the system's outputs",
            needs_references=False,
            compute=_distinct(n),
        )
        for n in (1, 2, 3)
    ]
    specs += [
        SystemMetricSpec(
            name=f"self-bleu-{n}",
            description=f"Self-BLEU-{n}: BLEU-{n} of each output against the context's other outputs, "
            "averaged over outputs and contexts (lower = more diverse)",
            needs_references=False,
            compute=_self_bleu(n),
            parameters={"smooth": "method1"},
            undefined_when="no context has two or more replies of the system (Self-BLEU compares a system's "
            "replies to one context with each other; with one reply per context there is nothing to compare)",
        )
        for n in (2, 4)
    ]
    specs += [
        SystemMetricSpec(
            name="recall-bleu-2",
            description="Recall (Gupta et al. (2019) eq. 2) with BLEU-2: mean over references of the best output's score",
            needs_references=True,
            compute=_recall(lambda language: bleu_metric(2)),
            parameters={"smooth": "method1"},
            undefined_when="no context has both replies of the system and references",
        ),
        SystemMetricSpec(
            name="recall-vector-extrema",
            description="Recall (Gupta et al. (2019) eq. 2) with Vector Extrema over GloVe 6B 50d",
            needs_references=True,
            compute=_recall(_vector_extrema_pairwise),
            parameters={"vectors": "glove-6b-50d"},
            undefined_when="no context has both replies of the system and references",
        ),
        *_corpus_specs(),
    ]
    return specs

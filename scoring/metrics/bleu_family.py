"""BLEU-1..BLEU-4 as registry metrics: tokenize each reply and reference once, count n-grams once.

Sentence-level BLEU-n per reply as reported by RUBER (Tao et al., 2018, Table 2) and the multi-reference study
(Gupta et al., 2019, Table 4), with nltk's method1 smoothing by default (the usual choice for short dialog replies,
where higher-order matches are rare).

Several references are combined as in the multi-reference study (Gupta et al., 2019, section 3.2.1, eq. 1):
score(y, R) = max over r in R of BLEU(y, r), "the closest reference" (parameter ``refagg:max``, the
default). ``refagg:joint`` gives nltk's multi-reference BLEU instead (n-gram counts clipped by the maximum
count over all references, brevity penalty against the closest reference length). With one reference
both are the same number.

Implementations, each named in the signature (``impl:``):

- ``nltk`` (default): the above, on the project tokenizer chosen for the run;
- ``nlg-eval``: pycocoevalcap's BLEU as nlg-eval calls it, the numbers of the dialog literature's tables
  (:mod:`scoring.metrics.coco`): whitespace tokens of the text as written (``tok:split``, ``case:mixed``),
  no smoothing but coco's 1e-15 floor on a zero n-gram count (``smooth:coco-1e-15``: it decides the
  ranks of the many zero scores, hence Spearman's rho), several references used jointly (``refagg:joint``);
- ``sacrebleu``: sacrebleu's sentence BLEU (Post, 2018) with its tokenizers (``tok:13a`` by default,
  ``intl``, ``zh``, ``none``, ``char``), smoothing (``exp`` by default, ``floor``, ``add-k``, ``none``,
  with sacrebleu's default smoothing values), effective order (``eff:yes`` by default, as its
  ``sentence_bleu``) and case (``mixed``, or ``lc``); several references are its own joint BLEU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scoring.metrics import METRICS_VERSION
from scoring.metrics.bleu import sentence_bleu_best_batch, sentence_bleu_orders_batch
from scoring.metrics.coco import coco_sentence_bleu_batch
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.sacrebleu_metrics import sacrebleu_sentence_bleu_batch, sacrebleu_version
from scoring.metrics.spec import (
    DEFAULT_REFERENCE_AGGREGATION,
    MetricFamily,
    MetricImplementation,
    MetricSpec,
    family_member_compute,
    reference_aggregation,
    tokenizer_choice,
)
from scoring.metrics.tokenize import tokenize_all

BLEU_FAMILY_NAME = "bleu"
BLEU_ORDERS = {f"bleu-{n}": n for n in range(1, 5)}
DEFAULT_SMOOTHING = "method1"
REFERENCE_AGGREGATIONS = (DEFAULT_REFERENCE_AGGREGATION, "joint")
NLTK_SMOOTHING = tuple(f"method{index}" for index in range(8))
# What nlg-eval's (pycocoevalcap's) BLEU computes with, recorded in its signatures (not choices: fixed).
COCO_VERSION = f"{METRICS_VERSION}+pycocoevalcap-1.2"
COCO_TEXT = {"tok": "split", "case": "mixed"}  # str.split() of the text as written
SACREBLEU_TOKENIZERS = ("13a", "intl", "zh", "none", "char")
SACREBLEU_SMOOTHING = ("exp", "floor", "add-k", "none")


def bleu_family_compute(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float]]:
    """``{name: [score per item]}`` for the BLEU orders in ``names``, from one tokenization and counting."""
    smoothing = params.get("smooth", DEFAULT_SMOOTHING)  # checked by the bleu module
    orders = {name: BLEU_ORDERS[name] for name in names}
    tokenizer = tokenizer_choice(params)
    hypothesis_tokens = tokenize_all(inputs.hypotheses, inputs.language, tokenizer)
    reference_tokens = _tokenize_reference_lists(inputs.references, inputs.language, tokenizer)
    aggregation = reference_aggregation(params, supported=REFERENCE_AGGREGATIONS)
    if aggregation == "joint":
        rows = sentence_bleu_orders_batch(
            hypothesis_tokens, reference_tokens, max(orders.values()), smoothing
        )
        return {name: [row[order - 1] for row in rows] for name, order in orders.items()}
    # Gupta et al. (2019), eq. 1: per order, the best single-reference BLEU; only the orders asked for are computed
    wanted = sorted(set(orders.values()))
    rows = sentence_bleu_best_batch(hypothesis_tokens, reference_tokens, wanted, smoothing)
    column = {order: index for index, order in enumerate(wanted)}
    return {name: [row[column[order]] for row in rows] for name, order in orders.items()}


def coco_bleu_family_compute(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float]]:
    """nlg-eval's BLEU orders in ``names``: pycocoevalcap's per-sentence values, references jointly."""
    orders = sorted({BLEU_ORDERS[name] for name in names})
    rows = coco_sentence_bleu_batch(inputs.hypotheses, inputs.references, orders)
    column = {order: index for index, order in enumerate(orders)}
    return {name: [row[column[BLEU_ORDERS[name]]] for row in rows] for name in names}


def sacrebleu_bleu_family_compute(
    names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
) -> dict[str, list[float]]:
    """sacrebleu's sentence BLEU for the orders in ``names`` (0..1), with the run's sacrebleu options."""
    orders = sorted({BLEU_ORDERS[name] for name in names})
    rows = sacrebleu_sentence_bleu_batch(
        inputs.hypotheses,
        inputs.references,
        orders,
        tokenize=params.get("tok", "13a"),
        smooth=params.get("smooth", "exp"),
        effective_order=params.get("eff", "yes") == "yes",
        lowercase=params.get("case", "mixed") == "lc",
    )
    column = {order: index for index, order in enumerate(orders)}
    return {name: [row[column[BLEU_ORDERS[name]]] for row in rows] for name in names}


def bleu_specs() -> tuple[MetricFamily, list[MetricSpec]]:
    family = MetricFamily(
        name=BLEU_FAMILY_NAME,
        compute=bleu_family_compute,
        implementations={"nlg-eval": coco_bleu_family_compute, "sacrebleu": sacrebleu_bleu_family_compute},
    )
    nltk_parameters = {"smooth": DEFAULT_SMOOTHING, "refagg": DEFAULT_REFERENCE_AGGREGATION}
    specs = []
    for name, order in BLEU_ORDERS.items():
        implementations = {
            "nltk": MetricImplementation(
                name="nltk",
                compute=family_member_compute(bleu_family_compute, name),
                version=METRICS_VERSION,
                description="nltk's sentence_bleu formulas on the project tokenizer",
                parameters=nltk_parameters,
                choices={"smooth": NLTK_SMOOTHING, "refagg": REFERENCE_AGGREGATIONS},
            ),
            "nlg-eval": MetricImplementation(
                name="nlg-eval",
                compute=family_member_compute(coco_bleu_family_compute, name),
                version=COCO_VERSION,
                description="pycocoevalcap's BLEU as nlg-eval runs it (whitespace tokens, coco's 1e-15 floor)",
                parameters={**COCO_TEXT, "smooth": "coco-1e-15", "refagg": "joint"},
                own_tokenizer=True,
            ),
            "sacrebleu": MetricImplementation(
                name="sacrebleu",
                compute=family_member_compute(sacrebleu_bleu_family_compute, name),
                version=f"{METRICS_VERSION}+sacrebleu-{sacrebleu_version()}",
                description="sacrebleu's sentence BLEU",
                parameters={"tok": "13a", "smooth": "exp", "eff": "yes", "case": "mixed", "refagg": "joint"},
                choices={
                    "tok": SACREBLEU_TOKENIZERS,
                    "smooth": SACREBLEU_SMOOTHING,
                    "eff": ("yes", "no"),
                    "case": ("mixed", "lc"),
                },
                own_tokenizer=True,
            ),
        }
        specs.append(
            MetricSpec(
                name=name,
                description=f"sentence BLEU-{order} (uniform weights 1/{order}): n-gram precision against the "
                "references with a brevity penalty; nltk's formulas with smoothing method1 by default, or "
                "nlg-eval's (pycocoevalcap) or sacrebleu's",
                needs_references=True,
                version=METRICS_VERSION,
                compute=family_member_compute(bleu_family_compute, name),
                family=BLEU_FAMILY_NAME,
                parameters=nltk_parameters,
                implementations=implementations,
            )
        )
    return family, specs


def _tokenize_reference_lists(
    references: Sequence[Sequence[str]], language: str, tokenizer: str
) -> list[list[list[str]]]:
    """Tokenized reference lists; equal lists (one context, several systems) become the same object.

    Sharing the object lets the BLEU functions build those references' n-grams once.
    """
    distinct = list(dict.fromkeys(text for texts in references for text in texts))
    tokens_by_text = dict(zip(distinct, tokenize_all(distinct, language, tokenizer), strict=True))
    by_texts: dict[tuple[str, ...], list[list[str]]] = {}
    result = []
    for texts in references:
        key = tuple(texts)
        shared = by_texts.get(key)
        if shared is None:
            shared = by_texts[key] = [tokens_by_text[text] for text in key]
        result.append(shared)
    return result

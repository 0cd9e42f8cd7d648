"""BLEU-1..BLEU-4 as registry metrics: tokenize each reply and reference once, count n-grams once.

Sentence-level BLEU-n per reply as reported by RUBER (seed 000, Table 2) and the multi-reference study
(seed 003, Table 4), with nltk's method1 smoothing by default (the usual choice for short dialog replies,
where higher-order matches are rare).

Several references are combined as in the multi-reference study (seed 003, section 3.2.1, eq. 1):
score(y, R) = max over r in R of BLEU(y, r), "the closest reference" (parameter ``refagg:max``, the
default). ``refagg:joint`` gives nltk's multi-reference BLEU instead (n-gram counts clipped by the maximum
count over all references, brevity penalty against the closest reference length). With one reference
both are the same number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scoring.metrics import METRICS_VERSION
from scoring.metrics.bleu import sentence_bleu_best_batch, sentence_bleu_orders_batch
from scoring.metrics.spec import (
    DEFAULT_REFERENCE_AGGREGATION,
    MetricFamily,
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


def bleu_family_compute(
    names: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    queries: Sequence[str],
    language: str,
    params: Mapping[str, str],
) -> dict[str, list[float]]:
    """``{name: [score per item]}`` for the BLEU orders in ``names``, from one tokenization and counting."""
    smoothing = params.get("smooth", DEFAULT_SMOOTHING)  # checked by the bleu module
    orders = {name: BLEU_ORDERS[name] for name in names}
    tokenizer = tokenizer_choice(params)
    hypothesis_tokens = tokenize_all(hypotheses, language, tokenizer)
    reference_tokens = _tokenize_reference_lists(references, language, tokenizer)
    aggregation = reference_aggregation(params, supported=REFERENCE_AGGREGATIONS)
    if aggregation == "joint":
        rows = sentence_bleu_orders_batch(
            hypothesis_tokens, reference_tokens, max(orders.values()), smoothing
        )
        return {name: [row[order - 1] for row in rows] for name, order in orders.items()}
    # seed 003, eq. 1: per order, the best single-reference BLEU; only the orders asked for are computed
    wanted = sorted(set(orders.values()))
    rows = sentence_bleu_best_batch(hypothesis_tokens, reference_tokens, wanted, smoothing)
    column = {order: index for index, order in enumerate(wanted)}
    return {name: [row[column[order]] for row in rows] for name, order in orders.items()}


def bleu_specs() -> tuple[MetricFamily, list[MetricSpec]]:
    family = MetricFamily(name=BLEU_FAMILY_NAME, compute=bleu_family_compute)
    specs = [
        MetricSpec(
            name=name,
            description=f"sentence BLEU-{order} (uniform weights 1/{order}, nltk-compatible, smoothing "
            "method1 by default): n-gram precision against the references with a brevity penalty",
            needs_references=True,
            version=METRICS_VERSION,
            compute=family_member_compute(bleu_family_compute, name),
            family=BLEU_FAMILY_NAME,
            parameters={"smooth": DEFAULT_SMOOTHING, "refagg": DEFAULT_REFERENCE_AGGREGATION},
        )
        for name, order in BLEU_ORDERS.items()
    ]
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

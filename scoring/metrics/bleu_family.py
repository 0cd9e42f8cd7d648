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
from scoring.metrics.bleu import sentence_bleu_orders_batch
from scoring.metrics.spec import (
    DEFAULT_REFERENCE_AGGREGATION,
    MetricFamily,
    MetricSpec,
    family_member_compute,
    reference_aggregation,
    tokenizer_choice,
)
from scoring.metrics.tokenize import tokenize

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
    hypothesis_tokens = [tokenize(text, language, tokenizer) for text in hypotheses]
    reference_tokens = _tokenize_reference_lists(references, language, tokenizer)
    aggregation = reference_aggregation(params, supported=REFERENCE_AGGREGATIONS)
    max_n = max(orders.values())
    if aggregation == "joint":
        rows = sentence_bleu_orders_batch(hypothesis_tokens, reference_tokens, max_n, smoothing)
    else:
        rows = _max_over_references(hypothesis_tokens, reference_tokens, max_n, smoothing)
    return {name: [row[order - 1] for row in rows] for name, order in orders.items()}


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


def _max_over_references(
    hypotheses: Sequence[list[str]], references: Sequence[Sequence[list[str]]], max_n: int, smoothing: str
) -> list[list[float]]:
    """Per item and order, the best single-reference BLEU (seed 003, eq. 1), from one batched pass."""
    flat_hypotheses: list[list[str]] = []
    flat_references: list[list[list[str]]] = []
    owners: list[int] = []
    for index, (hypothesis, refs) in enumerate(zip(hypotheses, references, strict=True)):
        for ref in refs or [[]]:  # no reference at all: scored against an empty one, i.e. 0
            flat_hypotheses.append(hypothesis)
            flat_references.append([ref])
            owners.append(index)
    flat_rows = sentence_bleu_orders_batch(flat_hypotheses, flat_references, max_n, smoothing)
    best: list[list[float] | None] = [None] * len(hypotheses)
    for owner, row in zip(owners, flat_rows, strict=True):
        current = best[owner]
        best[owner] = row if current is None else [max(a, b) for a, b in zip(current, row, strict=True)]
    return [row if row is not None else [0.0] * max_n for row in best]


def _tokenize_reference_lists(
    references: Sequence[Sequence[str]], language: str, tokenizer: str
) -> list[list[list[str]]]:
    """Tokenized reference lists; equal lists (one context, several systems) become the same object.

    Sharing the object lets :func:`sentence_bleu_orders_batch` count those references' n-grams once.
    """
    by_texts: dict[tuple[str, ...], list[list[str]]] = {}
    tokens_by_text: dict[str, list[str]] = {}
    result = []
    for texts in references:
        key = tuple(texts)
        if key not in by_texts:
            for text in key:
                if text not in tokens_by_text:
                    tokens_by_text[text] = tokenize(text, language, tokenizer)
            by_texts[key] = [tokens_by_text[text] for text in key]
        result.append(by_texts[key])
    return result

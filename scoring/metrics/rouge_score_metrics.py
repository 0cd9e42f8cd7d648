"""ROUGE as Google's ``rouge-score`` computes it: a thin, typed batch wrapper over its ``RougeScorer``.

For papers that report rouge-score's numbers on raw text. The project's own ROUGE-L
(:mod:`scoring.metrics.rouge`) equals rouge-score's formula on the project's tokens; this module is
rouge-score itself, with its own tokenizer (lowercase, every run of characters other than ``a-z0-9``
becomes a space, optional Porter stemming of tokens longer than 3 characters), so the values are the
installed version's (:func:`rouge_score_version`).

Types: ``rouge1``, ``rouge2`` (n-gram overlap), ``rougeL`` (longest common subsequence of the whole
texts) and ``rougeLsum`` (summary-level LCS: the union LCS of each reference sentence against every
hypothesis sentence, Lin 2004, section 3.2). rouge-score splits rougeLsum's sentences on newlines only
(its ``split_summaries=False`` default, kept here), so a reply on one line is one sentence and its
rougeLsum equals its rougeL.

Several references per item use rouge-score 0.1.2's own ``RougeScorer.score_multi``: for each type
separately, the (precision, recall, F) of the reference with the highest F-measure (the first one on a
tie). That is the same "closest reference" as the project's ROUGE-L (Gupta et al., 2019, eq. 1).

Note rouge-score's argument order, ``score(target, prediction)``: reference first. The functions here
take the hypothesis first, as everywhere in this project. rouge-score (with nltk, numpy and absl) is
imported on first use; a scorer is built once per (types, stemmer) and process.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Sequence
from typing import Any

from scoring.metrics.spec import check_reference_batch

ROUGE_SCORE_TYPES = ("rougeL", "rougeLsum", "rouge1", "rouge2")

# per item: (precision, recall, fmeasure)
RougeTriple = tuple[float, float, float]


def rouge_score_version() -> str:
    """The installed rouge-score's version, e.g. "0.1.2" (it decides the numbers, so it goes into signatures)."""
    return importlib.metadata.version("rouge-score")


def rouge_score_batch(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    types: Sequence[str] = ("rougeL",),
    *,
    use_stemmer: bool = False,
) -> dict[str, list[RougeTriple]]:
    """For each type, per item ``(precision, recall, fmeasure)`` of ``hypotheses[i]`` against ``references[i]``.

    ``references[i]`` holds every reference of item ``i`` (at least one); with several, rouge-score's
    ``score_multi`` keeps, per type, the reference with the best F-measure. Texts are raw strings;
    rouge-score tokenizes them.
    """
    wanted = _checked_types(types)
    check_reference_batch(hypotheses, references, tool="rouge-score")
    scorer = _scorer(wanted, use_stemmer)
    result: dict[str, list[RougeTriple]] = {rouge_type: [] for rouge_type in wanted}
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        if len(refs) == 1:
            scores = scorer.score(refs[0], hypothesis)
        else:
            scores = scorer.score_multi(list(refs), hypothesis)
        for rouge_type in wanted:
            score = scores[rouge_type]
            result[rouge_type].append((float(score.precision), float(score.recall), float(score.fmeasure)))
    return result


def _checked_types(types: Sequence[str]) -> tuple[str, ...]:
    if isinstance(types, str):
        raise ValueError(f"types must be a sequence of ROUGE types, e.g. ({types!r},), not one string")
    if not types:
        raise ValueError(f"rouge-score needs at least one type; choose from {', '.join(ROUGE_SCORE_TYPES)}")
    unknown = [rouge_type for rouge_type in types if rouge_type not in ROUGE_SCORE_TYPES]
    if unknown:
        raise ValueError(
            f"unknown rouge-score type(s) {', '.join(map(repr, unknown))}; "
            f"choose from {', '.join(ROUGE_SCORE_TYPES)}"
        )
    return tuple(dict.fromkeys(types))  # duplicates once, order kept


@functools.lru_cache(maxsize=16)
def _scorer(types: tuple[str, ...], use_stemmer: bool) -> Any:
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(list(types), use_stemmer=use_stemmer)

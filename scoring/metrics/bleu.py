"""BLEU (Papineni et al., 2002) at sentence and corpus level, equal to nltk's implementation.

Dialog papers report BLEU-1..4 per reply (RUBER, Tao et al. (2018), section 4.2 and Table 2; the multi-reference
study, Gupta et al. (2019), sections 3.3 and 5.1, Table 4), commonly computed with
``nltk.translate.bleu_score``; this module reproduces nltk 3.9/3.10 to 1e-9 so numbers stay comparable:

- BLEU-n uses uniform weights ``1/n`` over the modified precisions of orders 1..n;
- modified precision clips each hypothesis n-gram count by its maximum count in any one reference;
  the denominator is the number of hypothesis n-grams, at least 1 (nltk's guard for short replies);
- the brevity penalty uses the reference length closest to the hypothesis length (ties: the shorter);
- no unigram match at all gives 0, whatever the smoothing (nltk's early return);
- smoothing (Chen & Cherry, 2014): ``method0`` none (a zero precision becomes the smallest float, so the
  score is ~1e-77 rather than exactly 0, as in nltk), ``method1`` adds epsilon 0.1 to zero match counts,
  ``method2`` adds 1 to numerator and denominator of every order above 1 (Lin & Och, 2004).

Several references are combined the BLEU way (clipping against the per-n-gram maximum, closest length),
which is what nltk and Gupta et al. (2019) report as multi-reference BLEU; Gupta et al. (2019)'s Eq. 1 (max over references of a
single-reference score) is a different aggregation, not this one.

Counts are plain dicts and precisions plain floats (nltk builds ``Fraction`` objects); all orders
of one pair are counted in a single pass (:func:`sentence_bleu_orders`), so BLEU-1..4 together cost
about as much as BLEU-4 alone. Unlike nltk's argument order, the hypothesis comes first everywhere here.

Against one reference (every pair of the registry's default "max over references" aggregation) the
n-grams of each order are put in a set and counted only when needed: when every n-gram of either side
occurs once, the clipped match count is the size of the sets' intersection, which Python computes in C.
The log of each order's precision is taken once per pair and shared by every BLEU-n asked for; the
arithmetic is nltk's, operation for operation, so the values are the same floats.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections import _count_elements  # type: ignore[attr-defined]
from collections.abc import Hashable, Iterable, Sequence

SMOOTHING_METHODS = ("method0", "method1", "method2")
_EPSILON = 0.1  # nltk SmoothingFunction(epsilon=0.1), from Chen & Cherry (2014)

Tokens = Sequence[str]
# Per pair: clipped matches per order, hypothesis n-grams per order (>= 1), hypothesis length,
# closest reference length.
_PairStats = tuple[list[int], list[int], int, int]
# n -> the n-gram counts of each reference of one reference list.
_CountCache = dict[int, list[dict[Hashable, int]]]


def sentence_bleu(
    hypothesis: Tokens, references: Sequence[Tokens], max_n: int = 4, smoothing: str = "method1"
) -> float:
    """BLEU-``max_n`` of one tokenized hypothesis against its tokenized references."""
    _check_options(max_n, smoothing)
    return _bleu_from_stats(_pair_stats(hypothesis, references, max_n, {}), max_n, smoothing)


def sentence_bleu_orders(
    hypothesis: Tokens, references: Sequence[Tokens], max_n: int = 4, smoothing: str = "method1"
) -> list[float]:
    """``[BLEU-1, ..., BLEU-max_n]`` of one pair, from n-gram counts made once."""
    _check_options(max_n, smoothing)
    stats = _pair_stats(hypothesis, references, max_n, {})
    return [_bleu_from_stats(stats, n, smoothing) for n in range(1, max_n + 1)]


def sentence_bleu_batch(
    hypotheses: Sequence[Tokens],
    references: Sequence[Sequence[Tokens]],
    max_n: int,
    smoothing: str = "method1",
) -> list[float]:
    """BLEU-``max_n`` of each hypothesis ``i`` against ``references[i]`` (all references for item i)."""
    _check_options(max_n, smoothing)
    stats = _batch_stats(hypotheses, references, max_n)
    return [_bleu_from_stats(pair, max_n, smoothing) for pair in stats]


def sentence_bleu_orders_batch(
    hypotheses: Sequence[Tokens],
    references: Sequence[Sequence[Tokens]],
    max_n: int = 4,
    smoothing: str = "method1",
) -> list[list[float]]:
    """``[BLEU-1, ..., BLEU-max_n]`` for each pair of a batch.

    Pairs whose ``references[i]`` is the same list object (every system answering one context) share
    one counting of the reference n-grams.
    """
    _check_options(max_n, smoothing)
    return [
        [_bleu_from_stats(stats, n, smoothing) for n in range(1, max_n + 1)]
        for stats in _batch_stats(hypotheses, references, max_n)
    ]


def sentence_bleu_best_batch(
    hypotheses: Sequence[Tokens],
    references: Sequence[Sequence[Tokens]],
    orders: Sequence[int],
    smoothing: str = "method1",
) -> list[list[float]]:
    """Per item, ``[max over r in references[i] of BLEU-n(hypotheses[i], [r]) for n in orders]``.

    The multi-reference study's aggregation (Gupta et al., 2019, eq. 1): each order takes its own best reference.
    An item without references scores 0.0 for every order. Nothing is kept from one pair to the next: n-gram
    sets of a short reply cost less to build again than to look up, and n-gram tuples kept alive for a
    whole batch made Python's garbage collector, which walks every live container on its full passes, cost
    about a third of BLEU-4's time.
    """
    if not orders:
        raise ValueError("BLEU needs at least one order")
    for order in orders:
        _check_options(order, smoothing)
    _check_lengths(hypotheses, references)
    max_n = max(orders)
    zeros = [0.0] * len(orders)
    rows: list[list[float]] = []
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        hyp_len = len(hypothesis)
        best = zeros
        for reference in refs:
            matches = _one_reference_matches(hypothesis, reference, max_n)
            if not matches[0]:
                continue  # nltk: no unigram match, 0 whatever the smoothing
            values = _bleu_orders_from_stats(matches, hyp_len, len(reference), orders, smoothing)
            best = values if best is zeros else [max(a, b) for a, b in zip(best, values, strict=True)]
        rows.append(list(best))
    return rows


def corpus_bleu(
    hypotheses: Sequence[Tokens],
    references: Sequence[Sequence[Tokens]],
    max_n: int = 4,
    smoothing: str = "method0",
) -> float:
    """Corpus BLEU-``max_n``: match and length counts are summed over all pairs before dividing.

    The default smoothing is none, as in ``nltk.translate.bleu_score.corpus_bleu``.
    """
    _check_options(max_n, smoothing)
    matches, totals, hyp_len, ref_len = [0] * max_n, [0] * max_n, 0, 0
    for pair_matches, pair_totals, pair_hyp_len, pair_ref_len in _batch_stats(hypotheses, references, max_n):
        for i in range(max_n):
            matches[i] += pair_matches[i]
            totals[i] += pair_totals[i]
        hyp_len += pair_hyp_len
        ref_len += pair_ref_len
    if not hypotheses:
        return 0.0
    return _bleu_from_stats((matches, totals, hyp_len, ref_len), max_n, smoothing)


def _check_options(max_n: int, smoothing: str) -> None:
    if max_n < 1:
        raise ValueError(f"BLEU needs max_n >= 1, got {max_n}")
    if smoothing not in SMOOTHING_METHODS:
        known = ", ".join(SMOOTHING_METHODS)
        raise ValueError(f"unknown BLEU smoothing {smoothing!r}; choose one of {known}")


def _check_lengths(hypotheses: Sequence[Tokens], references: Sequence[Sequence[Tokens]]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
            "references[i] must hold every reference of hypothesis i"
        )


def _batch_stats(
    hypotheses: Sequence[Tokens], references: Sequence[Sequence[Tokens]], max_n: int
) -> list[_PairStats]:
    """Counts for every pair, in input order, grouping pairs that share one reference-list object.

    A cache per group (not one for the whole batch) keeps few count dicts alive at a time: thousands of
    live dicts make the garbage collector's scans cost more than the counting saves.
    """
    _check_lengths(hypotheses, references)
    reference_lists = list(references)  # held for the call, so no two live lists share an id()
    groups: dict[int, list[int]] = {}
    for index, refs in enumerate(reference_lists):
        groups.setdefault(id(refs), []).append(index)
    stats: list[_PairStats | None] = [None] * len(reference_lists)
    for indices in groups.values():
        cache: _CountCache = {}
        refs = reference_lists[indices[0]]
        for index in indices:
            stats[index] = _pair_stats(hypotheses[index], refs, max_n, cache)
    return [pair for pair in stats if pair is not None]


def _ngram_counts(tokens: Tokens, n: int) -> dict[Hashable, int]:
    counts: dict[Hashable, int] = {}
    # collections.Counter's C counting loop without Counter's per-instance overhead (this runs for every
    # pair and order); zip stops at the shortest slice, which is what makes the n-grams.
    _count_elements(counts, tokens if n == 1 else zip(*(tokens[i:] for i in range(n)), strict=False))
    return counts


def _reference_counts(references: Sequence[Tokens], n: int, cache: _CountCache) -> list[dict[Hashable, int]]:
    counts = cache.get(n)
    if counts is None:
        counts = cache[n] = [_ngram_counts(reference, n) for reference in references]
    return counts


def _pair_stats(
    hypothesis: Tokens, references: Sequence[Tokens], max_n: int, cache: _CountCache
) -> _PairStats:
    if not references:
        raise ValueError("BLEU needs at least one reference per hypothesis")
    hyp_len = len(hypothesis)
    totals = [max(1, hyp_len - n + 1) for n in range(1, max_n + 1)]
    if len(references) == 1:
        matches = _one_reference_matches(hypothesis, references[0], max_n)
        return matches, totals, hyp_len, len(references[0])
    matches = [0] * max_n
    for n in range(1, min(max_n, hyp_len) + 1):
        if n > 1 and matches[n - 2] == 0:
            break  # every n-gram match contains an (n-1)-gram match: the higher orders are 0 as well
        hyp_counts = _ngram_counts(hypothesis, n)
        # Clip by the largest count in any one reference; only n-grams shared with a reference matter, and
        # the key-set intersection finds them in C.
        max_ref: dict[Hashable, int] = {}
        for ref_counts in _reference_counts(references, n, cache):
            for gram in hyp_counts.keys() & ref_counts.keys():
                count = ref_counts[gram]
                if count > max_ref.get(gram, 0):
                    max_ref[gram] = count
        matches[n - 1] = sum(min(hyp_counts[gram], count) for gram, count in max_ref.items())
    if len(references) == 1:
        closest_ref_len = len(references[0])
    else:
        # closest to the hypothesis length; on a tie the shorter one (nltk's closest_ref_length)
        lengths = (len(ref) for ref in references)
        closest_ref_len = min(lengths, key=lambda length: (abs(length - hyp_len), length))
    return matches, totals, hyp_len, closest_ref_len


def _one_reference_matches(hypothesis: Tokens, reference: Tokens, max_n: int) -> list[int]:
    """Clipped n-gram matches of orders 1..``max_n`` against a single reference.

    With one reference, clipping is ``min(hypothesis count, reference count)`` per shared n-gram; when
    every n-gram of either side occurs once, each shared n-gram contributes exactly 1, so the count is the
    size of the sets' intersection. Orders stop at the first one without a match (an n-gram match
    contains an (n-1)-gram match), or where either side has no n-gram of that order.
    """
    matches = [0] * max_n
    hyp_len, ref_len = len(hypothesis), len(reference)
    for n in range(1, min(max_n, hyp_len, ref_len) + 1):
        hyp_set = set(_ngrams(hypothesis, n))
        ref_set = set(_ngrams(reference, n))
        shared = hyp_set & ref_set
        if not shared:
            break
        if len(hyp_set) == hyp_len - n + 1 or len(ref_set) == ref_len - n + 1:
            matches[n - 1] = len(shared)
        else:  # both sides repeat an n-gram: count them (rare beyond unigrams)
            hyp_counts: dict[Hashable, int] = {}
            ref_counts: dict[Hashable, int] = {}
            _count_elements(hyp_counts, _ngrams(hypothesis, n))
            _count_elements(ref_counts, _ngrams(reference, n))
            matches[n - 1] = sum(min(hyp_counts[gram], ref_counts[gram]) for gram in shared)
    return matches


def _ngrams(tokens: Tokens, n: int) -> Iterable[Hashable]:
    """The n-grams of ``tokens`` as tuples (unigrams: the tokens themselves); zip stops at the shortest
    slice, which is what makes the n-grams. The usual orders are spelled out: cheaper than the general
    form's generator."""
    if n == 1:
        return tokens
    if n == 2:
        return itertools.pairwise(tokens)
    if n == 3:
        return zip(tokens, tokens[1:], tokens[2:], strict=False)
    if n == 4:
        return zip(tokens, tokens[1:], tokens[2:], tokens[3:], strict=False)
    return zip(*(tokens[i:] for i in range(n)), strict=False)


def _bleu_orders_from_stats(
    matches: list[int], hyp_len: int, ref_len: int, orders: Sequence[int], smoothing: str
) -> list[float]:
    """BLEU-n for each n in ``orders`` of one pair with at least one unigram match.

    The same operations as :func:`_bleu_from_stats` (hence nltk's) for each n; only the logs of the
    precisions, which do not depend on n, are taken once.
    """
    brevity_penalty = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    logs = []
    for order in range(max(orders)):
        match, total = matches[order], max(1, hyp_len - order)
        if smoothing == "method1":
            precision = match / total if match else _EPSILON / total
        elif smoothing == "method2":
            precision = match / total if order == 0 else (match + 1) / (total + 1)
        else:
            precision = match / total if match else sys.float_info.min
        logs.append(math.log(precision))
    values = []
    for n in orders:
        weight = 1 / n
        values.append(brevity_penalty * math.exp(math.fsum([weight * log for log in logs[:n]])))
    return values


def _bleu_from_stats(stats: _PairStats, n: int, smoothing: str) -> float:
    matches, totals, hyp_len, ref_len = stats
    if matches[0] == 0:
        return 0.0
    # hyp_len > 0 here, since a unigram matched
    brevity_penalty = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    weight = 1 / n
    log_precisions = []
    for order in range(n):
        match, total = matches[order], totals[order]
        if smoothing == "method1":
            precision = match / total if match else _EPSILON / total
        elif smoothing == "method2":
            precision = match / total if order == 0 else (match + 1) / (total + 1)
        else:  # method0: nltk turns a zero precision into the smallest positive float
            precision = match / total if match else sys.float_info.min
        log_precisions.append(weight * math.log(precision))
    return brevity_penalty * math.exp(math.fsum(log_precisions))

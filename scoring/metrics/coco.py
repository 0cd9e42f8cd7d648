"""BLEU, ROUGE-L and CIDEr-D as coco-caption (pycocoevalcap 1.2) computes them, and so as nlg-eval reports them.

The dialog literature's baseline tables come from nlg-eval, which hands pycocoevalcap's scorers the raw
strings (stripped, original case, no PTB tokenizer). This module gives the same numbers, to 1e-9, without
pycocoevalcap's interpreted loops:

- BLEU (Papineni et al., 2002): pycocoevalcap's ``BleuScorer`` with ``option="closest"``, per sentence
  (:func:`coco_sentence_bleu_batch`) and per corpus (:func:`coco_corpus_bleu`);
- ROUGE-L (Lin, 2004, section 3.1): its ``Rouge.calc_score`` with coco's β = 1.2
  (:func:`coco_rouge_l_batch`);
- CIDEr-D (Vedantam et al., 2015, sections 3 and 4.4): its ``CiderScorer`` (:func:`coco_cider_d`).

What pycocoevalcap does differently from nltk (and from :mod:`scoring.metrics.bleu`, which matches nltk):

- tokens: BLEU and CIDEr split on whitespace (``str.split()``), ROUGE-L on single spaces
  (``str.split(" ")``), so two spaces in a row make an empty token that counts in both lengths and can
  match an empty token of the other side; no lower-casing, punctuation stays glued to its word;
- BLEU is never smoothed the nltk way: each order's precision is ``(matches + 1e-15) / (n-grams + 1e-9)``,
  so an order without a match gives a tiny precision instead of nltk's 0 (or method1's 0.1 / n-grams), and a
  hypothesis shorter than n gets ``1e-15 / 1e-9 = 1e-6`` for that order instead of nltk's ``0 / 1``; the
  sentence score is the running product of the precisions to the power 1/n, so BLEU-4 of a reply without
  a 4-gram match is of the order 1e-4 to 1e-5, not 0;
- the brevity penalty compares ``(hypothesis length + 1e-15) / (reference length + 1e-9)`` with 1: a
  hypothesis exactly as long as its reference is still penalised, by ``exp(-1e-9 / length)`` (a relative
  change of about 1e-10), and an empty hypothesis scores 0 (nltk returns 0 early as well);
- ROUGE-L uses β = 1.2 where rouge-score (and :mod:`scoring.metrics.rouge`) use β = 1, and with several
  references it takes the best precision and the best recall separately, possibly from different
  references, instead of the reference with the best F-measure.

Shared with nltk: clipping by the largest count of an n-gram in any one reference, the reference length
"closest" to the hypothesis's (a tie goes to the shorter one), uniform weights over orders 1..n.

How it is fast: BLEU's clipped n-gram matches and closest reference lengths come from the project's
nltk-exact counting in :mod:`scoring.metrics.bleu` (the same definitions as pycocoevalcap's
``cook_test``), with the score arithmetic vectorised over the batch; ROUGE-L's LCS is the bit-parallel one
of :mod:`scoring.metrics.rouge`, with position masks kept for reference texts that recur; CIDEr-D numbers
every n-gram once (numpy), so document frequencies, tf-idf weights, norms and the clipped sums of all
pairs are array operations instead of a dict per text and a Python loop per n-gram. The arithmetic is
pycocoevalcap's, in its order wherever a sum allows it, so values agree to a few units in the last place.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring.metrics.bleu import _ngrams, _one_reference_matches
from scoring.metrics.rouge import _lcs_from_masks, _position_masks
from scoring.metrics.spec import check_reference_batch

COCO_BLEU_MAX_ORDER = 4  # pycocoevalcap cooks n-grams of orders 1..4 whatever Bleu(n) asks for
_TINY = 1e-15  # pycocoevalcap's BLEU: added to the numerators "so that if guess is 0 still return 0"
_SMALL = 1e-9  # and to the denominators, against a division by zero
COCO_ROUGE_BETA = 1.2  # coco-caption's value, "based on discussion with Hovey"

IntArray = npt.NDArray[np.int64]


def coco_sentence_bleu_batch(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], orders: Sequence[int]
) -> list[list[float]]:
    """Per item, ``[BLEU-n of hypotheses[i] against references[i] for n in orders]``, as pycocoevalcap.

    The values of ``Bleu(4).compute_score(gts, res)[1][n - 1][i]``, i.e. ``BleuScorer.compute_score(
    option="closest")``'s per-sentence list (Papineni et al., 2002, section 2, with coco's constants):
    ``BLEU-n = (prod_{k <= n} (matches_k + 1e-15) / (ngrams_k + 1e-9)) ** (1 / n)``, times
    ``exp(1 - 1 / ratio)`` when ``ratio = (len(hyp) + 1e-15) / (closest reference length + 1e-9)`` is
    below 1. All references of an item are used jointly: an n-gram's count is clipped by its largest count
    in any one of them, and the reference length is the one closest to the hypothesis's (ties: the
    shorter). Tokens are ``str.split()``.
    """
    if not orders:
        raise ValueError("coco BLEU needs at least one order")
    for order in orders:
        _check_bleu_order(order, "order")
    max_order = max(orders)
    matches, hyp_lens, ref_lens = _bleu_counts(hypotheses, references, max_order)
    # pycocoevalcap's loop, vectorised: a running product of the precisions, each order its own root
    guesses = np.maximum(hyp_lens[:, None] - np.arange(max_order), 0)
    products = np.cumprod((matches + _TINY) / (guesses + _SMALL), axis=1)
    values = products ** (1.0 / np.arange(1, max_order + 1))
    ratios = (hyp_lens + _TINY) / (ref_lens + _SMALL)
    short = ratios < 1
    values[short] *= np.exp(1 - 1 / ratios[short])[:, None]
    return values[:, [order - 1 for order in orders]].tolist()


def coco_corpus_bleu(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], max_order: int = 4
) -> list[float]:
    """Corpus ``[BLEU-1, ..., BLEU-max_order]`` as ``Bleu(4).compute_score(gts, res)[0]`` (option "closest").

    Matches, hypothesis n-gram counts, hypothesis lengths and each item's closest reference length are
    summed over the corpus first (Papineni et al., 2002, section 2.2.1), then combined with the same
    constants as the sentence scores.
    """
    _check_bleu_order(max_order, "max_order")
    item_matches, hyp_lens, ref_lens = _bleu_counts(hypotheses, references, max_order)
    matches = item_matches.sum(axis=0).tolist()
    guesses = [int(np.maximum(hyp_lens - k, 0).sum()) for k in range(max_order)]
    hyp_total, ref_total = int(hyp_lens.sum()), int(ref_lens.sum())
    values = []
    product = 1.0
    for k in range(max_order):
        product *= float(matches[k] + _TINY) / (guesses[k] + _SMALL)
        values.append(product ** (1.0 / (k + 1)))
    ratio = (hyp_total + _TINY) / (ref_total + _SMALL)
    if ratio < 1:
        values = [value * math.exp(1 - 1 / ratio) for value in values]
    return values


def coco_rouge_l_batch(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], beta: float = COCO_ROUGE_BETA
) -> list[tuple[float, float, float]]:
    """Per item ``(precision, recall, F)`` of ROUGE-L (Lin, 2004, section 3.1) as ``Rouge.calc_score``.

    Tokens are ``text.split(" ")`` (so "" is one empty token and doubled spaces give empty tokens, as in
    pycocoevalcap). Against each reference r: ``P = LCS / len(hyp)``, ``R = LCS / len(r)``; P and R are
    each maximised over the references separately, and ``F = (1 + β²) P R / (R + β² P)``, or 0.0 when
    either maximum is 0. pycocoevalcap returns only F; P and R are its ``max(prec)`` and ``max(rec)``.

    The LCS is the project's bit-parallel one. Position masks are built once per distinct reference text
    that occurs more than once in the batch (every system answering one context); against any other
    reference the hypothesis's masks serve, built once for all of the item's references.
    """
    _check_batch(hypotheses, references)
    beta_squared = beta**2
    recurring = _recurring_texts(references)
    masks_by_text: dict[str, dict[str, int]] = {}
    rows: list[tuple[float, float, float]] = []
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        hyp_tokens = hypothesis.split(" ")
        hyp_len = float(len(hyp_tokens))
        hyp_masks: dict[str, int] | None = None
        best_precision = best_recall = 0.0
        for reference in refs:
            ref_tokens = reference.split(" ")
            ref_len = len(ref_tokens)
            # The LCS is symmetric: a recurring reference keeps its own masks, any other reference is run
            # through the hypothesis's, built once for all of the item's references.
            ref_masks = masks_by_text.get(reference)
            if ref_masks is None and reference in recurring:
                ref_masks = masks_by_text[reference] = _position_masks(ref_tokens)
            if ref_masks is not None:
                lcs = _lcs_from_masks(ref_masks, ref_len, hyp_tokens)
            else:
                if hyp_masks is None:
                    hyp_masks = _position_masks(hyp_tokens)
                lcs = _lcs_from_masks(hyp_masks, len(hyp_tokens), ref_tokens)
            precision = lcs / hyp_len
            recall = lcs / float(ref_len)
            if precision > best_precision:
                best_precision = precision
            if recall > best_recall:
                best_recall = recall
        if best_precision != 0 and best_recall != 0:
            score = ((1 + beta_squared) * best_precision * best_recall) / float(
                best_recall + beta_squared * best_precision
            )
        else:
            score = 0.0
        rows.append((best_precision, best_recall, score))
    return rows


def coco_cider_d(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    groups: Sequence[Hashable] | None = None,
    n: int = 4,
    sigma: float = 6.0,
) -> list[float]:
    """CIDEr-D of each item (Vedantam et al., 2015, sections 3 and 4.4), as pycocoevalcap's ``CiderScorer``.

    Each text becomes tf-idf vectors of its n-grams, one per order 1..n (tokens ``str.split()``), with
    weight ``tf * (log(D) - log(max(1, df)))``: D is the number of documents and df the number of documents
    whose references contain the n-gram. Against each reference r and order k, the clipped cosine
    ``sum(min(h_g, r_g) * r_g) / (|h| |r|)`` (a zero norm leaves the sum undivided) is multiplied by the
    Gaussian length penalty ``e ** (-(Δ²) / (2 σ²))``; these are summed over the references, averaged over
    the orders, divided by the number of references and multiplied by 10.

    pycocoevalcap quirk kept: Δ is the difference in *bigram* counts (its ``length`` adds up the term
    frequencies of n-gram index 1), i.e. ``max(0, words - 1)`` on each side, not in words. (It changes no
    score: the two differ only for an empty text, whose clipped sums are 0 anyway.)

    ``n``: the orders 1..n (the paper's definition). pycocoevalcap itself only works with its default 4: its
    ``cook_refs``/``cook_test`` always count orders 1..4, so ``Cider(n < 4)`` fails with an IndexError as
    soon as a text has more than n words, and ``Cider(n=5)`` averages orders 1..4 with a zero for order 5.

    Extension, ``groups``: ``groups[i]`` names the dialog context of item i, and a document is a group, not
    an item. Document frequencies count each group's reference set once and D is the number of distinct
    groups, so scoring five systems that answer the same contexts in one call gives each system the
    numbers pycocoevalcap (nlg-eval) gives on that system's file alone; counting each context five times
    would change the idf. Items of one group must have the same references (in any order); a ValueError
    says which item does not. ``groups=None`` makes every item its own group: exactly pycocoevalcap.
    (pycocoevalcap fails with a ValueError when no reference has a word; here every score is then 0.0.)
    """
    _check_batch(hypotheses, references)
    if n < 1:
        raise ValueError(f"CIDEr-D needs n >= 1, got {n}")
    item_count = len(hypotheses)
    if not item_count:
        return []
    # Texts: each distinct hypothesis, then each distinct reference (a text that is both is both).
    hyp_ids: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    hyp_of_item = np.fromiter(map(hyp_ids.__getitem__, hypotheses), dtype=np.int64, count=item_count)
    ref_ids: defaultdict[str, int] = defaultdict(itertools.count(len(hyp_ids)).__next__)
    refs_per_item = np.fromiter(map(len, references), dtype=np.int64, count=item_count)
    pair_count = int(refs_per_item.sum())
    # One "pair" per (item, reference) in input order: its item, its hypothesis text, its reference text.
    ref_of_pair = np.fromiter(
        map(ref_ids.__getitem__, itertools.chain.from_iterable(references)), dtype=np.int64, count=pair_count
    )
    item_of_pair = np.repeat(np.arange(item_count, dtype=np.int64), refs_per_item)
    hyp_of_pair = hyp_of_item[item_of_pair]
    texts = [*hyp_ids, *ref_ids]
    text_count = len(texts)
    orders, word_counts = _ngram_orders(texts, n)

    documents = _cider_documents(references, groups, refs_per_item, ref_of_pair, text_count)
    log_documents = math.log(float(documents.count))
    bigrams = np.maximum(word_counts - 1, 0)
    delta = (bigrams[hyp_of_pair] - bigrams[ref_of_pair]).astype(np.float64)
    penalty = np.e ** (-(delta**2) / (2 * sigma**2))
    total = np.zeros(item_count)
    for order in orders:
        idf = log_documents - np.log(np.maximum(1.0, _document_frequency(order, documents)))
        weights = order.counts * idf[order.grams]
        norms = np.sqrt(np.bincount(order.texts, weights=weights * weights, minlength=text_count))
        sums = _clipped_sums(order, weights, hyp_of_pair, ref_of_pair)
        norm_products = norms[hyp_of_pair] * norms[ref_of_pair]
        divide = norm_products != 0  # pycocoevalcap divides only when both norms are non-zero
        sums[divide] /= norm_products[divide]
        total += np.bincount(item_of_pair, weights=sums * penalty, minlength=item_count)
    return (total / n / refs_per_item * 10.0).tolist()


@dataclass(frozen=True)
class _CiderDocuments:
    """CIDEr-D's documents (groups) as their reference texts count them in document frequencies: a text that
    is the only reference of k documents adds k to the df of each of its n-grams (``documents_of_text``);
    documents with several distinct references count their n-gram union (``shared_documents`` x
    ``shared_texts``, one entry per membership)."""

    count: int
    documents_of_text: np.ndarray
    shared_documents: IntArray
    shared_texts: IntArray


def _cider_documents(
    references: Sequence[Sequence[str]],
    groups: Sequence[Hashable] | None,
    refs_per_item: IntArray,
    ref_of_pair: IntArray,
    text_count: int,
) -> _CiderDocuments:
    """Documents (groups): the distinct reference texts of each, as (document, text) memberships."""
    document_items = _cider_document_items(references, groups)
    document_count = len(document_items)
    first_pair = np.cumsum(refs_per_item) - refs_per_item
    member_pairs = _ragged_indices(first_pair[document_items], refs_per_item[document_items])
    member_documents = np.repeat(np.arange(document_count, dtype=np.int64), refs_per_item[document_items])
    memberships = np.unique(member_documents * text_count + ref_of_pair[member_pairs])
    member_documents, member_texts = memberships // text_count, memberships % text_count
    alone = np.bincount(member_documents, minlength=document_count)[member_documents] == 1
    return _CiderDocuments(
        count=document_count,
        documents_of_text=np.bincount(member_texts[alone], minlength=text_count).astype(np.float64),
        shared_documents=member_documents[~alone],
        shared_texts=member_texts[~alone],
    )


def _document_frequency(order: _NgramOrder, documents: _CiderDocuments) -> np.ndarray:
    """Each n-gram's df: the documents whose references contain it."""
    gram_count = order.gram_count
    weights = documents.documents_of_text[order.texts]
    frequency = np.bincount(order.grams, weights=weights, minlength=gram_count)
    shared_texts = documents.shared_texts
    if len(shared_texts):
        starts = order.offsets[shared_texts]
        lengths = order.offsets[shared_texts + 1] - starts
        entries = _ragged_indices(starts, lengths)
        union = np.unique(np.repeat(documents.shared_documents, lengths) * gram_count + order.grams[entries])
        frequency += np.bincount(union % gram_count, minlength=gram_count)
    return frequency


def _clipped_sums(
    order: _NgramOrder, weights: np.ndarray, hyp_of_pair: IntArray, ref_of_pair: IntArray
) -> np.ndarray:
    """Clipped sum of each (item, reference) pair, ``sum(min(h_g, r_g) * r_g)``: every hypothesis n-gram
    looked up among its reference's entries."""
    pair_count = len(hyp_of_pair)
    starts = order.offsets[hyp_of_pair]
    lengths = order.offsets[hyp_of_pair + 1] - starts
    hyp_entries = _ragged_indices(starts, lengths)
    pair_of_entry = np.repeat(np.arange(pair_count, dtype=np.int64), lengths)
    wanted = ref_of_pair[pair_of_entry] * order.gram_count + order.grams[hyp_entries]
    ref_entries = np.minimum(np.searchsorted(order.keys, wanted), max(len(order.keys) - 1, 0))
    found = order.keys[ref_entries] == wanted if len(order.keys) else np.zeros(0, dtype=bool)
    hyp_weights, ref_weights = weights[hyp_entries[found]], weights[ref_entries[found]]
    products = np.minimum(hyp_weights, ref_weights) * ref_weights
    # (float even when nothing matched: bincount of no weights gives integers)
    return np.bincount(pair_of_entry[found], weights=products, minlength=pair_count).astype(np.float64)


@dataclass(frozen=True)
class _NgramOrder:
    """The n-grams of one order in a list of texts: one entry per (text, distinct n-gram), sorted."""

    keys: IntArray  # text * gram_count + gram, ascending
    texts: IntArray
    grams: IntArray  # dense n-gram ids, shared by all texts
    counts: IntArray  # the n-gram's count in the text (term frequency)
    offsets: IntArray  # the entries of text t are offsets[t]:offsets[t + 1]
    gram_count: int


def _ngram_orders(texts: Sequence[str], n: int) -> tuple[list[_NgramOrder], IntArray]:
    """The n-grams of orders 1..n of ``texts`` (tokens ``str.split()``), and each text's word count.

    Tokens get dense ids in one C-level pass; an n-gram of order k is then identified by the id of its
    first k - 1 words and its last word, renumbered densely, so ids never overflow.
    """
    token_lists = [text.split() for text in texts]
    word_counts = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
    vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    token_ids = np.fromiter(
        map(vocabulary.__getitem__, itertools.chain.from_iterable(token_lists)),
        dtype=np.int64,
        count=int(word_counts.sum()),
    )
    text_count = len(texts)
    text_of_token = np.repeat(np.arange(text_count, dtype=np.int64), word_counts)
    text_end = np.cumsum(word_counts)
    starts = np.arange(len(token_ids), dtype=np.int64)  # where the n-grams of the current order start
    codes, code_count = token_ids, len(vocabulary)
    orders: list[_NgramOrder] = []
    for k in range(1, n + 1):
        if k > 1:
            keep = starts + (k - 1) < text_end[text_of_token[starts]]
            starts = starts[keep]
            pairs, codes = np.unique(
                codes[keep] * len(vocabulary) + token_ids[starts + (k - 1)], return_inverse=True
            )
            code_count = len(pairs)
        keys, counts = np.unique(text_of_token[starts] * code_count + codes, return_counts=True)
        entry_texts = keys // code_count if code_count else keys
        offsets = np.zeros(text_count + 1, dtype=np.int64)
        np.cumsum(np.bincount(entry_texts, minlength=text_count), out=offsets[1:])
        grams = keys % code_count if code_count else keys
        orders.append(_NgramOrder(keys, entry_texts, grams, counts.astype(np.int64), offsets, code_count))
    return orders, word_counts


def _ragged_indices(starts: IntArray, lengths: IntArray) -> IntArray:
    """``concatenate([arange(s, s + l) for s, l in zip(starts, lengths)])`` without the Python loop."""
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if len(ends) else 0
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


def _check_batch(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> None:
    check_reference_batch(hypotheses, references, tool="pycocoevalcap")


def _check_bleu_order(order: int, name: str) -> None:
    if not 1 <= order <= COCO_BLEU_MAX_ORDER:
        raise ValueError(f"coco BLEU {name} must be between 1 and {COCO_BLEU_MAX_ORDER}, got {order}")


def _bleu_counts(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], max_order: int
) -> tuple[npt.NDArray[np.float64], IntArray, IntArray]:
    """Clipped matches of orders 1..max_order, hypothesis length and closest reference length per item.

    These are pycocoevalcap's ``cook_test`` quantities (``correct``, ``testlen`` and the "closest"
    ``reflen``), which are nltk's as well: one reference goes through the project's BLEU counting, several
    through :class:`_ReferenceList`, kept for a reference list that several items share (every system
    answering one context).
    """
    _check_batch(hypotheses, references)
    recurring = _recurring_reference_lists(references)
    prepared: dict[tuple[str, ...], _ReferenceList] = {}
    rows: list[list[int]] = []
    hyp_lens: list[int] = []
    ref_lens: list[int] = []
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        hyp_tokens = hypothesis.split()
        hyp_len = len(hyp_tokens)
        hyp_lens.append(hyp_len)
        if len(refs) == 1:
            ref_tokens = refs[0].split()
            rows.append(_one_reference_matches(hyp_tokens, ref_tokens, max_order))
            ref_lens.append(len(ref_tokens))
            continue
        key = tuple(refs)
        reference_list = prepared.get(key)
        if reference_list is None:
            reference_list = _ReferenceList(refs)
            if key in recurring:
                prepared[key] = reference_list
        rows.append(reference_list.matches(hyp_tokens, max_order))
        # closest to the hypothesis length, a tie going to the shorter (pycocoevalcap's min over pairs)
        ref_lens.append(min((abs(length - hyp_len), length) for length in reference_list.lengths)[1])
    return (
        np.array(rows, dtype=np.float64).reshape(len(rows), max_order),
        np.array(hyp_lens, dtype=np.int64),
        np.array(ref_lens, dtype=np.int64),
    )


class _ReferenceList:
    """Several references of one item, for clipped n-gram matches against all of them jointly.

    A hypothesis n-gram that occurs once in it matches when any reference holds it, so for a hypothesis
    without repeated n-grams of an order the clipped count is the size of the intersection of its n-gram
    set with the union of the references' (computed in C, once per order and reference list). Repeated
    hypothesis n-grams, rare beyond unigrams, are clipped by their largest count in one reference.
    """

    __slots__ = ("_unions", "lengths", "tokens")

    def __init__(self, texts: Sequence[str]) -> None:
        self.tokens = [text.split() for text in texts]
        self.lengths = [len(tokens) for tokens in self.tokens]
        self._unions: dict[int, set[Hashable]] = {}

    def matches(self, hypothesis: list[str], max_order: int) -> list[int]:
        matches = [0] * max_order
        for n in range(1, min(max_order, len(hypothesis)) + 1):
            grams: Sequence[Hashable] = hypothesis
            if n > 1:
                grams = list(_ngrams(hypothesis, n))
            distinct = set(grams)
            shared = distinct & self._union(n)
            if not shared:
                break  # every n-gram match contains an (n-1)-gram match: the higher orders are 0 as well
            if len(distinct) == len(grams):
                matches[n - 1] = len(shared)
            else:
                counts = Counter(grams)
                matches[n - 1] = sum(
                    1 if counts[gram] == 1 else min(counts[gram], self._max_count(gram, n)) for gram in shared
                )
        return matches

    def _union(self, n: int) -> set[Hashable]:
        union = self._unions.get(n)
        if union is None:
            union = self._unions[n] = set().union(*(_ngrams(tokens, n) for tokens in self.tokens))
        return union

    def _max_count(self, gram: Hashable, n: int) -> int:
        if n == 1:
            return max(tokens.count(gram) for tokens in self.tokens)  # type: ignore[arg-type]
        return max(list(_ngrams(tokens, n)).count(gram) for tokens in self.tokens)


def _recurring_reference_lists(references: Sequence[Sequence[str]]) -> set[tuple[str, ...]]:
    """The lists of several references that more than one item of the batch has."""
    counts = Counter(tuple(refs) for refs in references if len(refs) > 1)
    return {key for key, count in counts.items() if count > 1}


def _recurring_texts(references: Sequence[Sequence[str]]) -> set[str]:
    """The reference texts that occur more than once in the batch: only those are worth keeping prepared."""
    seen: set[str] = set()
    recurring: set[str] = set()
    for refs in references:
        for text in refs:
            if text in seen:
                recurring.add(text)
            else:
                seen.add(text)
    return recurring


def _cider_document_items(references: Sequence[Sequence[str]], groups: Sequence[Hashable] | None) -> IntArray:
    """The first item of each document: every item when ``groups`` is None, else of each group."""
    if groups is None:
        return np.arange(len(references), dtype=np.int64)
    if len(groups) != len(references):
        raise ValueError(
            f"{len(groups)} groups for {len(references)} items; groups[i] names item i's context"
        )
    first_item: dict[Hashable, int] = {}
    sorted_refs: dict[Hashable, list[str]] = {}
    for index, (group, refs) in enumerate(zip(groups, references, strict=True)):
        first = first_item.setdefault(group, index)
        if first == index or references[first] is refs or list(references[first]) == list(refs):
            continue
        expected = sorted_refs.get(group)
        if expected is None:
            expected = sorted_refs[group] = sorted(references[first])
        if sorted(refs) != expected:
            raise ValueError(
                f"items {first} and {index} share the group {group!r} but not their references; "
                "a group is one dialog context with one reference set"
            )
    return np.fromiter(first_item.values(), dtype=np.int64, count=len(first_item))

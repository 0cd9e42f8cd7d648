"""ROUGE-L (Lin, 2004): an F-measure on the longest common subsequence (LCS) of reply and reference.

One of the word-overlap metrics of the multi-reference study (Gupta et al., 2019, section 3.3, Table 2: "an
F-measure based on the Longest Common Subsequence between the candidate and reference utterances";
correlations in Table 4). This module reproduces Google's ``rouge-score`` 0.1.2, the implementation
dialog work usually reports, to 1e-9 when given the same tokens:

- precision = LCS / hypothesis length, recall = LCS / reference length;
- the score is their plain harmonic mean (F1): rouge-score uses beta = 1, not ROUGE-1.5.5's or
  coco-caption's beta = 1.2 (``beta`` below allows those, but the registered metric keeps 1);
- an empty hypothesis or an empty reference scores 0.0.

Several references are combined as the multi-reference study does (Gupta et al., 2019, section 3.2.1, eq. 1):
score(y, R) = max over r in R of ROUGE-L(y, r), i.e. the closest reference. rouge-score's
``score_multi`` picks the reference with the best F-measure as well, so both agree.

The LCS length is computed bit-parallel (Hyyrö, 2004; Crochemore et al., 2001): each reference token
gets a bit mask of its positions, and each hypothesis token updates one Python integer with a handful
of word-level operations, so a pair costs O(len(hypothesis)) big-integer steps instead of the
O(len(hypothesis) * len(reference)) interpreted loop of the textbook table.
"""

from __future__ import annotations

from collections.abc import Sequence

Tokens = Sequence[str]
# token -> bit mask of the positions where it occurs in one reference
_Masks = dict[str, int]


def lcs_length(first: Tokens, second: Tokens) -> int:
    """Length of the longest common subsequence of two token sequences."""
    return _lcs_from_masks(_position_masks(first), len(first), second)


def rouge_l(hypothesis: Tokens, reference: Tokens, *, beta: float = 1.0) -> float:
    """ROUGE-L F-measure of one tokenized hypothesis against one tokenized reference.

    With the default ``beta = 1`` this equals rouge-score's
    ``RougeScorer(["rougeL"]).score(reference, hypothesis)["rougeL"].fmeasure`` on the same tokens.
    """
    if not hypothesis or not reference:
        return 0.0
    lcs = _lcs_from_masks(_position_masks(reference), len(reference), hypothesis)
    return _f_measure(lcs, len(hypothesis), len(reference), beta)


def rouge_l_batch(
    hypotheses: Sequence[Tokens], references: Sequence[Sequence[Tokens]], *, beta: float = 1.0
) -> list[float]:
    """ROUGE-L of each hypothesis ``i`` against its closest reference in ``references[i]`` (Gupta et al., 2019, eq. 1).

    An item without references scores 0.0. Consecutive items whose references are the same token list
    objects (every system answering one context, as scoring runs order them) build their position masks
    once; only those masks are kept, since thousands of live dicts make the garbage collector's passes cost
    more than the masks.
    """
    if len(hypotheses) != len(references):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
            "references[i] must hold every reference of hypothesis i"
        )
    # The token lists stay alive in ``references`` for the whole call, so their ids identify them.
    current: tuple[int, ...] | None = None
    kept: list[tuple[_Masks, int]] = []
    scores = []
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        key = tuple(map(id, refs))
        if key != current:
            current = key
            kept = [(_position_masks(reference), len(reference)) for reference in refs if reference]
        best = 0.0
        if hypothesis:
            hyp_len = len(hypothesis)
            for masks, ref_len in kept:
                lcs = _lcs_from_masks(masks, ref_len, hypothesis)
                score = _f_measure(lcs, hyp_len, ref_len, beta)
                if score > best:
                    best = score
        scores.append(best)
    return scores


_BITS = [1 << position for position in range(256)]  # grown on demand by _position_masks


def _position_masks(tokens: Tokens) -> _Masks:
    if len(tokens) > len(_BITS):
        _BITS.extend(1 << position for position in range(len(_BITS), len(tokens)))
    # Most tokens of a reply occur once: build the dict in C, then merge the positions of repeated tokens
    # (the dict kept only the last position of each).
    masks: _Masks = dict(zip(tokens, _BITS, strict=False))
    if len(masks) < len(tokens):
        masks = {}
        for position, token in enumerate(tokens):
            masks[token] = masks.get(token, 0) | _BITS[position]
    return masks


def _lcs_from_masks(masks: _Masks, length: int, other: Tokens) -> int:
    """LCS length of the sequence behind ``masks`` (``length`` tokens) and ``other``.

    Bit i of ``row`` is 0 where row i of the LCS table steps up (Hyyrö's formulation); the LCS length is
    the number of zero bits among the low ``length`` bits after the last token of ``other``. A token of
    ``other`` that does not occur in the first sequence leaves ``row`` as it is, so only the masks of
    shared tokens are visited.
    """
    full = (1 << length) - 1
    row = full
    for mask in [masks[token] for token in other if token in masks]:
        matched = row & mask
        # ``matched`` is a subset of ``row``, so the subtraction never borrows; the mask drops the carry
        # that the addition may push past the top bit.
        row = ((row + matched) | (row - matched)) & full
    return length - row.bit_count()


def _f_measure(lcs: int, hyp_len: int, ref_len: int, beta: float) -> float:
    if lcs == 0:
        return 0.0
    precision = lcs / hyp_len
    recall = lcs / ref_len
    if beta == 1.0:
        # the exact expression of rouge_score.scoring.fmeasure, so the numbers agree to the last bit
        return 2 * precision * recall / (precision + recall)
    beta_squared = beta * beta
    return (1 + beta_squared) * precision * recall / (recall + beta_squared * precision)

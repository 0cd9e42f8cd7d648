"""MaUde's negative samples for noise contrastive estimation (Sinha et al., 2020, section 3).

Syntactic negatives corrupt the reply r itself, word by word (words are whitespace-separated tokens, as
DailyDialog's text already separates punctuation):

- :func:`word_order`: the words of r shuffled (the same multiset of words in another order);
- :func:`word_drop`: ``fraction`` of r's words dropped (at least one, never all);
- :func:`word_repeat`: a random span of 1-3 words of r repeated 1-3 more times in place.

Semantic negatives are well-formed replies that do not answer the context: a random utterance of
another dialog (:func:`random_other_indices`). The paper's "random seq2seq" negatives need a seq2seq model
and its back-translation a translation model, neither available offline; another system's reply to the
same context could stand in for the first, but in a study such replies are often good ones, so it is not
used (docs/metrics.md).

A corruption that would leave the text unchanged (shuffling a one-word reply, or words that are all the
same) falls back to :func:`word_repeat`, so that a negative never equals its positive. Every function is
deterministic given its ``random.Random``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

WORD_ORDER = "order"
WORD_DROP = "drop"
WORD_REPEAT = "repeat"
SYNTACTIC_KINDS = (WORD_ORDER, WORD_DROP, WORD_REPEAT)
RANDOM_UTTERANCE = "utterance"
NEGATIVE_KINDS = (RANDOM_UTTERANCE, *SYNTACTIC_KINDS)  # every kind MaUde trains with (by default all)
DEFAULT_DROP_FRACTION = 0.3  # "dropping x% of words" (section 3); the paper does not give x
MAX_REPEAT_SPAN = 3
MAX_REPEATS = 3


def word_order(text: str, rng: random.Random) -> str:
    """The words of ``text`` in a shuffled order that differs from the original (where one exists)."""
    words = text.split()
    if len(set(words)) < 2:
        return word_repeat(text, rng)
    shuffled = list(words)
    while shuffled == words:
        rng.shuffle(shuffled)
    return " ".join(shuffled)


def word_drop(text: str, rng: random.Random, fraction: float = DEFAULT_DROP_FRACTION) -> str:
    """``text`` with round(``fraction`` x words) of its words dropped, at least one and never all; a
    one-word text cannot lose a word and gets a repeat instead."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"drop fraction must be between 0 and 1 (exclusive), got {fraction}")
    words = text.split()
    if len(words) < 2:
        return word_repeat(text, rng)
    count = min(len(words) - 1, max(1, round(fraction * len(words))))
    dropped = set(rng.sample(range(len(words)), count))
    return " ".join(word for index, word in enumerate(words) if index not in dropped)


def word_repeat(text: str, rng: random.Random) -> str:
    """``text`` with a random span of 1-3 consecutive words repeated 1-3 more times right after itself
    (an empty text stays empty: there is nothing to repeat)."""
    words = text.split()
    if not words:
        return text
    span = rng.randint(1, min(MAX_REPEAT_SPAN, len(words)))
    start = rng.randrange(0, len(words) - span + 1)
    repeats = rng.randint(1, MAX_REPEATS)
    end = start + span
    return " ".join([*words[:end], *(words[start:end] * repeats), *words[end:]])


def syntactic_negative(text: str, kind: str, rng: random.Random, *, drop_fraction: float) -> str:
    """The ``kind`` corruption ("order", "drop" or "repeat") of ``text``."""
    if kind == WORD_ORDER:
        return word_order(text, rng)
    if kind == WORD_DROP:
        return word_drop(text, rng, drop_fraction)
    if kind == WORD_REPEAT:
        return word_repeat(text, rng)
    raise ValueError(f"unknown syntactic negative {kind!r}; known: {', '.join(SYNTACTIC_KINDS)}")


def random_other_indices(
    groups: NDArray[np.int64],
    texts: Sequence[int] | NDArray[np.int64],
    candidates: NDArray[np.int64],
    rng: np.random.Generator,
    *,
    attempts: int = 8,
) -> NDArray[np.int64]:
    """For each example i, the index j of a random candidate from another dialog (``groups[j] !=
    groups[i]``) whose text differs (``texts[j] != texts[i]``): the "random utterance" negative.

    ``candidates`` are the example indices to draw from. Draws that land in the same dialog or on the same
    text are redrawn (``attempts`` times; the last draw is then kept, which needs a corpus of one dialog
    with one repeated text to happen).
    """
    texts = np.asarray(texts)
    chosen = candidates[rng.integers(0, len(candidates), size=len(groups))]
    for _ in range(attempts):
        bad = (groups[chosen] == groups) | (texts[chosen] == texts)
        if not bad.any():
            break
        chosen[bad] = candidates[rng.integers(0, len(candidates), size=int(bad.sum()))]
    return chosen

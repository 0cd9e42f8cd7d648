"""Signatures: canonical, deterministic, and parseable back into (name, params)."""

from __future__ import annotations

import pytest

from scoring.metrics.signature import SignatureError, metric_signature, parse_metric_signature


def test_sacrebleu_like_format_with_sorted_keys_and_version_last() -> None:
    params = {"version": "0.1.0", "tok": "en-v1", "smooth": "method1", "refs": "multi"}
    assert metric_signature("bleu-2", params) == "bleu-2|refs:multi|smooth:method1|tok:en-v1|version:0.1.0"
    params_with_later_key = {**params, "weights": "uniform"}
    text = metric_signature("bleu-2", params_with_later_key)
    assert text.endswith("|weights:uniform|version:0.1.0")


def test_key_order_does_not_change_the_signature() -> None:
    a = metric_signature("m", {"b": "1", "a": "2", "version": "3"})
    b = metric_signature("m", {"version": "3", "a": "2", "b": "1"})
    assert a == b == "m|a:2|b:1|version:3"


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("bleu-4", {"refs": "single", "smooth": "method0", "tok": "zh-jieba", "version": "0.1.0"}),
        ("ruber-ref", {"model": "hf:bert-base", "artifact": "ab12", "version": "2"}),  # a colon in a value
        ("distinct-1", {}),
        ("bert-ruber-unreferenced:bert-max-ce", {"cell": "bert-max-ce", "version": "1.0.0"}),  # a variant
        ("x", {"empty": ""}),
    ],
)
def test_round_trip(name: str, params: dict[str, str]) -> None:
    text = metric_signature(name, params)
    assert parse_metric_signature(text) == (name, params)
    assert metric_signature(*parse_metric_signature(text)) == text


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("bleu|2", {}, "must not contain '|'"),
        ("bleu", {"re:fs": "multi"}, "must not contain '|' or ':'"),
        ("", {}, "metric name must not be empty"),
        ("bleu", {"a|b": "1"}, "parameter name 'a|b'"),
        ("bleu", {"a": "x|y"}, "value of 'a'"),
        ("bleu", {"n": 4}, "must be a string, got int"),
    ],
)
def test_unwritable_parts_are_refused(name: str, params: dict[str, object], message: str) -> None:
    with pytest.raises(SignatureError, match=message.replace("|", r"\|")):
        metric_signature(name, params)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["bleu|refs", "bleu|:x", "bleu|a:1|a:2", "|a:1"])
def test_malformed_signatures_are_refused(text: str) -> None:
    with pytest.raises(SignatureError):
        parse_metric_signature(text)

"""BERT-RUBER's referenced score (Ghazarian et al., 2019, section 2.2): RUBER's pooled cosine (Tao et al., 2018, eqs. 1-2)
over MiniLM token vectors, max over several references (Gupta et al., 2019, eq. 1)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from scoring.metrics.bert_ruber_referenced import (
    BERT_RUBER_REFERENCED,
    bert_ruber_referenced_batch,
    bert_ruber_referenced_compute,
    bert_ruber_referenced_spec,
)
from scoring.metrics.contextual_encoder import ContextualEncoder, minilm_artifact_hash, minilm_encoder
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.pooling import pooled_cosine

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def encoder() -> ContextualEncoder:
    return minilm_encoder(device="cpu")


class CountingEncoder:
    """Wraps the real encoder and records what it is asked to encode."""

    def __init__(self, inner: ContextualEncoder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []
        self.name = inner.name
        self.dimension = inner.dimension
        self.language = inner.language
        self.content_hash = inner.content_hash

    def encode_tokens(self, sentences: Sequence[str]) -> list[NDArray[np.float32]]:
        self.calls.append(list(sentences))
        return self.inner.encode_tokens(sentences)


def test_identical_sentences_score_one(encoder: ContextualEncoder) -> None:
    text = "I want to buy a gift for my mom !"
    assert bert_ruber_referenced_batch([text], [[text]], encoder) == [pytest.approx(1.0, abs=1e-9)]


def test_paraphrase_scores_above_unrelated(encoder: ContextualEncoder) -> None:
    reference = "I would like to buy a present for my mother ."
    paraphrase, unrelated = "I want to get a gift for my mom .", "The train to Boston leaves at noon ."
    close, far = bert_ruber_referenced_batch([paraphrase, unrelated], [[reference], [reference]], encoder)
    assert close > far


def test_equals_direct_pooled_cosine(encoder: ContextualEncoder) -> None:
    hypotheses = ["What time is it ?", "Let's go to the cinema tonight .", "No , thanks ."]
    references = [["It is half past five ."], ["How about a movie this evening ?"], ["Yes , please ."]]
    scores = bert_ruber_referenced_batch(hypotheses, references, encoder)
    for score, hypothesis, [reference] in zip(scores, hypotheses, references, strict=True):
        [h], [r] = encoder.encode_tokens([hypothesis]), encoder.encode_tokens([reference])
        expected = pooled_cosine(h, r)
        assert expected is not None
        assert score == pytest.approx(expected, abs=1e-5)


def test_multi_reference_is_the_max(encoder: ContextualEncoder) -> None:
    hypothesis = "Sure , I will call you tomorrow morning ."
    refs = ["The weather is awful .", "Ok , I'll phone you in the morning .", "I like pizza ."]
    singles = bert_ruber_referenced_batch([hypothesis] * 3, [[ref] for ref in refs], encoder)
    [multi] = bert_ruber_referenced_batch([hypothesis], [refs], encoder)
    assert multi == pytest.approx(max(singles), abs=1e-6)
    assert multi > min(singles)


def test_each_distinct_text_is_encoded_once(encoder: ContextualEncoder) -> None:
    counting = CountingEncoder(encoder)
    shared = "Where is the nearest bank ?"
    bert_ruber_referenced_batch(
        ["Go straight on .", "Over there .", shared], [[shared], [shared], [shared]], counting
    )
    assert len(counting.calls) == 1
    encoded = counting.calls[0]
    assert sorted(encoded) == sorted({"Go straight on .", "Over there .", shared})


def test_empty_text_scores_zero_with_a_warning(
    encoder: ContextualEncoder, caplog: pytest.LogCaptureFixture
) -> None:
    scores = bert_ruber_referenced_batch(["", "Hello ."], [["Hi ."], ["Hello ."]], encoder)
    assert scores[0] == 0.0
    assert scores[1] == pytest.approx(1.0, abs=1e-9)
    assert "1 of 2 items" in caplog.text


def test_items_without_reference_are_refused(encoder: ContextualEncoder) -> None:
    with pytest.raises(ValueError, match="item 1 has no reference"):
        bert_ruber_referenced_batch(["a", "b"], [["a"], []], encoder)


def test_spec_and_compute() -> None:
    spec = bert_ruber_referenced_spec()
    assert spec.name == BERT_RUBER_REFERENCED
    assert spec.needs_references
    assert not spec.uses_tokenizer
    assert spec.prefers_gpu
    assert dict(spec.parameters) == {"encoder": "all-minilm-l6-v2", "refagg": "max"}
    assert spec.artifact_hash == minilm_artifact_hash()
    assert len(spec.artifact_hash) == 64
    [score] = spec.compute(
        MetricInputs(["Good morning ."], [["Good morning ."]], ["Hi ."], "en"), spec.parameters
    )
    assert score == pytest.approx(1.0, abs=1e-9)


def test_refuses_chinese_and_unknown_parameters() -> None:
    params = {"encoder": "all-minilm-l6-v2", "refagg": "max"}
    with pytest.raises(ValueError, match="'en' text only, not 'zh'"):
        bert_ruber_referenced_compute(MetricInputs(["你好"], [["你好"]], [""], "zh"), params)
    with pytest.raises(ValueError, match="unknown contextual encoder"):
        bert_ruber_referenced_compute(
            MetricInputs(["a"], [["a"]], [""], "en"), {**params, "encoder": "bert-base"}
        )
    with pytest.raises(ValueError, match="unknown reference aggregation"):
        bert_ruber_referenced_compute(MetricInputs(["a"], [["a"]], [""], "en"), {**params, "refagg": "mean"})


def test_building_the_spec_does_not_import_torch() -> None:
    import subprocess

    code = (
        "import sys; from scoring.metrics.bert_ruber_referenced import bert_ruber_referenced_spec; "
        "bert_ruber_referenced_spec(); print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False False"

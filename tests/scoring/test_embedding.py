"""Embedding Average, Vector Extrema, Greedy Matching: hand-computed values, edge cases, the family.

The tiny 2-dimensional vectors make every golden value checkable on paper:
a = (1, 0), b = (0, 1), c = (1, 1), d = (-2, 0), z = (0, 0).
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Iterator

import numpy as np
import pytest

from scoring.metrics import METRICS_VERSION
from scoring.metrics import embedding_specs as specs_module
from scoring.metrics.embedding import (
    EMBEDDING_AVERAGE,
    EMBEDDING_METRICS,
    GREEDY_MATCHING,
    VECTOR_EXTREMA,
    EmbeddingScores,
    embedding_scores_batch,
)
from scoring.metrics.embedding_specs import embedding_family_compute, embedding_specs, verified_vectors
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.word_vectors import WordVectors, glove_6b_50d
from tests.scoring.metric_batches import MetricBatch
from tests.scoring.metric_tester import MetricTester
from tests.scoring.reference_metrics import plain_embedding_reference

TOLERANCE = 1e-6
SQRT2 = math.sqrt(2.0)


def tiny() -> WordVectors:
    return WordVectors(
        {"a": 0, "b": 1, "c": 2, "d": 3, "z": 4},
        np.array([[1, 0], [0, 1], [1, 1], [-2, 0], [0, 0]], dtype=np.float32),
        name="tiny",
    )


def scores(hypothesis: list[str], references: list[list[str]]) -> dict[str, float]:
    result = embedding_scores_batch([hypothesis], [references], tiny())
    return {name: values[0] for name, values in result.values.items()}


def test_embedding_average_by_hand() -> None:
    # mean(a) = (1, 0); mean(a, c) = (1, 0.5); cos = 1 / (1 * sqrt(1.25)) = 0.894427191
    assert scores(["a"], [["a", "c"]])[EMBEDDING_AVERAGE] == pytest.approx(1 / math.sqrt(1.25), abs=TOLERANCE)
    # mean(a, d) = (-0.5, 0); mean(b, c) = (0.5, 1); cos = -0.25 / (0.5 * sqrt(1.25)) = -0.447213595
    assert scores(["a", "d"], [["b", "c"]])[EMBEDDING_AVERAGE] == pytest.approx(-0.4472136, abs=TOLERANCE)
    # The mean, not the sum of unit vectors: mean(a, d) points left although a and d are one each.
    assert scores(["a", "d"], [["a"]])[EMBEDDING_AVERAGE] == pytest.approx(-1.0, abs=TOLERANCE)


def test_vector_extrema_by_hand() -> None:
    # (a, d): dim 0 holds 1 and -2, |-2| > 1 -> -2 (the sign is kept); dim 1 holds 0 and 0 -> 0.
    # (b, c): dim 0 holds 0 and 1 -> 1; dim 1 holds 1 and 1 -> 1.
    # cos((-2, 0), (1, 1)) = -2 / (2 * sqrt 2) = -0.707106781
    assert scores(["a", "d"], [["b", "c"]])[VECTOR_EXTREMA] == pytest.approx(-1 / SQRT2, abs=TOLERANCE)
    # (a, b) -> (1, 1), parallel to c's (1, 1): cos = 1
    assert scores(["a", "b"], [["c"]])[VECTOR_EXTREMA] == pytest.approx(1.0, abs=TOLERANCE)
    # (a, c) -> (1, 1); (d, b) -> (-2, 1); cos = (-2 + 1) / (sqrt 2 * sqrt 5) = -0.316227766
    assert scores(["a", "c"], [["d", "b"]])[VECTOR_EXTREMA] == pytest.approx(
        -1 / math.sqrt(10), abs=TOLERANCE
    )


def test_greedy_matching_by_hand_and_symmetric() -> None:
    # reply (a) -> reference (a, b): a's best match is a, cos 1 -> mean 1
    # reference (a, b) -> reply (a): a -> 1, b -> cos(b, a) = 0 -> mean 0.5
    # symmetric: (1 + 0.5) / 2 = 0.75 (one direction alone would give 1 or 0.5)
    assert scores(["a"], [["a", "b"]])[GREEDY_MATCHING] == pytest.approx(0.75, abs=TOLERANCE)
    assert scores(["a", "b"], [["a"]])[GREEDY_MATCHING] == pytest.approx(0.75, abs=TOLERANCE)
    # reply (a, d) -> reference (c): cos(a, c) = 1/sqrt2, cos(d, c) = -1/sqrt2 -> mean 0
    # reference (c) -> reply (a, d): max(1/sqrt2, -1/sqrt2) = 1/sqrt2
    # symmetric: (0 + 0.707106781) / 2 = 0.353553391
    assert scores(["a", "d"], [["c"]])[GREEDY_MATCHING] == pytest.approx(1 / (2 * SQRT2), abs=TOLERANCE)
    assert scores(["c"], [["a", "d"]])[GREEDY_MATCHING] == pytest.approx(1 / (2 * SQRT2), abs=TOLERANCE)


def test_identical_sentences_score_exactly_one_at_most() -> None:
    result = scores(["c", "a", "b"], [["c", "a", "b"]])
    for name in EMBEDDING_METRICS:
        assert result[name] == pytest.approx(1.0, abs=TOLERANCE)
        assert result[name] <= 1.0


def test_unknown_words_are_skipped() -> None:
    with_oov = scores(["a", "qqq", "d", "xyz"], [["b", "nope", "c"]])
    without = scores(["a", "d"], [["b", "c"]])
    assert with_oov == without


def test_sentences_without_known_words_score_zero_and_are_counted() -> None:
    result = embedding_scores_batch(
        [["qqq"], ["a"], ["a"], ["a"], []],
        [[["a"]], [["qqq", "zzz"]], [], [["b"]], [["a"]]],
        tiny(),
    )
    # 1: reply all-OOV; 2: every reference all-OOV; 3: no reference; 5: empty reply -> 0.0 and counted.
    # 4: a real score that happens to be 0.0 (a is orthogonal to b) is not counted.
    assert result.empty_items == 4
    for name in EMBEDDING_METRICS:
        assert result.values[name] == [0.0, 0.0, 0.0, 0.0, 0.0]
    assert isinstance(result, EmbeddingScores)


def test_an_all_oov_reference_takes_no_part_in_the_maximum() -> None:
    # d against a scores -1 by every metric; the extra unknown reference must not lift it to 0.
    result = scores(["d"], [["qqq"], ["a"]])
    for name in EMBEDDING_METRICS:
        assert result[name] == pytest.approx(-1.0, abs=TOLERANCE)


def test_zero_vectors_give_zero_not_nan() -> None:
    # z = (0, 0) has no direction: every cosine with it is 0, and the item is scored, not counted.
    result = embedding_scores_batch([["z"], ["a", "z"]], [[["a"]], [["a"]]], tiny())
    assert result.empty_items == 0
    assert result.values[EMBEDDING_AVERAGE][0] == 0.0
    assert result.values[VECTOR_EXTREMA][0] == 0.0
    assert result.values[GREEDY_MATCHING][0] == 0.0
    # (a, z) vs (a): mean (0.5, 0) -> cos 1; extrema (1, 0) -> 1;
    # greedy: a -> 1, z -> 0 gives 0.5 one way, a -> 1 the other: (0.5 + 1) / 2 = 0.75
    assert result.values[EMBEDDING_AVERAGE][1] == pytest.approx(1.0, abs=TOLERANCE)
    assert result.values[VECTOR_EXTREMA][1] == pytest.approx(1.0, abs=TOLERANCE)
    assert result.values[GREEDY_MATCHING][1] == pytest.approx(0.75, abs=TOLERANCE)


def test_multiple_references_take_the_maximum_per_metric() -> None:
    # reply (a) against (b): average 0, extrema 0, greedy 0
    # reply (a) against (a, c): average 1/sqrt1.25 = 0.894427, extrema cos((1,0),(1,1)) = 0.707107,
    #   greedy: a -> a 1 (mean 1); a -> 1, c -> 1/sqrt2 (mean 0.853553); (1 + 0.853553) / 2 = 0.926777
    result = scores(["a"], [["b"], ["a", "c"]])
    assert result[EMBEDDING_AVERAGE] == pytest.approx(1 / math.sqrt(1.25), abs=TOLERANCE)
    assert result[VECTOR_EXTREMA] == pytest.approx(1 / SQRT2, abs=TOLERANCE)
    assert result[GREEDY_MATCHING] == pytest.approx((1 + (1 + 1 / SQRT2) / 2) / 2, abs=TOLERANCE)
    # Each metric takes its own best reference: for reply (a, b), reference (c) wins on average and
    # extrema (both 1) while reference (a, b, d) wins on greedy.
    #   (a, b) vs (c): greedy: a -> 1/sqrt2, b -> 1/sqrt2 (mean 0.707107); c -> 1/sqrt2; = 0.707107
    #   (a, b) vs (a, b, d): average cos((0.5, 0.5), (-1/3, 1/3)) = 0; extrema (1, 1) vs (-2, 1): -0.316;
    #   greedy: a -> 1, b -> 1 (mean 1); a -> 1, b -> 1, d -> max(-1, 0) = 0 (mean 2/3); = 5/6
    result = scores(["a", "b"], [["c"], ["a", "b", "d"]])
    assert result[EMBEDDING_AVERAGE] == pytest.approx(1.0, abs=TOLERANCE)
    assert result[VECTOR_EXTREMA] == pytest.approx(1.0, abs=TOLERANCE)
    assert result[GREEDY_MATCHING] == pytest.approx(5 / 6, abs=TOLERANCE)


def test_only_the_asked_metrics_and_argument_errors() -> None:
    result = embedding_scores_batch([["a"]], [[["a"]]], tiny(), metrics=[GREEDY_MATCHING])
    assert list(result.values) == [GREEDY_MATCHING]
    with pytest.raises(ValueError, match="unknown embedding metric"):
        embedding_scores_batch([["a"]], [[["a"]]], tiny(), metrics=["bleu-2"])
    with pytest.raises(ValueError, match="reference lists"):
        embedding_scores_batch([["a"], ["b"]], [[["a"]]], tiny())
    empty = embedding_scores_batch([], [], tiny())
    assert empty.empty_items == 0
    assert all(values == [] for values in empty.values.values())


def test_batch_matches_a_plain_implementation_on_random_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the metric tester, the random vectors registered under a test name: each metric equals Liu et
    al. (2016)'s definitions written plainly with scipy's cosine (tests/scoring/reference_metrics.py)."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(30)]
    vectors = WordVectors(
        {word: i for i, word in enumerate(words)}, rng.normal(size=(30, 5)).astype(np.float32)
    )
    pick = random.Random(7)
    vocabulary_and_oov = [*words, "oov1", "oov2"]

    def sentence() -> list[str]:
        return [pick.choice(vocabulary_and_oov) for _ in range(pick.randint(1, 8))] + ["w0"]

    hypotheses = [sentence() for _ in range(60)]
    references = [[sentence() for _ in range(pick.randint(1, 4))] for _ in range(60)]
    references[5] = [hypotheses[5]]  # repeated sentences are reduced once; the score must not care
    assert embedding_scores_batch(hypotheses, references, vectors).empty_items == 0
    name = "random-test"
    monkeypatch.setitem(
        specs_module._VECTORS,
        name,
        specs_module._NamedVectors(
            language="en", load=lambda: vectors, artifact_hash=lambda: vectors.content_hash
        ),
    )
    specs_module._loaded_and_checked.cache_clear()
    batch = MetricBatch.of_tokens(list(zip(hypotheses, references, strict=True)))
    try:
        for metric in EMBEDDING_METRICS:
            reference = plain_embedding_reference(metric, vectors, tokenizer="none")
            MetricTester(metric, reference, TOLERANCE, params={"vectors": name}, tokenizer="none").check(
                batch
            )
    finally:
        specs_module._loaded_and_checked.cache_clear()


# --- the registry family (GloVe 6B 50d, or the tiny vectors under a test name) ---------------------


@pytest.fixture
def tiny_vectors_named() -> Iterator[str]:
    """The tiny vectors registered with the family under a test-only name, removed afterwards."""
    vectors = tiny()
    name = "tiny-test"
    specs_module._VECTORS[name] = specs_module._NamedVectors(
        language="en", load=lambda: vectors, artifact_hash=lambda: vectors.content_hash
    )
    specs_module._loaded_and_checked.cache_clear()
    yield name
    del specs_module._VECTORS[name]
    specs_module._loaded_and_checked.cache_clear()


def test_family_tokenizes_and_scores_with_named_vectors(tiny_vectors_named: str) -> None:
    # "A C" tokenizes (lowercased) to (a, c); "a, b!" to (a, ",", b, "!") whose punctuation is OOV.
    result = embedding_family_compute(
        list(EMBEDDING_METRICS),
        MetricInputs(["A C", "a, b!"], [["b", "a"], ["C"]], ["", ""], "en"),
        {"vectors": tiny_vectors_named, "refagg": "max"},
    )
    # (a, c) vs (b): average cos((1, 0.5), (0, 1)) = 0.447214; vs (a): cos((1, 0.5), (1, 0)) = 0.894427
    assert result[EMBEDDING_AVERAGE][0] == pytest.approx(1 / math.sqrt(1.25), abs=TOLERANCE)
    # (a, b) vs (c): greedy (1/sqrt2 + 1/sqrt2) / 2
    assert result[GREEDY_MATCHING][1] == pytest.approx(1 / SQRT2, abs=TOLERANCE)
    assert list(result) == list(EMBEDDING_METRICS)


def test_family_logs_one_warning_with_the_count_of_empty_items(
    tiny_vectors_named: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="scoring.metrics"):
        result = embedding_family_compute(
            [VECTOR_EXTREMA],
            MetricInputs(["qqq ?", "a", "a"], [["a"], ["zzz"], ["a"]], ["", "", ""], "en"),
            {"vectors": tiny_vectors_named},
        )
    assert result == {VECTOR_EXTREMA: [0.0, 0.0, pytest.approx(1.0)]}
    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "2 of 3 items" in warnings[0].getMessage()
    assert warnings[0].name.startswith("scoring.metrics")


def test_family_refuses_vectors_that_do_not_match_their_recorded_hash(tiny_vectors_named: str) -> None:
    specs_module._VECTORS[tiny_vectors_named] = specs_module._NamedVectors(
        language="en", load=tiny, artifact_hash=lambda: "0" * 64
    )
    with pytest.raises(RuntimeError, match="reinstall"):
        verified_vectors(tiny_vectors_named, language="en")


def test_family_refuses_unknown_vectors_other_languages_and_aggregations() -> None:
    english = MetricInputs(["hello"], [["hello"]], [""], "en")
    with pytest.raises(ValueError, match="unknown word vectors"):
        embedding_family_compute([EMBEDDING_AVERAGE], english, {"vectors": "word2vec-nope"})
    with pytest.raises(ValueError, match="cannot score 'zh'"):
        embedding_family_compute([EMBEDDING_AVERAGE], MetricInputs(["hello"], [["hello"]], [""], "zh"), {})
    with pytest.raises(ValueError, match="aggregation"):
        embedding_family_compute([EMBEDDING_AVERAGE], english, {"refagg": "joint"})


def test_specs() -> None:
    family, specs = embedding_specs()
    assert family.name == "embedding"
    assert [spec.name for spec in specs] == ["embedding-average", "vector-extrema", "greedy-matching"]
    for spec in specs:
        assert spec.family == family.name
        assert spec.needs_references is True
        assert spec.uses_tokenizer is True
        assert spec.prefers_gpu is False
        assert spec.version == METRICS_VERSION
        assert dict(spec.parameters) == {"vectors": "glove-6b-50d", "oov": "skip", "refagg": "max"}
        assert spec.artifact_hash == glove_6b_50d().content_hash
        assert len(spec.artifact_hash) == 64  # fits MetricSignature.artifact_hash


def test_glove_family_on_real_sentences() -> None:
    _, specs = embedding_specs()
    by_name = {spec.name: spec for spec in specs}
    hypotheses = ["I 'm fine , thanks .", "The weather is lovely today .", "qwxz zzqv"]
    references = [
        ["I am fine , thank you .", "not bad"],
        ["How much does this cost ?"],
        ["whatever"],
    ]
    inputs = MetricInputs(hypotheses, references, [""] * 3, "en")
    family = embedding_family_compute(list(EMBEDDING_METRICS), inputs, {})
    for name in EMBEDDING_METRICS:
        values = family[name]
        assert all(math.isfinite(v) and -1.0 <= v <= 1.0 for v in values)
        assert values[0] > values[1]  # a paraphrase is closer than an unrelated reply
        assert values[2] == 0.0  # no GloVe word in the reply
        # The single-metric compute (what the registry calls for a lone metric) agrees with the family.
        assert by_name[name].compute(inputs, {}) == values
    identical = embedding_family_compute(
        list(EMBEDDING_METRICS), MetricInputs(["see you tomorrow !"], [["See you tomorrow!"]], [""], "en"), {}
    )
    for name in EMBEDDING_METRICS:
        assert identical[name][0] == pytest.approx(1.0, abs=TOLERANCE)

"""ROUGE-L (Lin, 2004) against Google's rouge-score 0.1.2 (fed the same tokens) to 1e-9, through the metric tester
(:mod:`tests.scoring.metric_tester`), and its multi-reference maximum."""

from __future__ import annotations

import random

import pytest
from rouge_score.rouge_scorer import _lcs_table

from scoring.metrics import METRICS_VERSION
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.overlap_specs import rouge_specs
from scoring.metrics.rouge import lcs_length, rouge_l, rouge_l_batch
from tests.scoring.metric_batches import MetricBatch
from tests.scoring.metric_tester import MetricTester
from tests.scoring.reference_metrics import rouge_score_on_tokens_reference
from tests.scoring.reference_metrics import rouge_score_rouge_l as reference_rouge_l

TOLERANCE = 1e-9


def on_tokens(*, multi: bool = False) -> MetricTester:
    """ROUGE-L of pre-tokenized text (``tokenizer="none"``) against rouge-score given the same tokens."""
    reference = rouge_score_on_tokens_reference(multi=multi, tokenizer="none")
    return MetricTester("rouge-l", reference, TOLERANCE, tokenizer="none")


def spec(name: str):
    _, specs = rouge_specs()
    return next(s for s in specs if s.name == name)


# (hypothesis, reference) as the project tokenizer splits them: punctuation, clitics, repeats, reorderings.
CASES = {
    "identical": ("i am fine , thanks .", "i am fine , thanks ."),
    "no overlap": ("absolutely", "no way"),
    "reordered": ("thanks , i am fine .", "i am fine , thanks ."),
    "subsequence with gaps": ("i would love to go", "i really would not love to go there"),
    "repeated tokens": ("no no no no", "no , i said no"),
    "clitics": ("I don't know what you 're talking about", "i do n't know what you mean"),
    "longer hypothesis": (
        "well , i think we should leave at ten because the train is always late on sundays",
        "let's leave at ten .",
    ),
    "single token match": ("yes", "yes , of course ."),
    "curly quotes": ("I ’ ll be there", "i'll be there soon"),
}


def test_equals_rouge_score_on_dialog_replies() -> None:
    batch = MetricBatch.of([hyp for hyp, _ in CASES.values()], [[ref] for _, ref in CASES.values()])
    MetricTester("rouge-l", rouge_score_on_tokens_reference(), TOLERANCE).check(batch)


def test_equals_rouge_score_on_random_pairs() -> None:
    rng = random.Random(20240611)
    vocabulary = [f"w{i}" for i in range(12)]
    pairs = []
    for _ in range(2000):
        # Small vocabularies make long, tangled common subsequences; lengths past 64 exercise big integers.
        length_range = (0, 12) if rng.random() < 0.8 else (50, 150)
        hyp = [rng.choice(vocabulary) for _ in range(rng.randint(*length_range))]
        ref = [rng.choice(vocabulary) for _ in range(rng.randint(*length_range))]
        pairs.append((hyp, [ref]))
    values = on_tokens().check(MetricBatch.of_tokens(pairs))
    assert sum(value is not None and value > 0 for value in values) > 1000  # not a run of zeros


def test_lcs_length_equals_the_dynamic_programming_table() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        first = [rng.choice("abcd") for _ in range(rng.randint(0, 20))]
        second = [rng.choice("abcd") for _ in range(rng.randint(0, 20))]
        assert lcs_length(first, second) == _lcs_table(first, second)[-1][-1]


@pytest.mark.parametrize(
    ("hyp", "ref"), [([], ["a", "b"]), (["a", "b"], []), ([], [])], ids=["empty hyp", "empty ref", "both"]
)
def test_empty_sides_score_zero_like_rouge_score(hyp: list[str], ref: list[str]) -> None:
    assert rouge_l(hyp, ref) == 0.0
    assert reference_rouge_l(hyp, ref) == 0.0
    assert rouge_l_batch([hyp], [[ref]]) == [0.0]


def test_known_value() -> None:
    # LCS("a b c d", "a c e") = "a c": precision 2/3, recall 2/4, F1 = 4/7
    assert rouge_l(["a", "c", "e"], ["a", "b", "c", "d"]) == pytest.approx(4 / 7, abs=1e-15)


def test_beta_weights_recall() -> None:
    # precision 2/3, recall 1/2; F_beta = (1 + b^2) P R / (R + b^2 P)
    precision, recall, beta = 2 / 3, 1 / 2, 1.2
    expected = (1 + beta**2) * precision * recall / (recall + beta**2 * precision)
    assert rouge_l(["a", "c", "e"], ["a", "b", "c", "d"], beta=beta) == pytest.approx(expected, abs=1e-15)
    assert expected != pytest.approx(4 / 7)


def test_batch_takes_the_closest_reference() -> None:
    rng = random.Random(3)
    vocabulary = ["a", "b", "c", "d", "e", "f"]
    hypotheses = [[rng.choice(vocabulary) for _ in range(rng.randint(0, 10))] for _ in range(300)]
    references = [
        [[rng.choice(vocabulary) for _ in range(rng.randint(0, 10))] for _ in range(rng.randint(1, 5))]
        for _ in range(300)
    ]
    batch = MetricBatch.of_tokens(list(zip(hypotheses, references, strict=True)))
    scores = on_tokens().check(batch)
    # rouge-score's own multi-reference scoring keeps the reference with the best F-measure, too
    on_tokens(multi=True).check(batch)
    assert any(
        len(refs) > 1 and (score or 0.0) > reference_rouge_l(hyp, refs[0])
        for hyp, refs, score in zip(hypotheses, references, scores, strict=True)
    )


def test_batch_shared_reference_objects_and_items_without_references() -> None:
    shared = [["where", "do", "you", "want", "to", "go", "?"], ["no", "."]]
    hypotheses = [["where", "to", "?"], ["no", "way", "."], ["hello"], ["go"]]
    scores = rouge_l_batch(hypotheses, [shared, shared, shared, []])
    assert scores[:3] == [
        pytest.approx(max(reference_rouge_l(hyp, ref) for ref in shared), abs=TOLERANCE)
        for hyp in hypotheses[:3]
    ]
    assert scores[3] == 0.0


def test_batch_rejects_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="reference lists"):
        rouge_l_batch([["a"]], [])


def test_spec_tokenizes_and_scores_against_the_closest_reference() -> None:
    rouge_spec = spec("rouge-l")
    assert rouge_spec.needs_references is True
    assert rouge_spec.parameters == {"beta": "1", "refagg": "max"}
    assert rouge_spec.version == METRICS_VERSION
    assert "Lin, 2004" in rouge_spec.description
    hypotheses = ["I ’ m fine , thanks .", "Sure , how much ?"]
    references = [["I am fine , thank you .", "fine thanks"], ["sure how much ?", "how much is it ?"]]
    batch = MetricBatch.of(hypotheses, references)
    scores = MetricTester("rouge-l", rouge_score_on_tokens_reference(), TOLERANCE).check(batch)
    assert scores == rouge_spec.compute(
        MetricInputs(hypotheses, references, ["", ""], "en"), {"refagg": "max"}
    )
    assert scores[1] == pytest.approx(2 * 1 * 4 / 5 / (1 + 4 / 5))  # "sure , how much ?" vs "sure how much ?"


def test_spec_rejects_an_unknown_aggregation() -> None:
    with pytest.raises(ValueError, match="reference aggregation"):
        spec("rouge-l").compute(MetricInputs(["a"], [["a"]], [""], "en"), {"refagg": "joint"})

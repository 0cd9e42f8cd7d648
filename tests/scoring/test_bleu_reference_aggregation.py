"""Multi-reference BLEU: max over single references (seed 003, eq. 1) by default, nltk's joint form on request."""

from __future__ import annotations

import pytest
from nltk.translate.bleu_score import SmoothingFunction
from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu

from scoring.metrics.registry import compute_metrics
from scoring.metrics.tokenize import tokenize

HYPOTHESES = ["i would love to , but it may rain .", "sure , where to ?", "no .", "the train leaves at ten ."]
REFERENCES = [
    ["sure , where do you want to go ?", "i would love to but it might rain on saturday ."],
    ["sure , where do you want to go ?", "no , i am busy ."],
    ["i can not , sorry .", "no way .", "never ."],
    ["it leaves at ten thirty ."],
]
QUERIES = ["do you want to go hiking ?"] * 4
SMOOTH = SmoothingFunction().method1


def _nltk(hypothesis: str, references: list[str], n: int) -> float:
    weights = tuple([1.0 / n] * n)
    refs = [tokenize(r) for r in references]
    return float(nltk_sentence_bleu(refs, tokenize(hypothesis), weights=weights, smoothing_function=SMOOTH))


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_default_is_the_best_single_reference_score(n: int) -> None:
    scores = compute_metrics([f"bleu-{n}"], HYPOTHESES, REFERENCES, QUERIES, "en")[f"bleu-{n}"]
    for hypothesis, references, score in zip(HYPOTHESES, REFERENCES, scores, strict=True):
        expected = max(_nltk(hypothesis, [ref], n) for ref in references)
        assert score == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_joint_is_nltk_multi_reference_bleu(n: int) -> None:
    scores = compute_metrics([f"bleu-{n}"], HYPOTHESES, REFERENCES, QUERIES, "en", {"refagg": "joint"})
    for hypothesis, references, score in zip(HYPOTHESES, REFERENCES, scores[f"bleu-{n}"], strict=True):
        assert score == pytest.approx(_nltk(hypothesis, references, n), abs=1e-12)


def test_the_two_aggregations_differ_on_several_references_and_agree_on_one() -> None:
    maximum = compute_metrics(["bleu-2"], HYPOTHESES, REFERENCES, QUERIES, "en")["bleu-2"]
    joint = compute_metrics(["bleu-2"], HYPOTHESES, REFERENCES, QUERIES, "en", {"refagg": "joint"})["bleu-2"]
    assert maximum[3] == pytest.approx(joint[3], abs=1e-12)  # one reference
    assert None not in maximum
    assert None not in joint
    assert any(abs((a or 0.0) - (b or 0.0)) > 1e-6 for a, b in zip(maximum[:3], joint[:3], strict=True))


def test_unknown_aggregation_is_refused() -> None:
    with pytest.raises(ValueError, match="refagg='mean' is not one of max, joint"):
        compute_metrics(["bleu-1"], HYPOTHESES, REFERENCES, QUERIES, "en", {"refagg": "mean"})

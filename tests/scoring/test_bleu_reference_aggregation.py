"""Multi-reference BLEU: max over single references (Gupta et al., 2019, eq. 1) by default, nltk's joint form on request."""

from __future__ import annotations

import pytest

from scoring.metrics.registry import compute_metrics
from tests.scoring.metric_batches import MetricBatch
from tests.scoring.metric_tester import MetricTester
from tests.scoring.reference_metrics import nltk_bleu_reference

HYPOTHESES = ["i would love to , but it may rain .", "sure , where to ?", "no .", "the train leaves at ten ."]
REFERENCES = [
    ["sure , where do you want to go ?", "i would love to but it might rain on saturday ."],
    ["sure , where do you want to go ?", "no , i am busy ."],
    ["i can not , sorry .", "no way .", "never ."],
    ["it leaves at ten thirty ."],
]
QUERIES = ["do you want to go hiking ?"] * 4
BATCH = MetricBatch.of(HYPOTHESES, REFERENCES, queries=QUERIES)  # the first two replies answer one context
TOLERANCE = 1e-12


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_default_is_the_best_single_reference_score(n: int) -> None:
    MetricTester(f"bleu-{n}", nltk_bleu_reference(n, refagg="max"), TOLERANCE).check(BATCH)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_joint_is_nltk_multi_reference_bleu(n: int) -> None:
    reference = nltk_bleu_reference(n, refagg="joint")
    MetricTester(f"bleu-{n}", reference, TOLERANCE, params={"refagg": "joint"}).check(BATCH)


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

"""The metric registry: names, specs, family computation, and signature parameters."""

from __future__ import annotations

import pytest

from scoring.metrics import METRICS_VERSION
from scoring.metrics.bleu import sentence_bleu
from scoring.metrics.registry import (
    UnknownMetricError,
    available_metric_names,
    available_system_metric_names,
    compute_metrics,
    metric_spec,
    metric_specs,
    signature_parameters,
)
from scoring.metrics.tokenize import tokenize

HYPOTHESES = ["I ’ m fine , thanks .", "no idea", "", "sure , how much ?"]
REFERENCES = [
    ["I am fine , thank you .", "fine thanks"],
    ["i have no idea at all"],
    ["whatever"],
    ["sure how much ?", "no thanks", "how much is it ?"],
]
QUERIES = ["how are you ?", "why ?", "hm ?", "you wanna buy some ?"]


def test_bleu_1_to_4_are_registered_in_order() -> None:
    assert available_metric_names()[:4] == ["bleu-1", "bleu-2", "bleu-3", "bleu-4"]
    for name in available_metric_names():
        assert name == name.lower()
        assert " " not in name
        assert "_" not in name


def test_spec_fields() -> None:
    spec = metric_spec("bleu-2")
    assert spec.name == "bleu-2"
    assert spec.needs_references is True
    assert spec.version == METRICS_VERSION
    assert spec.family == "bleu"
    assert dict(spec.parameters) == {"smooth": "method1", "refagg": "max"}
    assert "BLEU-2" in spec.description


def test_unknown_metric_error_lists_the_known_names() -> None:
    with pytest.raises(UnknownMetricError) as caught:
        metric_spec("bleu-9")
    assert str(caught.value) == "unknown metric 'bleu-9'; known metrics: " + ", ".join(
        available_metric_names() + available_system_metric_names()
    )
    with pytest.raises(UnknownMetricError, match=r"unknown metrics 'x', 'y'; known metrics: bleu-1, "):
        metric_specs(["bleu-1", "x", "y"])


def expected_bleu(n: int, smoothing: str = "method1") -> list[float]:
    """The best single-reference BLEU per item (the default multi-reference aggregation, seed 003 eq. 1)."""
    return [
        max(sentence_bleu(tokenize(h), [tokenize(r)], n, smoothing) for r in refs)
        for h, refs in zip(HYPOTHESES, REFERENCES, strict=True)
    ]


def test_family_computes_each_requested_order() -> None:
    scores = compute_metrics(["bleu-4", "bleu-1", "bleu-2"], HYPOTHESES, REFERENCES, QUERIES, "en")
    assert list(scores) == ["bleu-4", "bleu-1", "bleu-2"]
    for name, n in (("bleu-1", 1), ("bleu-2", 2), ("bleu-4", 4)):
        assert scores[name] == pytest.approx(expected_bleu(n), abs=1e-12)
    assert (scores["bleu-1"][0] or 0.0) > 0.5
    assert scores["bleu-1"][2] == 0.0


def test_single_spec_compute_equals_family_compute() -> None:
    spec = metric_spec("bleu-3")
    single = spec.compute(HYPOTHESES, REFERENCES, QUERIES, "en", spec.parameters)
    assert single == compute_metrics(["bleu-3"], HYPOTHESES, REFERENCES, QUERIES, "en")["bleu-3"]


def test_parameters_override_the_defaults() -> None:
    scores = compute_metrics(["bleu-4"], HYPOTHESES, REFERENCES, QUERIES, "en", {"smooth": "method2"})
    assert scores["bleu-4"] == pytest.approx(expected_bleu(4, "method2"), abs=1e-12)
    assert scores["bleu-4"] != pytest.approx(expected_bleu(4, "method1"), abs=1e-6)
    with pytest.raises(ValueError, match="has the parameter"):
        compute_metrics(["bleu-4"], HYPOTHESES, REFERENCES, QUERIES, "en", {"smoothing": "method2"})


def test_inputs_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="differ in length: 4, 3, 4"):
        compute_metrics(["bleu-1"], HYPOTHESES, REFERENCES[:3], QUERIES, "en")


def test_signature_parameters() -> None:
    assert signature_parameters("bleu-2", language="en", references="multi") == {
        "smooth": "method1",
        "refagg": "max",
        "refs": "multi",
        "tok": "en-v1",
        "version": METRICS_VERSION,
    }
    single = signature_parameters("bleu-2", language="en", references="single", params={"smooth": "method0"})
    assert single["refs"] == "single"
    assert single["smooth"] == "method0"
    assert "refagg" not in single  # one reference: nothing to aggregate

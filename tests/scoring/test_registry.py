"""The metric registry: names, specs, family computation, and signature parameters."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from scoring.metrics import METRICS_VERSION, registry
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.registry import (
    UnknownMetricError,
    available_metric_names,
    available_system_metric_names,
    compute_metrics,
    metric_spec,
    metric_specs,
    signature_parameters,
)
from tests.scoring.metric_batches import MetricBatch
from tests.scoring.metric_tester import MetricTester
from tests.scoring.reference_metrics import nltk_bleu_reference

HYPOTHESES = ["I ’ m fine , thanks .", "no idea", "", "sure , how much ?"]
REFERENCES = [
    ["I am fine , thank you .", "fine thanks"],
    ["i have no idea at all"],
    ["whatever"],
    ["sure how much ?", "no thanks", "how much is it ?"],
]
QUERIES = ["how are you ?", "why ?", "hm ?", "you wanna buy some ?"]
BATCH = MetricBatch.of(HYPOTHESES, REFERENCES, queries=QUERIES)
# nltk's BLEU and the project's agree to the last bits on these few short replies
NLTK_TOLERANCE = 1e-12


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


def test_family_computes_each_requested_order() -> None:
    """Each order equals nltk's best single-reference BLEU (the default multi-reference aggregation) through
    the metric tester, and the family computed at once gives each order that value."""
    scores = compute_metrics(["bleu-4", "bleu-1", "bleu-2"], HYPOTHESES, REFERENCES, QUERIES, "en")
    assert list(scores) == ["bleu-4", "bleu-1", "bleu-2"]
    for name, n in (("bleu-1", 1), ("bleu-2", 2), ("bleu-4", 4)):
        assert scores[name] == MetricTester(name, nltk_bleu_reference(n), NLTK_TOLERANCE).check(BATCH)
    assert (scores["bleu-1"][0] or 0.0) > 0.5
    assert scores["bleu-1"][2] == 0.0


def test_single_spec_compute_equals_family_compute() -> None:
    spec = metric_spec("bleu-3")
    single = spec.compute(MetricInputs(HYPOTHESES, REFERENCES, QUERIES, "en"), spec.parameters)
    assert single == compute_metrics(["bleu-3"], HYPOTHESES, REFERENCES, QUERIES, "en")["bleu-3"]


def test_parameters_override_the_defaults() -> None:
    scores = compute_metrics(["bleu-4"], HYPOTHESES, REFERENCES, QUERIES, "en", {"smooth": "method2"})
    tester = MetricTester("bleu-4", nltk_bleu_reference(4, "method2"), NLTK_TOLERANCE, {"smooth": "method2"})
    assert scores["bleu-4"] == tester.check(BATCH)
    assert scores["bleu-4"] != pytest.approx(nltk_bleu_reference(4, "method1")(BATCH), abs=1e-6)
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
        "impl": "nltk",
        "case": "lc",
        "version": METRICS_VERSION,
    }
    single = signature_parameters("bleu-2", language="en", references="single", params={"smooth": "method0"})
    assert single["refs"] == "single"
    assert single["smooth"] == "method0"
    assert "refagg" not in single  # one reference: nothing to aggregate


# Pre-tokenized text where the English tokenizer and a whitespace split disagree: case ("Fine", "_UNK"),
# times ("2:00" becomes "2", ":", "00"), abbreviations ("a.m.").
PRE_TOKENIZED = ["Fine , thanks !", "see you at 2:00 a.m. then", "i 'm _UNK , sorry ."]
PRE_TOKENIZED_REFERENCES = [["fine , thanks !"], ["see you at 2 am then"], ["i 'm _unk , sorry ."]]


def _on_whitespace_tokens(name: str) -> list[float]:
    """``name`` computed straight on whitespace tokens, without the registry (BLEU: nltk through the metric
    tester, in the test)."""
    from scoring.metrics.embedding import embedding_scores_batch
    from scoring.metrics.meteor import meteor
    from scoring.metrics.rouge import rouge_l
    from scoring.metrics.word_vectors import glove_6b_50d

    hypotheses = [text.split() for text in PRE_TOKENIZED]
    references = [[text.split() for text in refs] for refs in PRE_TOKENIZED_REFERENCES]
    if name == "rouge-l":
        return [rouge_l(hyp, refs[0]) for hyp, refs in zip(hypotheses, references, strict=True)]
    if name == "meteor":
        return [meteor(hyp, refs[0]) for hyp, refs in zip(hypotheses, references, strict=True)]
    return embedding_scores_batch(hypotheses, references, glove_6b_50d(), metrics=[name]).values[name]


@pytest.mark.parametrize(
    "name",
    [
        "bleu-1",
        "bleu-2",
        "bleu-4",
        "rouge-l",
        "meteor",
        "embedding-average",
        "vector-extrema",
        "greedy-matching",
    ],
)
def test_tokenizer_none_reaches_every_metric_that_tokenizes(name: str) -> None:
    queries = [""] * len(PRE_TOKENIZED)
    args = (PRE_TOKENIZED, PRE_TOKENIZED_REFERENCES, queries, "en")
    whitespace = compute_metrics([name], *args, tokenizer="none")[name]
    default = compute_metrics([name], *args)[name]
    if name.startswith("bleu-"):
        batch = MetricBatch.of(PRE_TOKENIZED, PRE_TOKENIZED_REFERENCES, queries=queries)
        reference = nltk_bleu_reference(int(name[-1]), tokenizer="none")
        assert whitespace == MetricTester(name, reference, NLTK_TOLERANCE, tokenizer="none").check(batch)
    else:
        assert whitespace == pytest.approx(_on_whitespace_tokens(name), abs=1e-9)
    assert whitespace != pytest.approx(default, abs=1e-6)  # the choice changes the scores
    assert compute_metrics([name], *args, tokenizer="default")[name] == default


def test_signature_records_tok_none_for_metrics_that_tokenize() -> None:
    assert signature_parameters("bleu-2", language="en", references="single", tokenizer="none") == {
        "smooth": "method1",
        "refs": "single",
        "tok": "none",
        "impl": "nltk",
        "case": "mixed",  # a whitespace split keeps the case (en-v1 lowercases: case:lc)
        "version": METRICS_VERSION,
    }
    for name in ("rouge-l", "meteor", "embedding-average", "vector-extrema", "greedy-matching"):
        assert (
            signature_parameters(name, language="en", references="multi", tokenizer="none")["tok"] == "none"
        )
    assert (
        signature_parameters("bleu-2", language="zh", references="multi", tokenizer="none")["tok"] == "none"
    )
    # the default is what stored scores already carry
    assert signature_parameters("bleu-2", language="en", references="multi", tokenizer="default") == (
        signature_parameters("bleu-2", language="en", references="multi")
    )


def test_learned_metrics_keep_their_models_tokenizer() -> None:
    learned = [name for name in available_metric_names() if metric_spec(name).model_kind]
    assert "ruber-referenced" in learned
    for name in learned:
        default = signature_parameters(name, language="en", references="multi", model_hash="f" * 64)
        chosen = signature_parameters(
            name, language="en", references="multi", model_hash="f" * 64, tokenizer="none"
        )
        assert chosen == default, name
    assert (
        signature_parameters("ruber-referenced", language="en", references="multi", model_hash="f" * 64)[
            "tok"
        ]
        == "en-v1"
    )


def test_only_metrics_that_tokenize_without_a_model_are_given_the_tokenizer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scoring.metrics import registry
    from scoring.metrics.spec import MetricCompute, MetricSpec

    received: dict[str, dict[str, str]] = {}

    def recording(name: str) -> MetricCompute:
        def compute(inputs: MetricInputs, params: Mapping[str, str]) -> list[float | None]:
            received[name] = dict(params)
            return [0.0] * len(inputs)

        return compute

    for name, kind in (("plain-metric", ""), ("learned-metric", "ruber")):
        spec = MetricSpec(
            name=name,
            description="test",
            needs_references=False,
            version="0",
            compute=recording(name),
            model_kind=kind,
        )
        monkeypatch.setitem(registry._SPECS, name, spec)
    compute_metrics(
        ["plain-metric", "learned-metric"], ["a"], [[]], ["q"], "en", models={"ruber": "/m"}, tokenizer="none"
    )
    assert received["plain-metric"] == {"tokenizer": "none"}
    assert received["learned-metric"] == {"model": "/m"}


def test_unknown_tokenizer_is_refused_naming_the_choices() -> None:
    message = "unknown tokenizer 'ws'; choose one of default, none"
    with pytest.raises(ValueError, match=message):
        compute_metrics(["bleu-1"], HYPOTHESES, REFERENCES, QUERIES, "en", tokenizer="ws")
    with pytest.raises(ValueError, match=message):
        signature_parameters("bleu-1", language="en", references="multi", tokenizer="ws")
    # the tokenizer is an argument of its own, not a metric parameter a caller can slip in
    with pytest.raises(ValueError, match="has the parameter"):
        compute_metrics(["bleu-1"], HYPOTHESES, REFERENCES, QUERIES, "en", {"tokenizer": "none"})


def test_progress_reports_every_slice_and_the_scores_do_not_depend_on_it() -> None:
    hypotheses = [f"the cat sat on mat number {i} ." for i in range(300)]
    references = [["the cat sat on the mat ."]] * 300
    queries = ["where is the cat ?"] * 300
    seen: list[int] = []
    sliced = registry.compute_metrics(
        ["bleu-2", "rouge-l"], hypotheses, references, queries, "en", progress=seen.append, progress_every=16
    )
    whole = registry.compute_metrics(["bleu-2", "rouge-l"], hypotheses, references, queries, "en")
    assert sliced == whole
    assert seen[0] == 16  # the first slice has the asked size; fast slices then grow
    assert seen == sorted(seen)
    assert seen[-1] == 300
    assert len(seen) >= 2


def test_progress_raising_stops_the_computation() -> None:
    class Cancelled(Exception):
        pass

    def cancel(done: int) -> None:
        raise Cancelled

    with pytest.raises(Cancelled):
        registry.compute_metrics(
            ["bleu-1"], ["a b"] * 100, [["a b"]] * 100, ["q"] * 100, "en", progress=cancel
        )


def test_a_blend_combines_stored_components_like_the_family_computes_it() -> None:
    referenced = [0.1, 0.5, None, 0.9, 0.3]
    unreferenced = [0.2, 0.3, 0.4, 0.8, 0.9]
    combined = registry.combine_metric(
        "ruber-gmean", {"ruber-referenced": referenced, "ruber-unreferenced": unreferenced}
    )
    from scoring.metrics.ruber.blends import ruber_blends

    assert combined == ruber_blends(referenced, unreferenced, methods=["gmean"])["gmean"]
    assert combined[2] is None
    with pytest.raises(ValueError, match="needs the values of ruber-unreferenced"):
        registry.combine_metric("ruber-gmean", {"ruber-referenced": referenced})
    with pytest.raises(ValueError, match="not computed from stored components"):
        registry.combine_metric("bleu-1", {})

"""Diversity metrics (Gupta et al., 2019, sections 3.2.2 and 5.2): hand-computed values and nltk for Self-BLEU."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from scoring.metrics.diversity import bleu_metric, distinct_n, recall_context, self_bleu, self_bleu_context
from scoring.metrics.system_specs import ContextOutputs
from tests.scoring.metric_batches import MetricBatch
from tests.scoring.metric_tester import SystemMetricTester
from tests.scoring.reference_metrics import nltk_self_bleu_reference


def test_distinct_n_by_hand() -> None:
    outputs = [["i", "am", "fine"], ["i", "am", "ok"]]
    # unigrams: i, am, fine, i, am, ok -> 4 distinct of 6
    assert distinct_n(outputs, 1) == pytest.approx(4 / 6)
    # bigrams: (i am), (am fine), (i am), (am ok) -> 3 distinct of 4
    assert distinct_n(outputs, 2) == pytest.approx(3 / 4)
    # trigrams: (i am fine), (i am ok) -> 2 of 2
    assert distinct_n(outputs, 3) == 1.0
    assert distinct_n([["hi"]], 2) == 0.0  # no bigram at all
    with pytest.raises(ValueError, match="at least 1"):
        distinct_n(outputs, 0)


def test_self_bleu_equals_nltk_with_the_other_outputs_as_references() -> None:
    outputs = [
        ["i", "would", "love", "to", "go", "to", "the", "beach"],
        ["i", "would", "love", "to", "stay", "home"],
        ["the", "beach", "sounds", "great", "to", "me"],
    ]
    # one context of three outputs, the tokens given as they are (tok:none)
    batch = MetricBatch.of_contexts([ContextOutputs([" ".join(output) for output in outputs])])
    for n in (2, 4):
        reference = nltk_self_bleu_reference(n, tokenizer="none")
        tester = SystemMetricTester(f"self-bleu-{n}", reference, 1e-12, tokenizer="none")
        assert self_bleu_context(outputs, n) == tester.check(batch)["system"]


def test_self_bleu_of_identical_outputs_is_one_and_needs_two_outputs() -> None:
    same = [["see", "you", "soon"]] * 3
    assert self_bleu_context(same, 2) == pytest.approx(1.0)
    assert self_bleu_context([["alone"]], 2) is None
    # the system value averages the contexts that have at least two outputs
    assert self_bleu([same, [["alone"]]], 2) == pytest.approx(1.0)
    assert self_bleu([[["alone"]]], 2) is None


def test_recall_by_hand_with_a_toy_metric() -> None:
    def overlap(
        hypothesis: Sequence[str], reference: Sequence[str]
    ) -> float:  # share of reference words covered
        return len(set(hypothesis) & set(reference)) / len(set(reference))

    outputs = [["a", "b"], ["c"]]
    references = [["a", "b"], ["c", "d"], ["e"]]
    # best output per reference: 1.0 (["a","b"]), 0.5 (["c"] covers c of c,d), 0.0 -> mean 0.5
    assert recall_context(outputs, references, overlap) == pytest.approx(0.5)
    # more diverse outputs cover more references: adding ["e"] lifts the third to 1.0
    assert recall_context([*outputs, ["e"]], references, overlap) == pytest.approx(2.5 / 3)
    assert recall_context([], references, overlap) is None


def test_recall_bleu_uses_single_reference_sentence_bleu() -> None:
    outputs = [["sure", ",", "how", "much", "?"], ["no", "thanks"]]
    references = [["sure", "how", "much", "?"], ["no", ",", "thanks"]]
    bleu2 = bleu_metric(2)
    expected = sum(max(bleu2(o, r) for o in outputs) for r in references) / 2
    assert recall_context(outputs, references, bleu2) == pytest.approx(expected)
    assert 0.0 < expected < 1.0

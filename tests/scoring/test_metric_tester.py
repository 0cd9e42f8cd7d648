"""The metric tester itself: it passes a metric that equals its reference, and catches a reference that is off
by a little, a metric whose values depend on the items scored beside it, and a whole-set metric whose slices
the reference does not explain."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from scoring.metrics import registry
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.spec import MetricSpec
from tests.scoring.metric_batches import DIALOG_SAMPLE, MetricBatch
from tests.scoring.metric_tester import MetricTester, SystemMetricTester, assert_values_close
from tests.scoring.reference_metrics import nltk_bleu_reference, nltk_corpus_bleu_reference

FAKE = "fake-length"


def _lengths(batch: MetricBatch) -> list[float | None]:
    return [float(len(text)) for text in batch.hypotheses]


def _register(monkeypatch: pytest.MonkeyPatch, compute: object, *, whole_set: bool = False) -> None:
    spec = MetricSpec(
        name=FAKE,
        description="a metric for the tester's own tests",
        needs_references=False,
        version="1",
        compute=compute,  # type: ignore[arg-type]
        uses_tokenizer=False,
        whole_set=whole_set,
    )
    monkeypatch.setitem(registry._SPECS, FAKE, spec)


def _per_item(inputs: MetricInputs, params: Mapping[str, str]) -> list[float | None]:
    return [float(len(text)) for text in inputs.hypotheses]


def _batch_mean(inputs: MetricInputs, params: Mapping[str, str]) -> list[float | None]:
    """Each length over the mean length of the call: right on one batch, wrong on any slice of it."""
    mean = sum(len(text) for text in inputs.hypotheses) / len(inputs)
    return [len(text) / mean for text in inputs.hypotheses]


def test_a_metric_equal_to_its_reference_passes() -> None:
    values = MetricTester("bleu-2", nltk_bleu_reference(2), tolerance=1e-12).check(DIALOG_SAMPLE)
    assert len(values) == len(DIALOG_SAMPLE)
    assert sum(value is not None and value > 0 for value in values) > len(values) // 2


def test_a_reference_off_by_a_little_is_caught() -> None:
    exact = nltk_bleu_reference(2)

    def off(batch: MetricBatch) -> list[float | None]:
        return [None if value is None else value * 1.0001 for value in exact(batch)]

    with pytest.raises(AssertionError, match="largest difference"):
        MetricTester("bleu-2", off, tolerance=1e-9).check(DIALOG_SAMPLE)


def test_a_metric_depending_on_the_items_beside_it_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    _register(monkeypatch, _batch_mean)

    def reference(batch: MetricBatch) -> list[float | None]:
        lengths = _lengths(batch)
        mean = sum(value or 0.0 for value in lengths) / len(lengths)
        return [(value or 0.0) / mean for value in lengths]

    tester = MetricTester(FAKE, reference, tolerance=1e-12)
    assert_values_close(
        tester.check_batch(DIALOG_SAMPLE), reference(DIALOG_SAMPLE), 1e-12
    )  # one batch agrees
    with pytest.raises(AssertionError, match="one-batch value"):
        tester.check(DIALOG_SAMPLE)


def test_a_whole_set_metric_is_checked_against_the_reference_on_each_slice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _register(monkeypatch, _batch_mean, whole_set=True)

    def reference(batch: MetricBatch) -> list[float | None]:
        lengths = [value or 0.0 for value in _lengths(batch)]
        return [value / (sum(lengths) / len(lengths)) for value in lengths]

    MetricTester(FAKE, reference, tolerance=1e-12).check(DIALOG_SAMPLE)
    first = MetricTester(FAKE, reference, tolerance=1e-12).compute(DIALOG_SAMPLE)
    # a reference over the whole batch, whatever the slice, does not explain the slices' values
    with pytest.raises(AssertionError, match="slice"):
        MetricTester(FAKE, lambda batch: first[: len(batch)], tolerance=1e-12).check(DIALOG_SAMPLE)


def test_a_per_item_metric_equal_to_its_reference_passes_on_a_fake(monkeypatch: pytest.MonkeyPatch) -> None:
    _register(monkeypatch, _per_item)
    MetricTester(FAKE, _lengths, tolerance=0.0).check(DIALOG_SAMPLE)


def test_a_system_metric_off_by_a_little_is_caught() -> None:
    exact = nltk_corpus_bleu_reference()
    SystemMetricTester("corpus-bleu", exact, tolerance=1e-12).check(DIALOG_SAMPLE)

    def off(contexts: Sequence[object]) -> float | None:
        value = exact(contexts)  # type: ignore[arg-type]
        return None if value is None else value * 1.0001

    with pytest.raises(AssertionError, match="largest difference"):
        SystemMetricTester("corpus-bleu", off, tolerance=1e-9).check(DIALOG_SAMPLE)


def test_none_where_the_reference_has_a_value_is_caught() -> None:
    with pytest.raises(AssertionError, match="item 1"):
        assert_values_close([0.5, None], [0.5, 0.25], 1e-9)
    assert_values_close([0.5, None], [0.5, None], 0.0)


def test_the_sample_has_uneven_slices_and_several_systems_per_context() -> None:
    sizes = [len(part) for part in DIALOG_SAMPLE.uneven_slices()]
    assert sum(sizes) == len(DIALOG_SAMPLE)
    assert len(set(sizes)) == 3
    assert DIALOG_SAMPLE.system_names() == ["echo", "terse", "chatty"]
    assert [len(context.outputs) for context in DIALOG_SAMPLE.contexts_of("echo")] == [1] * 6

"""One tester for every metric that has a reference implementation, as torchmetrics has one
(``tests/unittests/_helpers/testers.py``): given a metric, the reference and a tolerance, it scores a batch
through the engine's public entry points and checks that every way the engine computes the metric agrees with
the others and with the reference, and that the metric's signature reads back.

:class:`MetricTester` (a metric with one value per reply) checks, on a :class:`MetricBatch`:

1. one batch: ``compute_metrics`` over every item equals the reference within the tolerance (``None`` where
   the reference has no value, too);
2. slices: three uneven slices scored one by one give exactly the one-batch values, and so does the engine's
   own slicing (``compute_metrics`` with ``progress``, which is how a scoring chunk calls it: slices that grow
   while they are fast, neural ``one_pass`` metrics in one call over the whole set);
3. per system: each system's items scored alone give exactly their one-batch values;
4. the signature: ``signature_parameters`` with the tester's parameters, written and parsed back, is the same
   signature, and records every parameter the values were computed with.

A whole-set metric (``is_whole_set``: CIDEr-D, whose idf counts the documents of every item scored together)
legitimately changes with the items scored beside it, so steps 2 and 3 compare each slice and each system with
the reference on that slice or system instead of with the one-batch values.

:class:`SystemMetricTester` (one value per system: corpus BLEU, Self-BLEU, corpus chrF) checks each system's
value from ``compute_system_metric`` against the reference on that system's outputs grouped by context, the
whole batch as one system, and the signature.

The reference is a callable of the batch (see :mod:`tests.scoring.reference_metrics`), so it reads the very
texts the engine reads; the tolerance is the reference's agreement (floating-point order, float32 vectors),
never the engine's agreement with itself, which is exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from scoring.metrics.registry import (
    compute_metrics,
    compute_system_metric,
    is_whole_set,
    metric_spec,
    signature_parameters,
    system_metric_spec,
)
from scoring.metrics.signature import metric_signature, parse_metric_signature
from scoring.metrics.spec import VectorsChoice
from scoring.metrics.system_specs import ContextOutputs
from scoring.metrics.tokenize import DEFAULT_TOKENIZER
from tests.scoring.metric_batches import MetricBatch

Values = Sequence[float | None]
Reference = Callable[[MetricBatch], Values]
SystemReference = Callable[[Sequence[ContextOutputs]], float | None]


def assert_values_close(ours: Values, theirs: Values, tolerance: float, what: str = "") -> None:
    """``ours`` equals ``theirs`` item by item within ``tolerance`` (absolute), ``None`` exactly where
    ``theirs`` has ``None``; the message names the worst item."""
    label = f"{what}: " if what else ""
    assert len(ours) == len(theirs), f"{label}{len(ours)} values for {len(theirs)} expected"
    worst, at = -1.0, -1
    for index, (mine, expected) in enumerate(zip(ours, theirs, strict=True)):
        if mine is None or expected is None:
            assert mine is None, f"{label}item {index}: {mine!r} where the reference has no value"
            assert expected is None, f"{label}item {index}: no value where the reference has {expected!r}"
            continue
        assert math.isfinite(float(mine)), f"{label}item {index}: {mine!r}"
        difference = abs(float(mine) - float(expected))
        if not difference <= worst:
            worst, at = difference, index
    assert worst <= tolerance, (
        f"{label}largest difference {worst:.3e} > {tolerance:.0e} at item {at}: {ours[at]!r} vs {theirs[at]!r}"
    )


def assert_values_equal(ours: Values, theirs: Values, what: str) -> None:
    """Exactly equal (the engine against itself: slices, systems, progress), with the first difference named."""
    assert len(ours) == len(theirs), f"{what}: {len(ours)} values for {len(theirs)}"
    for index, (mine, expected) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == expected, f"{what}: item {index} is {mine!r}, the one-batch value {expected!r}"


@dataclass(frozen=True)
class MetricTester:
    """Checks the per-reply metric ``name`` (with ``params``, ``implementation``, ``tokenizer``, ``vectors``)
    against ``reference`` within ``tolerance``; :meth:`check` runs every check and returns the values."""

    name: str
    reference: Reference
    tolerance: float
    params: Mapping[str, str] = field(default_factory=dict)
    implementation: str = ""
    tokenizer: str = DEFAULT_TOKENIZER
    language: str = "en"
    vectors: VectorsChoice | None = None

    def compute(
        self, batch: MetricBatch, progress: Callable[[int], None] | None = None
    ) -> list[float | None]:
        """The metric's values on ``batch`` from the engine's entry point, called as a scoring run calls it."""
        shared: dict[tuple[str, tuple[str, ...]], list[str]] = {}  # one list per context, as a run reads it
        return compute_metrics(
            [self.name],
            list(batch.hypotheses),
            [
                shared.setdefault((query, refs), list(refs))
                for query, refs in zip(batch.queries, batch.references, strict=True)
            ],
            list(batch.queries),
            self.language,
            params=dict(self.params),
            tokenizer=self.tokenizer,
            progress=progress,
            progress_every=1,
            implementations={self.name: self.implementation} if self.implementation else None,
            vectors=self.vectors,
        )[self.name]

    @property
    def whole_set(self) -> bool:
        return is_whole_set(self.name, self.implementation)

    def check(self, batch: MetricBatch, *, limit: int | None = None) -> list[float | None]:
        """Every check on ``batch``, or on its first ``limit`` items: each check scores the batch several
        times, so a large real-data batch whose every item the caller compares otherwise (the library
        functions on the whole set) goes through the engine's paths on a slice of it."""
        if limit is not None:
            batch = batch.subset(range(min(limit, len(batch))))
        values = self.check_batch(batch)
        self.check_slices(batch, values)
        self.check_systems(batch, values)
        self.check_signature()
        return values

    def check_batch(self, batch: MetricBatch) -> list[float | None]:
        values = self.compute(batch)
        assert_values_close(values, self.reference(batch), self.tolerance, f"{self._label} on one batch")
        return values

    def check_slices(self, batch: MetricBatch, values: Values) -> None:
        done: list[int] = []
        progressed = self.compute(batch, progress=done.append)
        assert_values_equal(progressed, values, f"{self._label} in the engine's slices")
        assert done, f"{self._label}: no progress reported"
        assert done[-1] == len(batch), f"{self._label}: progress ended at {done[-1]} of {len(batch)}"
        for part in batch.uneven_slices():
            self._check_part(batch, part, values, "slice")

    def check_systems(self, batch: MetricBatch, values: Values) -> None:
        for system in batch.system_names():
            self._check_part(batch, batch.indices_of(system), values, f"system {system!r}")

    def _check_part(self, batch: MetricBatch, indices: Sequence[int], values: Values, what: str) -> None:
        part = batch.subset(indices)
        alone = self.compute(part)
        label = f"{self._label} on {what} of {len(indices)} items"
        if self.whole_set:
            assert_values_close(alone, self.reference(part), self.tolerance, label)
        else:
            assert_values_equal(alone, [values[index] for index in indices], label)

    def check_signature(self) -> None:
        parameters = signature_parameters(
            self.name,
            language=self.language,
            references="multi",
            params=dict(self.params),
            tokenizer=self.tokenizer,
            implementation=self.implementation,
        )
        _check_signature_round_trip(self.name, parameters, self.params)
        spec = metric_spec(self.name)
        if self.implementation:
            assert parameters["impl"] == self.implementation
        if spec.uses_tokenizer and "tok" in parameters and self.tokenizer != DEFAULT_TOKENIZER:
            assert parameters["tok"] == self.tokenizer, parameters

    @property
    def _label(self) -> str:
        return self.name + (f" ({self.implementation})" if self.implementation else "")


@dataclass(frozen=True)
class SystemMetricTester:
    """Checks the system-level metric ``name`` against ``reference`` (a function of one system's outputs per
    context) within ``tolerance``; :meth:`check` returns the value of each system."""

    name: str
    reference: SystemReference
    tolerance: float
    params: Mapping[str, str] = field(default_factory=dict)
    implementation: str = ""
    tokenizer: str = DEFAULT_TOKENIZER
    language: str = "en"

    def compute(self, contexts: Sequence[ContextOutputs]) -> float | None:
        return compute_system_metric(
            self.name,
            contexts,
            self.language,
            dict(self.params),
            tokenizer=self.tokenizer,
            implementation=self.implementation,
        ).value

    def check(self, batch: MetricBatch) -> dict[str, float | None]:
        values: dict[str, float | None] = {}
        for system in batch.system_names():
            contexts = batch.contexts_of(system)
            values[system] = self.compute(contexts)
            assert_values_close(
                [values[system]], [self.reference(contexts)], self.tolerance, f"{self.name} of {system!r}"
            )
        whole = [
            ContextOutputs([reply], list(refs))
            for reply, refs in zip(batch.hypotheses, batch.references, strict=True)
        ]
        assert_values_close(
            [self.compute(whole)], [self.reference(whole)], self.tolerance, f"{self.name} whole"
        )
        self.check_signature()
        return values

    def check_signature(self) -> None:
        parameters = system_metric_spec(self.name).signature_parameters(
            language=self.language,
            references="multi",
            tokenizer=self.tokenizer,
            implementation=self.implementation,
            params=dict(self.params),
        )
        _check_signature_round_trip(self.name, parameters, self.params)
        assert parameters["level"] == "system"


def _check_signature_round_trip(name: str, parameters: Mapping[str, str], params: Mapping[str, str]) -> None:
    """The signature reads back as what wrote it, and names every parameter the values were computed with."""
    text = metric_signature(name, parameters)
    parsed_name, parsed = parse_metric_signature(text)
    assert (parsed_name, parsed) == (name, dict(parameters)), text
    assert metric_signature(parsed_name, parsed) == text
    assert text.rsplit("|", 1)[-1].startswith("version:"), text
    missing = {key: value for key, value in params.items() if parsed.get(key) != value}
    assert not missing, f"{text} does not record {missing}"

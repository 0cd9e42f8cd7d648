"""The whole report document under a metric's change of unit or level: every number of every section (rows,
per-system rows, grouped columns and their intervals, metric-against-metric tests with Williams, the paired
bootstrap and both permutation tests, system level, pairwise accuracy, ranks and clusters, the planner's
sentences) is what it was, to 1e-9, except the fields in the metric's own unit, which move with it.

One metric is multiplied by an exact constant from about 1e-199 to 1e199 (see
tests/stats/metamorphic_studies.py) or shifted, at each grouping. Before the statistics were made exact at
every scale, a metric of values near 1e-180 lost its bootstrap intervals, its permutation tests and its
within-group correlations.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import pytest

from stats.report.builder import build_report
from stats.report.types import (
    AnnotatorInfo,
    QuestionInputs,
    ReportInputs,
    ReportOptions,
    ResponseInfo,
    SignatureInputs,
)
from tests.stats.metamorphic_studies import RELATIVE

SYSTEMS, CONTEXTS = 4, 12
MOVED = 2  # the signature id whose values are transformed
MOVED_SIGNATURE = "cider-d|refs:single"
# Fields that hold values in a metric's own unit: (path suffix, how they follow the metric: "scale" moves with
# its constant, "level" with the constant and the shift).
IN_METRIC_UNITS = {
    ".systems[].metric_mean": "level",
    ".groups[].metric_mean": "level",
    ".context.epsilon": "scale",
    ".system.epsilon": "scale",
}


def _inputs(seed: int) -> ReportInputs:
    rng = random.Random(seed)
    responses = {
        i: ResponseInfo(
            text=f"reply {i}", system="abcd"[i % SYSTEMS], context=f"c{i // SYSTEMS}", context_id=i // SYSTEMS
        )
        for i in range(SYSTEMS * CONTEXTS)
    }
    annotators = {
        k: AnnotatorInfo(key=k, pseudonym=f"rater-{k}", identity_known=True, inclusion="auto", agreement=None)
        for k in range(3)
    }
    quality = {i: rng.randint(1, 5) for i in responses}
    ratings = tuple(
        (k, i, min(5, max(1, quality[i] + rng.choice((-1, 0, 0, 1))))) for k in annotators for i in responses
    )
    signatures = (
        SignatureInputs(1, "bleu-2", "bleu-2|refs:single", "single", "Referenced", {"refs": "single"}),
        SignatureInputs(2, "cider-d", "cider-d|refs:single", "single", "Referenced", {"refs": "single"}),
        SignatureInputs(3, "ruber", "ruber|model:x", "none", "Unreferenced", {}),
    )
    # On a grid of 1/64 (exact products and shifts); the second metric has ties and constant contexts.
    values = {
        1: {i: (quality[i] * 16 + rng.randint(-40, 40)) / 64 for i in responses},
        2: {i: (quality[i] * 4 + rng.choice((0, 0, 8))) / 64 if i % 3 else 0.25 for i in responses},
        3: {i: rng.randint(-200, 200) / 64 for i in responses},
    }
    return ReportInputs(
        study_id=1, study_name="metamorphic", data_version=1, study_threshold=None, responses=responses,
        annotators=annotators, questions=(QuestionInputs("overall", 1, 5, ratings, {}),),
        signatures=signatures, metric_values=values, code_version="test",
    )  # fmt: skip


def _moved(inputs: ReportInputs, change: Callable[[float], float]) -> ReportInputs:
    values = {key: dict(column) for key, column in inputs.metric_values.items()}
    values[MOVED] = {i: change(v) for i, v in values[MOVED].items()}
    return ReportInputs(**{**inputs.__dict__, "metric_values": values})


def _compare(
    before: Any, after: Any, path: str, moved: tuple[float, float] | None, mismatches: list[str]
) -> None:
    """``moved``: (scale, shift) inside an entry of the moved metric, whose own-unit fields follow it."""
    if isinstance(before, dict):
        assert isinstance(after, dict), path
        assert list(before) == list(after), path
        for key in before:
            _compare(before[key], after[key], f"{path}.{key}", moved, mismatches)
        return
    if isinstance(before, list):
        assert isinstance(after, list), path
        assert len(before) == len(after), path
        for first, second in zip(before, after, strict=True):
            _compare(first, second, f"{path}[]", moved, mismatches)
        return
    if isinstance(before, float) and isinstance(after, float):
        expected, scale = before, 1.0
        unit = next((how for suffix, how in IN_METRIC_UNITS.items() if path.endswith(suffix)), None)
        if unit is not None and moved is not None:
            scale, shift = moved
            expected = before * scale + (shift if unit == "level" else 0.0)
        if not math.isclose(after, expected, rel_tol=RELATIVE, abs_tol=1e-12 * max(1.0, abs(scale))):
            mismatches.append(f"{path}: {before!r} -> {after!r} (expected {expected!r})")
        return
    if before != after:
        mismatches.append(f"{path}: {before!r} -> {after!r}")


def _compare_documents(
    before: dict[str, Any], after: dict[str, Any], scale: float, shift: float
) -> list[str]:
    """Every field; the entries of the moved metric (by signature) compare their own-unit fields moved."""
    mismatches: list[str] = []
    for section, entries in before.items():
        if section == "code_version":
            continue
        if isinstance(entries, list) and entries and isinstance(entries[0], dict):
            assert len(entries) == len(after[section]), section
            for first, second in zip(entries, after[section], strict=True):
                moved = (scale, shift) if first.get("signature") == MOVED_SIGNATURE else None
                _compare(first, second, f".{section}[]", moved, mismatches)
        else:
            _compare(entries, after[section], f".{section}", None, mismatches)
    return mismatches


@pytest.mark.parametrize("grouping", ["none", "context", "system"])
@pytest.mark.parametrize(
    ("scale", "shift"),
    [
        (math.ldexp(3.0, -660), 0.0),
        (math.ldexp(29.0, 650), 0.0),
        (math.ldexp(1.0, -200), 0.0),
        (1.0, 4096.25),
    ],
    ids=["3x2^-660 (1e-198)", "29x2^650 (1.3e197)", "2^-200", "shift"],
)
def test_the_report_ignores_a_metrics_unit_and_level(grouping: str, scale: float, shift: float) -> None:
    inputs = _inputs(seed=3)
    options = ReportOptions(resamples=60, seed=5, grouping=grouping)
    before, _ = build_report(inputs, options)
    after, _ = build_report(_moved(inputs, lambda value: value * scale + shift), options)
    mismatches = _compare_documents(dict(before), dict(after), scale, shift)
    assert not mismatches, "\n".join(mismatches[:20])
    # the study has what the comparison needs: tests run, ranks given, groups left out
    comparisons = before["metric_comparisons"]
    assert all(entry.get("perm_both_p") is not None for entry in comparisons)
    assert all(row.get("rank") is not None for row in before["rows"])

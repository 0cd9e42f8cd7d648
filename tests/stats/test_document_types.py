"""The report document's TypedDicts (stats/report/document_types.py) describe the JSON the builder writes:
every key of every entry is declared, every required key is there, and every value has its declared type;
checked on the demo study's stored document and on a built document with every section filled in (pairwise
judgments and a pairwise judge, diversity, a metric without values, excluded replies)."""

from __future__ import annotations

import json
import random
import types
import typing
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from stats.judge_pairwise import JudgedPair, PairVerdict
from stats.pairwise import PairwiseRecord
from stats.report.builder import build_report
from stats.report.document_types import ReportDocument
from stats.report.types import (
    DiversityInputs,
    PairwiseJudgeInputs,
    ReportOptions,
    SignatureInputs,
    UnvaluedMetric,
)
from tests.stats.test_figures import QUESTION, synthetic_inputs

STORED = Path(__file__).resolve().parent.parent / "data" / "report_document_demo.json"


def problems(value: object, kind: Any, where: str = "document") -> list[str]:
    """Where ``value`` is not of the type ``kind`` (a TypedDict, list[...], a union, Literal or a plain
    type), each as "path: what is wrong"."""
    origin = get_origin(kind)
    if typing.is_typeddict(kind):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object ({kind.__name__})"]
        hints = get_type_hints(kind)
        found = [f"{where}.{key}: not declared in {kind.__name__}" for key in value if key not in hints]
        found += [f"{where}.{key}: missing" for key in kind.__required_keys__ if key not in value]
        for key, hint in hints.items():
            if key in value:
                found += problems(value[key], hint, f"{where}.{key}")
        return found
    if origin in (Union, types.UnionType):
        options = [problems(value, option, where) for option in get_args(kind)]
        return [] if any(not found for found in options) else min(options, key=len)
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__}, not a list"]
        (item,) = get_args(kind)
        return [
            problem
            for index, entry in enumerate(value)
            for problem in problems(entry, item, f"{where}[{index}]")
        ]
    if origin is Literal:
        return [] if value in get_args(kind) else [f"{where}: {value!r} is not one of {get_args(kind)}"]
    if kind is type(None):
        return [] if value is None else [f"{where}: {value!r}, not null"]
    if kind is float:
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if numeric else [f"{where}: {value!r}, not a number"]
    if kind is int:
        whole = isinstance(value, int) and not isinstance(value, bool)
        return [] if whole else [f"{where}: {value!r}, not a whole number"]
    return [] if isinstance(value, kind) else [f"{where}: {value!r}, not {kind.__name__}"]


def full_document() -> ReportDocument:
    """A built document with every section that can be there: per-reference curves and agreement
    (synthetic_inputs), pairwise judgments, diversity, a metric without values and an excluded reply."""
    inputs = synthetic_inputs(60)
    by_system: dict[str, list[int]] = {}
    for item, response in sorted(inputs.responses.items()):
        by_system.setdefault(response.system, []).append(item)
    systems = sorted(by_system)
    records = tuple(
        PairwiseRecord(
            annotator=rater,
            response_a=by_system[first][rater],
            response_b=by_system[second][rater],
            system_a=first,
            system_b=second,
            choice=random.Random(rater).choice("ab="),
            a_shown_left=bool(rater % 2),
        )
        for rater in range(4)
        for index, first in enumerate(systems)
        for second in systems[index + 1 :]
    )
    rng = random.Random(3)
    diversity = DiversityInputs(
        human={
            (system, f"c{c}"): (rng.uniform(1, 3), rng.uniform(1, 3)) for system in systems for c in range(5)
        },
        metrics={"distinct-1": {(system, f"c{c}"): rng.random() for system in systems for c in range(5)}},
    )
    unvalued = UnvaluedMetric("bleu-4", "bleu-4|refs:single", "single", "Referenced", "no references")
    judge = SignatureInputs(
        99,
        f"llm-judge:{'a' * 16}",
        f"llm-judge:{'a' * 16}|model:smollm2-135m|question:{QUESTION}@1a2b3c4d|template:g-eval@3f2a|version:1",
        "none",
        "LLM judge",
        label_mass_id=98,
    )
    pairwise_judge = PairwiseJudgeInputs(
        f"llm-pairwise:{'b' * 16}",
        f"llm-pairwise:{'b' * 16}|model:smollm2-135m|orders:both|template:pairwise@04203f4c|version:1",
        tuple(
            JudgedPair(
                record.response_a,
                record.response_b,
                record.system_a,
                record.system_b,
                PairVerdict(0.6, 0.3, 0.1, "first", 0.3, True, (0.9, 0.8)),
            )
            for record in records
            if record.annotator == 0
        ),
    )
    values = {**inputs.metric_values, 99: {item: 0.1 * (item % 7) for item in inputs.responses}}
    values[98] = dict.fromkeys(inputs.responses, 0.3)  # a low mass: the row's note says so
    inputs = replace(
        inputs,
        signatures=(*inputs.signatures, judge),
        metric_values=values,
        pairwise=records,
        pairwise_judges=(pairwise_judge,),
        diversity=diversity,
        unvalued=(unvalued,),
        excluded_responses=frozenset({10_000}),
    )
    document, _ = build_report(inputs, ReportOptions(resamples=20))
    return document


def stored_document() -> dict[str, Any]:
    """The demo study's stored document, with the code version it leaves out (it names the code)."""
    return {**json.loads(STORED.read_text(encoding="utf-8")), "code_version": "0.1.0"}


def test_the_stored_demo_document_is_a_report_document() -> None:
    document = stored_document()
    assert problems(document, ReportDocument) == []


def test_a_document_with_every_section_is_a_report_document() -> None:
    document = json.loads(json.dumps(full_document()))
    for section in ("references_curve", "single_vs_multi", "per_system", "metric_comparisons", "quantiles"):
        assert document[section], section
    assert document["diversity"] is not None
    assert document["pairwise"] is not None
    assert document["pairwise"]["judges"][0]["note"].startswith("the judge picks the reply shown first 0.30")
    assert any("no_values" in row for row in document["rows"])
    assert "excluded_by_researcher" in document["questions"][0]["left_out"]
    assert any("judge" in row and "only 30%" in row["note"] for row in document["rows"])
    assert any("judge" in entry for entry in document["metric_names"])
    assert problems(document, ReportDocument) == []


def test_the_check_finds_a_renamed_key_a_missing_one_and_a_wrong_type() -> None:
    document = stored_document()
    document["rows"][0]["pearson_r"] = document["rows"][0].pop("pearson")
    document["human"][0]["raters"] = "3"
    del document["notes"]
    assert problems(document, ReportDocument) == [
        "document.notes: missing",
        "document.human[0].raters: '3', not a whole number",
        "document.rows[0].pearson_r: not declared in MetricRow",
        "document.rows[0].pearson: missing",
    ]

"""Notes the report adds where a number says less than it seems: nlg-eval's sentence BLEU-4 system
means that print as 0.0000 (coco's 1e-15 floor), and pairwise accuracy of only two systems (one pair)."""

from __future__ import annotations

import numpy as np

from stats.meta.groups import Groups
from stats.meta.pairwise_accuracy import ONE_PAIR, system_pairwise_accuracy
from stats.report.builder import build_report
from stats.report.types import (
    AnnotatorInfo,
    QuestionInputs,
    ReportInputs,
    ReportOptions,
    ResponseInfo,
    SignatureInputs,
)


def _inputs(systems: int) -> ReportInputs:
    rng = np.random.default_rng(4)
    n = 12 * systems
    responses = {
        i: ResponseInfo(
            text=f"r{i}", system=f"bot-{i % systems}", context=f"c{i // systems}", context_id=i // systems
        )
        for i in range(n)
    }
    annotators = {k: AnnotatorInfo(k, f"rater-{k}", True, "auto", None) for k in range(2)}
    quality = rng.integers(1, 6, n)
    ratings = tuple((k, i, int(quality[i])) for k in annotators for i in range(n))
    coco = SignatureInputs(
        1, "bleu-4", "bleu-4|impl:nlg-eval|refs:single", "single", "Referenced", implementation="nlg-eval"
    )
    nltk = SignatureInputs(
        2, "bleu-4", "bleu-4|impl:nltk|refs:single", "single", "Referenced", implementation="nltk"
    )
    # the first system's replies all at coco's floor (its mean prints as 0.0000), some of the others' too
    floor = {i: 1e-15 if i % systems == 0 or i % 5 == 1 else 0.02 * quality[i] for i in range(n)}
    return ReportInputs(
        study_id=1, study_name="floors", data_version=1, study_threshold=None, responses=responses,
        annotators=annotators, questions=(QuestionInputs("q", 1, 5, ratings, {}),), signatures=(coco, nltk),
        metric_values={1: floor, 2: {i: 0.1 * quality[i] + rng.random() for i in range(n)}}, code_version="t",
    )  # fmt: skip


def test_coco_bleu_system_means_at_its_floor_say_why_they_print_as_zero() -> None:
    document, _ = build_report(_inputs(3), ReportOptions(resamples=0))
    rows = {row["signature"]: row for row in document["system_level"]}
    coco, nltk = rows["bleu-4|impl:nlg-eval|refs:single"], rows["bleu-4|impl:nltk|refs:single"]
    assert any(f"{system['metric_mean']:.4f}" == "0.0000" for system in coco["systems"])
    at_floor = sum(value < 1e-9 for value in _inputs(3).metric_values[1].values())
    assert f"{at_floor} of 36 replies have coco's sentence BLEU-4 floor of 1e-15" in coco["note"]
    assert "floor" not in nltk["note"]


def test_two_systems_make_one_pair_and_the_accuracy_says_so() -> None:
    for systems, note in ((2, ONE_PAIR), (3, "")):
        inputs = _inputs(systems)
        human = np.array(
            [np.mean([r[2] for r in inputs.questions[0].ratings if r[1] == i]) for i in inputs.responses]
        )
        values = np.array([[inputs.metric_values[2][i]] for i in inputs.responses])
        result = system_pairwise_accuracy(
            human,
            values,
            Groups.of([r.system for r in inputs.responses.values()]),
            contexts=Groups.of([r.context for r in inputs.responses.values()]),
            resamples=20,
        )[0]
        assert result.note == note, systems
    document, _ = build_report(_inputs(2), ReportOptions(resamples=20))
    assert all(entry["system"]["note"] == ONE_PAIR for entry in document["pairwise_accuracy"])

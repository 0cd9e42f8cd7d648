"""LLM judges' scores stored as a scoring run stores them, without running a model.

The report reads scores, never how they were made: a judge here is a real definition (a shipped prompt
template on one of the study's questions, tests of scoring/judges/), its ``JudgeRecord``, and its two
signatures written by the engine's own spec (scoring/metrics/llm_judge/specs.py ``judge_family``, with a
backend that names a model and reads nothing), under which the given values are stored as ``MetricScore``
rows: the judge's score and its mass on labels per reply. A pairwise judge's verdicts are stored the same
way, as ``JudgePairVerdict`` rows under the signature a run writes (``pairwise_signature_parameters``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from annotation.models import Response, Study
from scoring.judges.definitions import study_questions
from scoring.metrics.llm_judge.definition import BACKEND_LOCAL, JudgeDefinition
from scoring.metrics.llm_judge.judging import READ_EXPECTATION, JudgeSetup
from scoring.metrics.llm_judge.pairwise import (
    Pair,
    PairVerdict,
    pairwise_judge_name,
    pairwise_question,
    pairwise_signature_parameters,
)
from scoring.metrics.llm_judge.prompts import JudgeItem, PromptTemplate
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from scoring.metrics.llm_judge.scale import LabelReading
from scoring.metrics.llm_judge.specs import judge_family
from scoring.metrics.signature import metric_signature
from scoring.metrics.tokenize import DEFAULT_TOKENIZER
from scoring.models import JudgePairVerdict, JudgeRecord, MetricScore, MetricSignature
from tests.correlation.builders import bump_data_version

MODEL_FILE = "5d41402abc4b2a76"  # a local model's content hash, as the signature records it


@dataclass(frozen=True)
class NoModel:
    """A judge backend that names its model and is never asked: the scores are given."""

    model_id: str
    model_hash: str
    reads: str = "logprobs"
    prefers_gpu: bool = False

    def readings(self, setup: JudgeSetup, items: Sequence[JudgeItem], progress: object) -> list[LabelReading]:
        raise AssertionError("a stored judge is never run")

    def pair_verdicts(self, setup: JudgeSetup, pairs: Sequence[Pair], progress: object) -> list[PairVerdict]:
        raise AssertionError("a stored judge is never run")


@dataclass(frozen=True)
class StoredJudge:
    definition: JudgeDefinition
    score: MetricSignature
    mass: MetricSignature


def edited(template: str, words: str) -> PromptTemplate:
    """A researcher's copy of a shipped template under the same name, with ``words`` added to its message."""
    shipped = BUILT_IN_TEMPLATES[template]
    return replace(shipped, user=f"{shipped.user}\n{words}")


def stored_judge(
    study: Study,
    question: str,
    *,
    scores: Mapping[Response, float],
    masses: Mapping[Response, float],
    template: str | PromptTemplate = "g-eval",
    model: str = "smollm2-135m",
    backend: str = BACKEND_LOCAL,
    read: str = READ_EXPECTATION,
) -> StoredJudge:
    """The judge of ``template`` on ``study``'s ``question``, asked of ``model``, with its scores and masses
    on labels stored per reply (a reply left out of ``scores`` has none, as when the judge put no
    probability on any label)."""
    asked = next(each for each in study_questions(study) if each.name == question)
    prompt = BUILT_IN_TEMPLATES[template] if isinstance(template, str) else template
    definition = JudgeDefinition(prompt, asked, backend, model, read)
    JudgeRecord.objects.get_or_create(key=definition.key(), defaults={"definition": definition.as_json()})
    _, specs = judge_family(definition, NoModel(model, MODEL_FILE if backend == BACKEND_LOCAL else ""))
    signatures = []
    for spec in specs:
        parameters = spec.signature_parameters(
            spec.parameters,
            language=study.language,
            references="single",
            tokenizer=DEFAULT_TOKENIZER,
            implementation=None,
        )
        signatures.append(
            MetricSignature.objects.get_or_create(
                text=metric_signature(spec.name, parameters),
                defaults={
                    "name": spec.name,
                    "parameters": parameters,
                    "artifact_hash": parameters.get("artifact", ""),
                    "version": parameters["version"],
                },
            )[0]
        )
    score, mass = signatures
    MetricScore.objects.bulk_create(
        [MetricScore(response=reply, signature=score, value=value) for reply, value in scores.items()]
        + [MetricScore(response=reply, signature=mass, value=value) for reply, value in masses.items()]
    )
    bump_data_version(study)
    return StoredJudge(definition, score, mass)


# the judge's probabilities (first better, second better, tie) behind each verdict
_PROBABILITIES = {"first": (0.7, 0.2, 0.1), "second": (0.2, 0.7, 0.1), "tie": (0.2, 0.2, 0.6)}


def stored_pairwise_judge(
    study: Study,
    verdicts: Sequence[tuple[Response, Response, str, float]],
    *,
    model: str = "smollm2-135m",
) -> MetricSignature:
    """The shipped pairwise judge of ``study`` asked of ``model``, with its verdicts stored: (one reply, the
    other, "first"/"second"/"tie" for the lower id's reply better/the other/a tie, the position bias); a
    pair is consistent unless its verdict is a tie. Returns the verdicts' signature."""
    definition = JudgeDefinition(
        BUILT_IN_TEMPLATES["pairwise"], pairwise_question(study.pairwise_prompt), BACKEND_LOCAL, model
    )
    JudgeRecord.objects.get_or_create(key=definition.key(), defaults={"definition": definition.as_json()})
    name = pairwise_judge_name(definition)
    parameters = pairwise_signature_parameters(
        definition, model_id=model, reads="logprobs", model_hash=MODEL_FILE
    )
    signature, _ = MetricSignature.objects.get_or_create(
        text=metric_signature(name, parameters),
        defaults={"name": name, "parameters": parameters, "artifact_hash": MODEL_FILE, "version": "1"},
    )
    rows = []
    for one, other, verdict, bias in verdicts:
        assert one.pk < other.pk, "a pair is stored with the lower id first"
        first, second, tie = _PROBABILITIES[verdict]
        rows.append(
            JudgePairVerdict(
                signature=signature,
                response_a=one,
                response_b=other,
                first_better=first,
                second_better=second,
                tie=tie,
                verdict=verdict,
                position_bias=bias,
                consistent=verdict != "tie",
                mass_first=0.9,
                mass_second=0.9,
            )
        )
    JudgePairVerdict.objects.bulk_create(rows)
    bump_data_version(study)
    return signature

"""A judge definition as a metric family of the engine: its score and the mass on valid labels, per item.

The backends are given by the caller (the app builds them from the operator's settings); this module only
turns readings into the engine's metric values (a pairwise judge's verdicts, :meth:`JudgeBackend.pair_verdicts`,
are stored per pair by the app instead). The family reads every context turn, and the references
when the template shows them (items without references show ``(none)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from scoring.metrics.contextual_encoder import heartbeat
from scoring.metrics.inputs import MetricInputs
from scoring.metrics.llm_judge.definition import JUDGE_VERSION, JudgeDefinition
from scoring.metrics.llm_judge.judging import JudgeSetup, local_readings, score_of, server_readings
from scoring.metrics.llm_judge.local_model import local_judge_model, model_content_hash
from scoring.metrics.llm_judge.pairwise import Pair, PairVerdict, local_pair_verdicts, server_pair_verdicts
from scoring.metrics.llm_judge.prompts import JudgeItem
from scoring.metrics.llm_judge.scale import LabelReading
from scoring.metrics.llm_judge.server_client import ServerJudge
from scoring.metrics.spec import MetricFamily, MetricSpec, family_member_compute

NO_LABEL = "the judge put no probability on any label of the scale (see its mass on labels)"


class JudgeBackend(Protocol):
    """Where a judge's readings come from: ``model_id`` and ``model_hash`` (a local model's content hash,
    "" for a server) and ``reads`` (``logprobs`` or ``parsed``) go into the signature."""

    @property
    def model_id(self) -> str: ...

    @property
    def model_hash(self) -> str: ...

    @property
    def reads(self) -> str: ...

    @property
    def prefers_gpu(self) -> bool: ...

    def readings(
        self, setup: JudgeSetup, items: Sequence[JudgeItem], progress: Callable[[int], None] | None
    ) -> list[LabelReading]: ...

    def pair_verdicts(
        self, setup: JudgeSetup, pairs: Sequence[Pair], progress: Callable[[int], None] | None
    ) -> list[PairVerdict]: ...


@dataclass
class LocalBackend:
    """The in-process model at ``path`` (loaded on first use, once per process), on ``device``."""

    name: str
    path: Path
    device: str = "cpu"
    batch_size: int = 8
    prefix_cache: bool = True
    reads: str = "logprobs"
    prefers_gpu: bool = True
    converted_dir: Path | None = None  # where a GGUF file's converted copy is kept (local_model)

    @property
    def model_id(self) -> str:
        return self.name

    @property
    def model_hash(self) -> str:
        return model_content_hash(self.path)[:16]

    def readings(
        self, setup: JudgeSetup, items: Sequence[JudgeItem], progress: Callable[[int], None] | None
    ) -> list[LabelReading]:
        model = local_judge_model(self.path, device=self.device, converted_dir=self.converted_dir)
        return local_readings(
            model, setup, items, batch_size=self.batch_size, prefix_cache=self.prefix_cache, progress=progress
        )

    def pair_verdicts(
        self, setup: JudgeSetup, pairs: Sequence[Pair], progress: Callable[[int], None] | None
    ) -> list[PairVerdict]:
        model = local_judge_model(self.path, device=self.device, converted_dir=self.converted_dir)
        return local_pair_verdicts(
            model,
            setup.template,
            setup.question,
            pairs,
            batch_size=self.batch_size,
            prefix_cache=self.prefix_cache,
            progress=progress,
        )


class ServerBackend:
    """An operator's endpoint, through a :class:`ServerJudge` (cache, retries, concurrency)."""

    prefers_gpu = False
    model_hash = ""

    def __init__(self, judge: ServerJudge) -> None:
        self.judge = judge
        self.model_id = judge.endpoint.model
        self.reads = judge.endpoint.reads

    def readings(
        self, setup: JudgeSetup, items: Sequence[JudgeItem], progress: Callable[[int], None] | None
    ) -> list[LabelReading]:
        return server_readings(self.judge, setup, items, progress=progress)

    def pair_verdicts(
        self, setup: JudgeSetup, pairs: Sequence[Pair], progress: Callable[[int], None] | None
    ) -> list[PairVerdict]:
        return server_pair_verdicts(self.judge, setup.template, setup.question, pairs, progress=progress)


def judge_items(inputs: MetricInputs) -> list[JudgeItem]:
    """The items of an engine call as a judge reads them."""
    return [
        JudgeItem(context=tuple(turns), reply=reply, references=tuple(references))
        for turns, reply, references in zip(
            inputs.context_turns, inputs.hypotheses, inputs.references, strict=True
        )
    ]


def judge_family(definition: JudgeDefinition, backend: JudgeBackend) -> tuple[MetricFamily, list[MetricSpec]]:
    """The family ``llm-judge:<key>`` computing the judge's score and ``llm-judge-mass:<key>``."""
    setup = JudgeSetup(definition.template, definition.question)
    score_name, mass_name = definition.metric_name, definition.mass_name

    def compute(
        names: Sequence[str], inputs: MetricInputs, params: Mapping[str, str]
    ) -> dict[str, list[float | None]]:
        items = judge_items(inputs)
        readings = backend.readings(setup, items, lambda done: heartbeat()) if items else []
        values: dict[str, list[float | None]] = {}
        if score_name in names:
            values[score_name] = [score_of(result, definition.read) for result in readings]
        if mass_name in names:
            values[mass_name] = [result.mass for result in readings]
        return values

    family = MetricFamily(name=score_name, compute=compute)
    parameters = definition.signature_parameters(model_id=backend.model_id, reads=backend.reads)
    common = {
        "needs_references": False,
        "version": JUDGE_VERSION,
        "family": score_name,
        "uses_tokenizer": False,
        "prefers_gpu": backend.prefers_gpu,
        "artifact_hash": backend.model_hash,
        "reads_context": True,
        "one_pass": True,  # every item of a call at once: batches (or requests in parallel) beat the heartbeat
    }
    question = definition.question
    score = MetricSpec(
        name=score_name,
        description=(
            f"LLM judge ({definition.template.name}, {backend.model_id}) of {question.name} on "
            f"{question.scale.code}, {definition.read} over the labels"
        ),
        compute=family_member_compute(compute, score_name),
        parameters=parameters,
        undefined_when=NO_LABEL,
        **common,  # type: ignore[arg-type]
    )
    mass = MetricSpec(
        name=mass_name,
        description=f"probability the judge {score_name} put on the labels of the scale (0 to 1)",
        compute=family_member_compute(compute, mass_name),
        parameters=parameters,
        **common,  # type: ignore[arg-type]
    )
    return family, [score, mass]

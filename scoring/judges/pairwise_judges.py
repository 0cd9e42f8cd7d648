"""Pairwise judges in the app: ``llm-pairwise:<key>`` names a stored definition with a pairwise template
(``JudgeRecord``), run on the backend the operator configured for it. Scoring runs ask for them beside
their metrics; their verdicts are computed per pair of replies (scoring/services/pairwise_chunks.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoring.judges.backends import judge_backend
from scoring.metrics.llm_judge.definition import JudgeDefinition
from scoring.metrics.llm_judge.pairwise import pairwise_signature_parameters
from scoring.metrics.llm_judge.specs import JudgeBackend
from scoring.models import JudgeRecord
from stats.judge_names import pairwise_judge_key


class PairwiseJudgeError(ValueError):
    """A pairwise judge's name that names no stored pairwise judge."""


@dataclass(frozen=True)
class PairwiseJudge:
    """A pairwise judge as a run computes it: its name, definition and backend."""

    name: str
    definition: JudgeDefinition
    backend: JudgeBackend

    def signature_parameters(self) -> dict[str, str]:
        return pairwise_signature_parameters(
            self.definition,
            model_id=self.backend.model_id,
            reads=self.backend.reads,
            model_hash=self.backend.model_hash,
        )


def pairwise_judge(name: str) -> PairwiseJudge:
    """The pairwise judge ``name``; a PairwiseJudgeError when no such judge was asked for, a
    ``JudgeUnavailableError`` when its model or endpoint is not configured here."""
    key = pairwise_judge_key(name)
    record = JudgeRecord.objects.filter(key=key).only("definition").first() if key else None
    if record is None:
        raise PairwiseJudgeError(
            f"{name!r} names no pairwise judge: ask for one with a pairwise template first "
            "(manage.py score_study STUDY --judge pairwise)"
        )
    definition = JudgeDefinition.from_json(record.definition)
    if not definition.template.pairwise:
        raise PairwiseJudgeError(
            f"{name!r}: the judge {key} asks the rating template {definition.template.name!r}, not a "
            f"pairwise one (its metric is llm-judge:{key})"
        )
    return PairwiseJudge(name, definition, judge_backend(definition))


def pairwise_judges_check(names: Sequence[str]) -> None:
    """Each of ``names`` a pairwise judge this installation can run (the errors of :func:`pairwise_judge`)."""
    for name in names:
        pairwise_judge(name)

"""The metric engine's resolver for judges: ``llm-judge:<key>`` and ``llm-judge-mass:<key>`` become a metric
family from the stored definition (``JudgeRecord``) and the backend the operator configured for it."""

from __future__ import annotations

from scoring.judges.backends import judge_backend
from scoring.metrics.llm_judge.definition import JudgeDefinition
from scoring.metrics.llm_judge.specs import judge_family
from scoring.metrics.spec import MetricFamily, MetricSpec
from scoring.models import JudgeRecord
from stats.judge_names import judge_key


def resolve_judge(name: str) -> tuple[MetricFamily, list[MetricSpec]] | None:
    """The family of the judge ``name`` names, None when no run asked for such a judge; a
    ``JudgeUnavailableError`` when its model or endpoint is not configured here."""
    key = judge_key(name)
    if key is None:
        return None
    record = JudgeRecord.objects.filter(key=key).only("definition").first()
    if record is None:
        return None
    definition = JudgeDefinition.from_json(record.definition)
    return judge_family(definition, judge_backend(definition))

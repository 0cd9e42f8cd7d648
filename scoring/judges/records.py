"""The judges runs asked for, in words: ``llm-judge:<key>`` is "g-eval on appropriateness (smollm2-135m,
local, expectation)" on the study page, read from the stored definitions (``JudgeRecord``)."""

from __future__ import annotations

from collections.abc import Iterable

from scoring.models import JudgeRecord, ScoringRun
from stats.judge_names import is_judge, judge_key, pairwise_judge_key


def _key(name: str) -> str | None:
    """The definition key of a judge's score or of a pairwise judge (not of a mass on labels)."""
    return judge_key(name) if is_judge(name) else pairwise_judge_key(name)


def judge_description(definition: dict[str, object]) -> str:
    template = definition.get("template")
    question = definition.get("question")
    template_name = template.get("name", "?") if isinstance(template, dict) else "?"
    question_name = question.get("name", "?") if isinstance(question, dict) else "?"
    where = f"{definition.get('model', '?')}, {definition.get('backend', '?')}, {definition.get('read', '?')}"
    return f"{template_name} on {question_name} ({where})"


def judges_of_runs(runs: Iterable[ScoringRun]) -> dict[int, list[tuple[str, str]]]:
    """For each run asking for judges: (metric name, description) of each judge, in one query."""
    asked = {run.pk: [name for name in run.metrics if _key(str(name)) is not None] for run in runs}
    keys = {key for names in asked.values() for name in names if (key := _key(name)) is not None}
    if not keys:
        return {}
    described = {
        key: judge_description(definition)
        for key, definition in JudgeRecord.objects.filter(key__in=keys).values_list("key", "definition")
    }
    return {
        pk: [(name, described.get(_key(name) or "", "an unknown judge")) for name in names]
        for pk, names in asked.items()
        if names
    }

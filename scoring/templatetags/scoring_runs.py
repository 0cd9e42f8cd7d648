"""What each scoring run on the study page covers, in replies and metrics ("300 replies × 2 metrics"),
beside its progress in scores (reply x metric): ``{% run_summaries study runs as summaries %}``, then
``summaries|summary_for:run.pk``. One count query for all the runs shown. Likewise what the LLM judges of
each run cost, ``{% run_judge_usages runs as usages %}``, and its judges in words, ``{% run_judges runs as
judges %}``, each read with ``summary_for`` (one query each)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template

from annotation.models import Study
from scoring.judges.records import judges_of_runs
from scoring.judges.usage import JudgeUsage, has_judges, judge_usage_for_runs
from scoring.models import ScoringRun
from scoring.selectors import RunSummary, scoring_run_summaries

register = template.Library()


@register.simple_tag
def run_summaries(study: Study, runs: Iterable[ScoringRun]) -> dict[int, RunSummary]:
    return scoring_run_summaries(study=study, runs=runs)


@register.simple_tag
def run_judge_usages(runs: Iterable[ScoringRun]) -> dict[int, JudgeUsage]:
    """The usage of each run that asks for an LLM judge."""
    judged = [run.pk for run in runs if has_judges(run.metrics)]
    return judge_usage_for_runs(run_ids=judged) if judged else {}


@register.simple_tag
def run_judges(runs: Iterable[ScoringRun]) -> dict[int, list[tuple[str, str]]]:
    """Each judge of each run, in words (metric name, description)."""
    return judges_of_runs(runs)


@register.filter
def summary_for(summaries: dict[int, Any], run_id: int) -> Any:
    return summaries.get(int(run_id))

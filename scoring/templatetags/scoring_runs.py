"""What each scoring run on the study page covers, in replies and metrics ("300 replies × 2 metrics"),
beside its progress in scores (reply x metric): ``{% run_summaries study runs as summaries %}``, then
``summaries|summary_for:run.pk``. One count query for all the runs shown."""

from __future__ import annotations

from collections.abc import Iterable

from django import template

from annotation.models import Study
from scoring.models import ScoringRun
from scoring.selectors import RunSummary, scoring_run_summaries

register = template.Library()


@register.simple_tag
def run_summaries(study: Study, runs: Iterable[ScoringRun]) -> dict[int, RunSummary]:
    return scoring_run_summaries(study=study, runs=runs)


@register.filter
def summary_for(summaries: dict[int, RunSummary], run_id: int) -> RunSummary | None:
    return summaries.get(int(run_id))

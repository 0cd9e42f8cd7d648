"""Template tags of the training pages and of the study page's training section: what a waiting
run and a training job say about where they stand, and sizes in readable units."""

from __future__ import annotations

from typing import Any

from django import template

from scoring.models import ScoringRun, TrainingJob
from scoring.selectors import scoring_run_waiting_text, training_job_progress_text

register = template.Library()


@register.simple_tag
def scoring_run_waiting(run: ScoringRun) -> str:
    """``{% scoring_run_waiting run %}``: "waiting for model X, epoch 3/10" (or "")."""
    return scoring_run_waiting_text(run=run)


@register.simple_tag
def training_status(job: TrainingJob) -> str:
    """``{% training_status job %}``: "epoch 3/10", "waiting for a worker", "trained"..."""
    return training_job_progress_text(job=job)


@register.filter
def megabytes(size: int | None) -> str:
    """Bytes as "12.3 MB" ("-" when unknown)."""
    if size is None:
        return "-"
    return f"{size / 1_000_000:.1f} MB"


@register.filter
def parameter_text(value: Any) -> str:
    """A job parameter as text: a list of names joined by commas."""
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    return str(value)

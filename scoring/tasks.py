"""Celery tasks for scoring: thin wrappers that take ids and call a service (scoring.services)."""

from __future__ import annotations

import logging
from typing import Any

from celery import Task, shared_task
from celery.signals import worker_ready

from scoring.models import RunStatus, ScoringRun
from scoring.services import scoring_run_execute, scoring_run_takeover_delay, scoring_runs_recover

logger = logging.getLogger(__name__)

# A duplicate delivery that finds its run held by a live worker checks back once the heartbeat would be
# stale; this many checks cover a run of more than a day at the default 300 s staleness.
_MAX_TAKEOVER_CHECKS = 300


@shared_task(
    name="scoring.execute_run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=_MAX_TAKEOVER_CHECKS,
)
def scoring_run_execute_task(self: Task, run_id: int) -> None:
    """Execute scoring run ``run_id`` (queued on "cpu", or "gpu" by scoring.services.scoring_run_queue).

    When the run is still RUNNING afterwards another worker holds it, e.g. this message was redelivered
    after a pool process died mid-run while the run's heartbeat is still fresh: come back when it would be
    stale, so that the run is taken over if its worker is really gone, and nothing happens if it finished.
    """
    try:
        run = scoring_run_execute(run_id=run_id)
    except ScoringRun.DoesNotExist:
        logger.warning("scoring run %s no longer exists; nothing to do", run_id)
        return
    if run.status == RunStatus.RUNNING:
        delay = scoring_run_takeover_delay(run=run) + 1.0
        logger.info("scoring run %s is held by another worker; checking again in %.0f s", run_id, delay)
        raise self.retry(countdown=delay)


@worker_ready.connect
def scoring_runs_recover_on_worker_start(**kwargs: Any) -> None:
    """A starting worker picks up runs whose task message was lost (e.g. a broker restarted empty)."""
    try:
        scoring_runs_recover()
    except Exception:  # never keep a worker from starting; the runs can be recovered by hand
        logger.exception("could not recover orphaned scoring runs")

"""Finishing a scoring run once every chunk is done: timings, undefined values and failures summed into
the run's notes; and what a run computes, counted from its chunks."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import F
from django.utils import timezone

from kernel.data_version import study_data_changed
from scoring.metrics.registry import (
    undefined_reason,
)
from scoring.models import (
    ChunkKind,
    ChunkStatus,
    RunStatus,
    ScoringChunk,
    ScoringRun,
)
from scoring.selectors import scoring_run_metrics_without_values
from scoring.services.chunk_storage import MAX_FAILURES_KEPT

logger = logging.getLogger(__name__)


def scoring_run_advance(*, run_id: int) -> bool:
    """Finish the run if every chunk is done; return whether it finished now."""
    if ScoringChunk.objects.filter(run_id=run_id).exclude(status=ChunkStatus.DONE).exists():
        return False
    run = ScoringRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).first()
    if run is None:
        return False
    chunks = list(
        ScoringChunk.objects.filter(run_id=run_id).only("kind", "seconds", "undefined", "failures", "metrics")
    )
    timings: dict[str, float] = dict.fromkeys(run.metrics, 0.0)
    undefined: dict[str, int] = {}
    failures: list[dict[str, Any]] = []
    for chunk in chunks:
        for name, seconds in chunk.seconds.items():
            timings[name] = timings.get(name, 0.0) + float(seconds)
        for name, count in chunk.undefined.items():
            undefined[name] = undefined.get(name, 0) + int(count)
        failures.extend(chunk.failures)
    notes = [run.notes] if run.notes else []
    for name, count in undefined.items():
        notes.append(_undefined_note(name, count, chunks))
    if failures:
        replies = len({failure["response_id"] for failure in failures})
        notes.append(
            f"{len(failures)} score(s) could not be computed, on {replies} reply(ies): see the failures"
        )
    now = timezone.now()
    finished = ScoringRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
        status=RunStatus.SUCCEEDED,
        finished_at=now,
        heartbeat_at=now,
        progress_done=F("progress_total"),
        timings=timings,
        failures=failures[:MAX_FAILURES_KEPT],
        notes="\n".join(notes),
    )
    if finished:
        logger.info("scoring run %s succeeded (%d chunk(s))", run_id, len(chunks))
        if scoring_run_metrics_without_values(run=run):  # the report lists them, with the reason
            study_data_changed(study_id=run.study_id)
    return bool(finished)


@dataclass(frozen=True)
class ScoreCount:
    """``items`` replies (or systems) x ``metrics``: one group of a run's scores."""

    items: int
    unit: str  # "reply", "system", "(system, context) pair" or "pair" (of replies, a pairwise judge's)
    metrics: tuple[str, ...]

    @property
    def scores(self) -> int:
        return self.items * len(self.metrics)


_UNITS: dict[str, str] = {
    ChunkKind.SYSTEMS: "system",
    ChunkKind.DIVERSITY: "(system, context) pair",
    ChunkKind.PAIRWISE: "pair",
}


def scoring_run_score_counts(*, run_id: int) -> list[ScoreCount]:
    """What run ``run_id`` computes, from its chunks: metrics that score the same number of replies (or, for
    system-level metrics, systems) grouped together, in the run's metric order. The groups' scores add up to
    the run's ``progress_total``. A metric of a family counts once per reply, not once per chunk or member.
    """
    run = ScoringRun.objects.only("metrics").get(pk=run_id)
    counts: dict[tuple[str, str], int] = {}
    for kind, metrics, units in ScoringChunk.objects.filter(run_id=run_id).values_list(
        "kind", "metrics", "units"
    ):
        unit = _UNITS.get(kind, "reply")
        for name in metrics:  # a chunk's units are its items x its metrics
            counts[(unit, name)] = counts.get((unit, name), 0) + units // max(1, len(metrics))
    order = {name: index for index, name in enumerate(run.metrics)}
    groups: dict[tuple[str, int], list[str]] = {}
    for (unit, name), items in sorted(counts.items(), key=lambda entry: order.get(entry[0][1], len(order))):
        groups.setdefault((unit, items), []).append(name)
    return [ScoreCount(items, unit, tuple(names)) for (unit, items), names in groups.items()]


def _undefined_note(name: str, count: int, chunks: Sequence[ScoringChunk]) -> str:
    kinds = {chunk.kind for chunk in chunks if name in chunk.metrics}
    if ChunkKind.PAIRWISE in kinds:
        return f"{name} has no verdict on {count} pair(s): {PAIRWISE_UNDEFINED}"
    what = "system(s)" if ChunkKind.SYSTEMS in kinds else "response(s)"
    return f"{name} has no value for {count} {what}: {undefined_reason(name)}"


PAIRWISE_UNDEFINED = "the judge put no probability on A, B or C in one of the orders (see its masses)"

"""Storing what a chunk computed: its scores and its DONE mark in one transaction, fenced by its attempt.

Transactions are short (SQLite-safe, the same code on PostgreSQL): a chunk computes outside any
transaction and stores its rows together with its DONE mark, only while its attempt still owns it; no
cursor is held across commits, so volunteers can rate while workers score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from kernel.data_version import study_data_changed
from scoring.judge_models import PAIR_VERDICT_VALUES
from scoring.models import (
    ChunkStatus,
    ContextSystemScore,
    JudgePairVerdict,
    MetricScore,
    PerReferenceScore,
    ScoringRun,
    SystemMetricScore,
)
from scoring.services.chunk_claims import ChunkLostError, ClaimedChunk, of_a_running_run
from scoring.services.chunk_reads import bind_parameter_limit

MAX_FAILURES_KEPT = 200  # per run: enough to see the pattern, bounded for the page and the row


@dataclass
class ChunkOutcome:
    score_rows: list[tuple[int, int, float]] = field(default_factory=list)  # (response, signature, value)
    system_rows: list[SystemMetricScore] = field(default_factory=list)
    per_reference_rows: list[PerReferenceScore] = field(default_factory=list)  # the report's: no data bump
    context_rows: list[ContextSystemScore] = field(default_factory=list)  # the report's: no data bump
    pair_verdicts: list[JudgePairVerdict] = field(default_factory=list)  # a pairwise judge's, per pair
    seconds: dict[str, float] = field(default_factory=dict)
    undefined: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)


UPSERT_ROWS = 2000  # rows per statement: 8,000 parameters, well under PostgreSQL's 65,535


def upsert_scores(rows: Sequence[tuple[int, int, float]], *, now: Any) -> None:
    """Insert or update (response, signature, value) rows with one multi-row ``INSERT ... VALUES (...), (...)
    ... ON CONFLICT ... DO UPDATE`` per batch of rows: the same statement on SQLite and PostgreSQL, without
    a model instance per score. One statement per batch rather than one per row (``executemany``) costs
    SQLite less CPU per score and saves PostgreSQL a round trip per row (the whole write path is timed by
    ``python -m bench.baseline_suite``)."""
    if not rows:
        return
    table = connection.ops.quote_name(MetricScore._meta.db_table)
    computed_at = connection.ops.adapt_datetimefield_value(now)
    per_statement = min(UPSERT_ROWS, bind_parameter_limit() // 4)
    with connection.cursor() as cursor:
        for start in range(0, len(rows), per_statement):
            part = rows[start : start + per_statement]
            parameters: list[Any] = []
            for response_id, signature_id, value in part:
                parameters += (response_id, signature_id, value, computed_at)
            cursor.execute(
                f"INSERT INTO {table} (response_id, signature_id, value, computed_at) VALUES "
                + ", ".join(["(%s, %s, %s, %s)"] * len(part))
                + " ON CONFLICT (response_id, signature_id) DO UPDATE SET value = EXCLUDED.value, "
                "computed_at = EXCLUDED.computed_at",
                parameters,
            )


def chunk_store(claimed: ClaimedChunk, run: ScoringRun, outcome: ChunkOutcome) -> None:
    """The chunk's scores and its DONE mark in one transaction, only while this attempt owns the chunk."""
    chunk = claimed.chunk
    now = timezone.now()
    with transaction.atomic():
        owned = claimed.lease.write(
            where=of_a_running_run(),
            status=ChunkStatus.DONE,
            units_done=F("units"),
            heartbeat_at=now,
            finished_at=now,
            seconds=outcome.seconds,
            undefined=outcome.undefined,
            failures=outcome.failures[:MAX_FAILURES_KEPT],
            error="",
        )
        if not owned:
            raise ChunkLostError
        if outcome.score_rows:
            upsert_scores(outcome.score_rows, now=now)
        if outcome.system_rows:
            SystemMetricScore.objects.bulk_create(
                outcome.system_rows,
                update_conflicts=True,
                unique_fields=["system", "signature"],
                update_fields=["value", "items", "computed_at"],
            )
        # Values derived from the study's data, which a report reads: they change no report input, so they
        # bump no data version (a bump would make the report that asked for them stale at once).
        if outcome.per_reference_rows:
            PerReferenceScore.objects.bulk_create(
                outcome.per_reference_rows,
                update_conflicts=True,
                unique_fields=["signature", "response"],
                update_fields=["references_key", "values", "computed_at"],
                batch_size=1000,
            )
        if outcome.context_rows:
            ContextSystemScore.objects.bulk_create(
                outcome.context_rows,
                update_conflicts=True,
                unique_fields=["signature", "system", "context"],
                update_fields=["inputs_key", "value", "computed_at"],
                batch_size=1000,
            )
        if outcome.pair_verdicts:
            JudgePairVerdict.objects.bulk_create(
                outcome.pair_verdicts,
                update_conflicts=True,
                unique_fields=["signature", "response_a", "response_b"],
                update_fields=[*PAIR_VERDICT_VALUES, "computed_at"],
                batch_size=1000,
            )
        ScoringRun.objects.filter(pk=run.pk).update(
            progress_done=F("progress_done") + chunk.units, heartbeat_at=now
        )
        # a report read mid-run is not served after this chunk
        if outcome.score_rows or outcome.system_rows or outcome.pair_verdicts:
            study_data_changed(study_id=run.study_id)


def failure_record(metric: str, response_id: int, error: str) -> dict[str, Any]:
    return {"metric": metric, "response_id": response_id, "error": error[:500]}

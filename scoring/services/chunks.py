"""Computing a run chunk by chunk: claim, heartbeat, compute, store, and finish the run.

The healthchecks pattern, per chunk: a chunk is held by a lease (kernel/lease.py, :data:`CHUNK_LEASE`):
claimed with a conditional UPDATE (PENDING, or RUNNING with a heartbeat older than
``settings.DIALEVAL_RUN_STALE_SECONDS``: its worker died) that bumps ``attempts``, the fencing token: every
later write of the attempt is conditional on it, so a worker that lost its chunk (taken over, or the run
cancelled) stops instead of writing. Heartbeats are written from inside the metric call
(the metric core's progress callback), so a long model call is not mistaken for a dead worker.

Transactions are short (SQLite-safe, the same code on PostgreSQL): a chunk reads its replies in one query,
computes outside any transaction, and stores its scores together with its DONE mark in one transaction; no
cursor is held across commits, so volunteers can rate while workers score.

Failures:
- a metric that raises on some replies: the chunk is computed again reply by reply, the failing replies are
  recorded (metric, reply, error) in the chunk's and then the run's ``failures``, and the rest is stored;
- a metric that raises on every reply of a chunk (a missing model, a bug): the chunk and the run FAIL with
  the error and the first reply that caused it; the run's other chunks are cancelled;
- a worker that dies (killed, out of memory, over the hard time limit): the chunk is taken over once stale,
  at most ``settings.DIALEVAL_SCORING_MAX_ATTEMPTS`` times; then the run FAILS saying so.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Prefetch, Q
from django.utils import timezone

from annotation.models import DialogContext, Reference, Response, System
from kernel.data_version import study_data_changed
from kernel.lease import Lease, LeaseLost, LeaseTerms, lease_claim, lease_give_up
from scoring.metrics.registry import (
    combine_metric,
    compute_metrics,
    compute_system_metric,
    metric_spec,
    options_for,
    undefined_reason,
)
from scoring.metrics.system_specs import ContextOutputs
from scoring.models import (
    ChunkKind,
    ChunkStatus,
    ContextSystemScore,
    MetricScore,
    MetricSignature,
    PerReferenceScore,
    RunStatus,
    ScoringChunk,
    ScoringRun,
    SystemMetricScore,
)
from scoring.selectors import scoring_run_metrics_without_values
from scoring.services.errors import error_summary, error_text
from scoring.services.planning import metric_families
from scoring.services.references_policy import references_for_mode
from scoring.services.report_chunks import diversity_chunk_rows, per_reference_chunk_rows
from scoring.services.run_vectors import run_vectors
from scoring.trained_model_services import run_model_paths

logger = logging.getLogger(__name__)

_MAX_FAILURES_KEPT = 200  # per run: enough to see the pattern, bounded for the page and the row

ProgressCallback = Callable[[int, int], None]  # (scores done, scores in total) of the run


CHUNK_LEASE = LeaseTerms(
    model=ScoringChunk,
    running=ChunkStatus.RUNNING,
    waiting=ChunkStatus.PENDING,
    stale_seconds=lambda: float(settings.DIALEVAL_RUN_STALE_SECONDS),
    max_attempts=lambda: int(settings.DIALEVAL_SCORING_MAX_ATTEMPTS),
)


class ChunkLostError(LeaseLost):
    """This attempt no longer owns its chunk (taken over, or the run was cancelled); stop without writing."""


class ChunkComputeError(Exception):
    """A metric failed on every reply of a chunk; ``response_id`` is the first reply that failed."""

    def __init__(self, message: str, *, response_id: int | None = None) -> None:
        super().__init__(message)
        self.response_id = response_id


@dataclass
class ClaimedChunk:
    chunk: ScoringChunk
    attempt: int

    @property
    def lease(self) -> Lease:
        """Every write of this attempt goes through it (the fence)."""
        return Lease(CHUNK_LEASE, self.chunk.pk, self.attempt)


@dataclass
class _Outcome:
    score_rows: list[tuple[int, int, float]] = field(default_factory=list)  # (response, signature, value)
    system_rows: list[SystemMetricScore] = field(default_factory=list)
    per_reference_rows: list[PerReferenceScore] = field(default_factory=list)  # the report's: no data bump
    context_rows: list[ContextSystemScore] = field(default_factory=list)  # the report's: no data bump
    seconds: dict[str, float] = field(default_factory=dict)
    undefined: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)


def stale_before() -> Any:
    return CHUNK_LEASE.stale_before()


def claimable_q() -> Q:
    """Chunks a worker may take: waiting, or running under a worker whose heartbeat went stale."""
    return CHUNK_LEASE.claimable()


def chunk_claim_next(*, run_id: int, queue: str | None) -> ClaimedChunk | None:
    """Claim the next chunk of run ``run_id`` on ``queue`` (any queue when None); None when there is none.

    Stage-1 chunks (blends) wait until every stage-0 chunk is done. A stale chunk that already used every
    attempt is failed here (and the run with it) instead of being claimed again.
    """
    chunks = ScoringChunk.objects.filter(run_id=run_id, run__status=RunStatus.RUNNING)
    if queue is not None:
        chunks = chunks.filter(queue=queue)
    # The candidates as plain values, not their reply lists and results (a replies chunk lists up to 512
    # ids: reading 50 of them per claim cost more than some metrics), in one query that also checks that
    # the run is running; the claimed chunk is read whole below.
    candidates = chunks.filter(claimable_q()).order_by("stage", "index")
    for pk, stage, attempts in candidates.values_list("pk", "stage", "attempts")[:50]:
        if stage > 0 and _stage_zero_open(run_id):  # stage-0 candidates come first: asked at most once
            return None
        if CHUNK_LEASE.exhausted(attempts):
            chunk_fail_exhausted(chunk=ScoringChunk.objects.get(pk=pk))
            return None
        lease = lease_claim(
            CHUNK_LEASE,
            pk,
            attempts=attempts,
            where=Q(run__status=RunStatus.RUNNING),
            started_at=timezone.now(),
            units_done=0,
        )
        if lease is not None:
            chunk = ScoringChunk.objects.get(pk=pk)  # every field, as claimed
            return ClaimedChunk(chunk=chunk, attempt=lease.attempt)
    return None


@dataclass(frozen=True)
class RunChunksState:
    """Where a run's chunks stand, read in one grouped query (what a worker asks after every chunk)."""

    open: bool  # some chunk is not done yet
    claimable_queues: list[str]  # queues with a chunk a worker could claim now (stage 1 once stage 0 is done)


def run_chunks_state(*, run_id: int) -> RunChunksState:
    """The run's chunks that are not done, grouped by stage and queue, with how many of each are claimable."""
    groups = list(
        ScoringChunk.objects.filter(run_id=run_id)
        .exclude(status=ChunkStatus.DONE)
        .values("stage", "queue")
        .annotate(claimable=Count("id", filter=claimable_q()))
        .order_by()
    )
    stage_zero_open = any(group["stage"] == 0 for group in groups)
    queues = {
        group["queue"]
        for group in groups
        if group["claimable"] and (group["stage"] == 0 or not stage_zero_open)
    }
    return RunChunksState(open=bool(groups), claimable_queues=sorted(queues))


def _stage_zero_open(run_id: int) -> bool:
    """Whether some stage-0 chunk of the run is not done yet (stage-1 chunks wait for them)."""
    return ScoringChunk.objects.filter(run_id=run_id, stage=0).exclude(status=ChunkStatus.DONE).exists()


def chunk_execute(*, claimed: ClaimedChunk, progress: Callable[[int], None] | None = None) -> None:
    """Compute and store a claimed chunk; a deterministic error fails the chunk and its run.

    Raises :class:`ChunkLostError` when the chunk was taken over or cancelled meanwhile (nothing stored),
    and lets ``SoftTimeLimitExceeded`` through (the caller releases the chunk for another attempt).
    ``progress`` gets the chunk's units done at each heartbeat (a report waiting for the run shows them).
    """
    chunk = claimed.chunk
    fence = _Fence(chunk=chunk, attempt=claimed.attempt, progress=progress)
    run = ScoringRun.objects.select_related("study").get(pk=chunk.run_id)
    try:
        if chunk.kind == ChunkKind.REPLIES:
            outcome = _compute_replies(chunk, run, fence)
        elif chunk.kind == ChunkKind.SYSTEMS:
            outcome = _compute_systems(chunk, run)
        elif chunk.kind == ChunkKind.PER_REFERENCE:
            outcome = _Outcome(per_reference_rows=per_reference_chunk_rows(chunk, run, fence.beat))
        elif chunk.kind == ChunkKind.DIVERSITY:
            outcome = _Outcome(context_rows=diversity_chunk_rows(chunk, run, fence.beat))
        else:
            outcome = _compute_whole_set(chunk, run)
    except (ChunkLostError, SoftTimeLimitExceeded):
        raise
    except Exception as error:
        logger.exception("chunk %s of scoring run %s failed", chunk.index, chunk.run_id)
        chunk_fail(claimed=claimed, error=error)
        return
    _store(claimed, run, outcome)


def chunk_release(*, claimed: ClaimedChunk, reason: str) -> None:
    """Give a chunk back for another attempt (e.g. over the soft time limit), keeping why in ``error``."""
    claimed.lease.release(error=reason, units_done=0)


def chunk_fail(*, claimed: ClaimedChunk, error: BaseException) -> None:
    """Fail the chunk and its run with ``error`` (one readable line first, then the traceback's tail)."""
    chunk = claimed.chunk
    response_id = getattr(error, "response_id", None)
    where = _chunk_description(chunk)
    if response_id is not None:
        where += f"; first failing reply: {_reply_description(response_id)}"
    text = error_text(error, where=where)
    now = timezone.now()
    _fail_run(
        lambda: claimed.lease.finish(ChunkStatus.FAILED, error=text, finished_at=now),
        run_id=chunk.run_id,
        run_error=text,
    )


def chunk_fail_exhausted(*, chunk: ScoringChunk) -> None:
    """Fail a stale chunk whose worker died on every allowed attempt (and its run), saying so."""
    limit = settings.DIALEVAL_SCORING_MAX_ATTEMPTS
    text = (
        f"the worker computing {_chunk_description(chunk)} stopped {chunk.attempts} time(s) without finishing "
        f"(the limit is {limit}; DIALEVAL_SCORING_MAX_ATTEMPTS): it was killed, ran out of memory "
        f"(worker_max_memory_per_child) or passed the hard time limit (DIALEVAL_CHUNK_TIME_LIMIT = "
        f"{settings.DIALEVAL_CHUNK_TIME_LIMIT} s); last heartbeat {chunk.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC"
    )
    if chunk.error:
        text += f"\n\nlast recorded error: {chunk.error}"
    now = timezone.now()
    _fail_run(
        lambda: lease_give_up(
            CHUNK_LEASE,
            chunk.pk,
            attempts=chunk.attempts,
            status=ChunkStatus.FAILED,
            error=text,
            finished_at=now,
        ),
        run_id=chunk.run_id,
        run_error=text,
    )


def scoring_run_advance(*, run_id: int) -> bool:
    """Finish the run if every chunk is done; return whether it finished now."""
    if ScoringChunk.objects.filter(run_id=run_id).exclude(status=ChunkStatus.DONE).exists():
        return False
    run = ScoringRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).first()
    if run is None:
        return False
    chunks = list(
        ScoringChunk.objects.filter(run_id=run_id).only("seconds", "undefined", "failures", "metrics")
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
        what = "system(s)" if name in _system_metric_names(chunks) else "response(s)"
        notes.append(f"{name} has no value for {count} {what}: {undefined_reason(name)}")
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
        failures=failures[:_MAX_FAILURES_KEPT],
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
    unit: str  # "reply" or "system"
    metrics: tuple[str, ...]

    @property
    def scores(self) -> int:
        return self.items * len(self.metrics)


_UNITS: dict[str, str] = {ChunkKind.SYSTEMS: "system", ChunkKind.DIVERSITY: "(system, context) pair"}


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


# --- computing ----------------------------------------------------------------------------------------


class _Fence:
    """Heartbeats of one chunk attempt, at most every few seconds; raises ChunkLostError when it lost it."""

    def __init__(
        self, *, chunk: ScoringChunk, attempt: int, progress: Callable[[int], None] | None = None
    ) -> None:
        self.lease = Lease(CHUNK_LEASE, chunk.pk, attempt)
        self.progress = progress
        self.metrics = max(1, len(chunk.metrics))  # metrics of the current family (items x metrics = units)
        self.units = chunk.units
        self.interval = min(5.0, settings.DIALEVAL_RUN_STALE_SECONDS / 4)
        self.last = time.monotonic()
        self.done_units = 0  # units of the chunk's families computed before the current one

    def beat(self, items_done: int, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        units_done = min(self.units, self.done_units + items_done * self.metrics)
        if not self.lease.write(heartbeat_at=timezone.now(), units_done=units_done):
            raise ChunkLostError
        if self.progress is not None:
            self.progress(units_done)


def _items_and_references(
    response_ids: Sequence[int], names: Sequence[str], run: ScoringRun
) -> tuple[list[_ReplyItem], list[list[str]]]:
    """The replies to score with their references for the run's mode; only those with a reference when a
    metric needs one."""
    return _with_references(_reply_items(response_ids), names, run)


def _with_references(
    items: list[_ReplyItem], names: Sequence[str], run: ScoringRun
) -> tuple[list[_ReplyItem], list[list[str]]]:
    """``items`` with their references for the run's mode; only those with a reference when one of
    ``names`` needs one."""
    # once per context: the replies of one context share the list, which lets the metrics tokenize and
    # prepare those references once
    by_context: dict[int, list[str]] = {}
    for item in items:
        if item.context_id not in by_context:
            by_context[item.context_id] = references_for_mode(item.references, run.references)
    references = [by_context[item.context_id] for item in items]
    if any(metric_spec(name).needs_references for name in names):
        kept = [index for index, refs in enumerate(references) if refs]
        items, references = [items[index] for index in kept], [references[index] for index in kept]
    return items, references


def _run_compute(
    run: ScoringRun, names: Sequence[str], items: Sequence[_ReplyItem], references: Sequence[list[str]]
) -> Callable[[Sequence[int], Callable[[int], None] | None], dict[str, list[float | None]]]:
    """Compute ``names`` for the items at some indices, as the run asks (models, tokenizer,
    implementations and their options, word vectors)."""
    models = run_model_paths(run.trained_models)
    implementations = {name: run.implementations[name] for name in names if name in run.implementations}
    params: dict[str, str] = {}
    for name in names:
        params.update(options_for(name, implementations.get(name, ""), run.options))
    vectors = run_vectors(run)

    def compute(
        indices: Sequence[int], progress: Callable[[int], None] | None
    ) -> dict[str, list[float | None]]:
        return compute_metrics(
            names,
            [items[index].text for index in indices],
            [references[index] for index in indices],
            [items[index].query for index in indices],
            run.study.language,
            params=params,
            models=models,
            tokenizer=run.tokenizer,
            progress=progress,
            contexts=[items[index].context for index in indices],
            implementations=implementations,
            vectors=vectors,
        )

    return compute


def _compute_replies(chunk: ScoringChunk, run: ScoringRun, fence: _Fence) -> _Outcome:
    """Every metric family of the chunk over its replies, read once for all of them (planning puts the
    families that score the same replies on the same queue into one chunk); each family is computed on
    its own, so a family that fails on some replies loses only its own scores for them."""
    read = _reply_items(chunk.response_ids)
    outcome = _Outcome()
    for family in metric_families(chunk.metrics):
        items, references = _with_references(read, family, run)
        if items:
            fence.metrics = len(family)
            _compute_family(chunk, run, family, items, references, fence, outcome)
        fence.done_units += len(chunk.response_ids) * len(family)
    return outcome


def _compute_family(
    chunk: ScoringChunk,
    run: ScoringRun,
    names: list[str],
    items: list[_ReplyItem],
    references: list[list[str]],
    fence: _Fence,
    outcome: _Outcome,
) -> None:
    started = time.perf_counter()
    compute = _run_compute(run, names, items, references)
    everything = list(range(len(items)))
    try:
        scores = compute(everything, fence.beat)
        ok = everything
    except (ChunkLostError, SoftTimeLimitExceeded):
        raise
    except Exception as batch_error:
        logger.warning("chunk %s of run %s: %s; retrying reply by reply", chunk.index, run.pk, batch_error)
        failed_before = len(outcome.failures)
        scores, ok = _compute_one_by_one(items, names, compute, fence, outcome)
        if not ok:
            first = outcome.failures[failed_before]
            raise ChunkComputeError(
                f"{', '.join(names)} failed on every reply of the chunk: {first['error']}",
                response_id=first["response_id"],
            ) from batch_error
    seconds = time.perf_counter() - started
    for name in names:
        signature_id = int(run.signatures[name])  # planned with the run: no query per chunk
        outcome.seconds[name] = seconds / len(names)
        for index, value in zip(ok, scores[name], strict=True):
            if value is None:  # no value for this item: nothing stored, counted in the run's notes
                outcome.undefined[name] = outcome.undefined.get(name, 0) + 1
            elif not math.isfinite(value):  # SQLite would store NaN as NULL and fail; record it instead
                outcome.failures.append(
                    _failure(name, items[index].pk, f"the metric gave the value {value!r}")
                )
            else:
                outcome.score_rows.append((items[index].pk, signature_id, float(value)))


# Plain rows (named tuples: a frozen dataclass costs several times as much to build, and a chunk builds
# one per reply and reference)
class _ReferenceRow(NamedTuple):
    pk: int
    text: str
    origin: str


class _ReplyItem(NamedTuple):
    pk: int
    text: str
    query: str
    references: list[_ReferenceRow]
    context: tuple[str, ...]  # every turn, oldest first (context-aware metrics: MaUde)
    context_id: int


def _reply_items(response_ids: Sequence[int]) -> list[_ReplyItem]:
    """The chunk's replies in its order, with their query and references, read as plain rows in two
    statements (one per slice of ids over the bind-parameter limit); deleted replies are gone.

    Plain SQL rather than the ORM: a chunk's few queries cost more than some metrics, and most of it
    was the ORM preparing each of the chunk's ids for its ``IN`` list and building rows (issue 27)."""
    responses, contexts, references_table = _table(Response), _table(DialogContext), _table(Reference)
    rows: dict[int, tuple[str, int, Any]] = {}
    for part, marks in _id_slices(response_ids):
        for pk, text, context_id, turns in _fetch(
            f"SELECT r.id, r.text, r.context_id, c.turns FROM {responses} r "
            f"INNER JOIN {contexts} c ON c.id = r.context_id WHERE r.id IN ({marks})",
            part,
        ):
            rows[pk] = (text, context_id, turns)
    references: dict[int, list[_ReferenceRow]] = {}
    found: list[tuple[int, int, str, str]] = []
    for part, marks in _id_slices(sorted({row[1] for row in rows.values()})):
        found += _fetch(
            f"SELECT context_id, id, text, origin FROM {references_table} WHERE context_id IN ({marks})", part
        )
    for context_id, pk, text, origin in sorted(found, key=lambda row: row[1]):  # by id, as the page lists
        references.setdefault(context_id, []).append(_ReferenceRow(pk, text, origin))
    items = []
    for pk in response_ids:
        if pk in rows:
            text, context_id, turns = rows[pk]
            if isinstance(turns, (str, bytes)):  # SQLite, and PostgreSQL as Django reads jsonb: JSON text
                turns = json.loads(turns)
            context = tuple(str(turn["text"]) for turn in turns or [])
            query = context[-1] if context else ""  # DialogContext.query: the last turn
            items.append(_ReplyItem(pk, text, query, references.get(context_id, []), context, context_id))
    return items


def _table(model: type[Any]) -> str:
    return str(connection.ops.quote_name(model._meta.db_table))


def _id_slices(ids: Sequence[int]) -> list[tuple[list[int], str]]:
    """``ids`` in slices that fit one statement's bind parameters, each with its ``%s, %s, ...`` marks."""
    per_statement = max(1, _bind_parameter_limit() - 10)
    slices = []
    for start in range(0, len(ids), per_statement):
        part = [int(pk) for pk in ids[start : start + per_statement]]
        slices.append((part, ", ".join(["%s"] * len(part))))
    return slices


def _fetch(sql: str, parameters: Sequence[Any]) -> list[Any]:
    with connection.cursor() as cursor:
        cursor.execute(sql, parameters)
        return list(cursor.fetchall())


_UPSERT_ROWS = 2000  # rows per statement: 8,000 parameters, well under PostgreSQL's 65,535


def _upsert_scores(rows: Sequence[tuple[int, int, float]], *, now: Any) -> None:
    """Insert or update (response, signature, value) rows with one multi-row ``INSERT ... VALUES (...), (...)
    ... ON CONFLICT ... DO UPDATE`` per batch of rows: the same statement on SQLite and PostgreSQL, without
    a model instance per score. One statement per batch rather than one per row (``executemany``) costs
    SQLite less CPU per score and saves PostgreSQL a round trip per row (the whole write path is timed by
    ``python -m bench.baseline_suite``)."""
    if not rows:
        return
    table = connection.ops.quote_name(MetricScore._meta.db_table)
    computed_at = connection.ops.adapt_datetimefield_value(now)
    per_statement = min(_UPSERT_ROWS, _bind_parameter_limit() // 4)
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


def _bind_parameter_limit() -> int:
    """How many parameters one statement may bind: SQLite's compiled-in limit (999 on old builds, 32,766 or
    more on recent ones; Django's feature flag always says 999), else PostgreSQL's 65,535."""
    if connection.vendor == "sqlite":
        import sqlite3

        connection.ensure_connection()
        raw = connection.connection
        if hasattr(raw, "getlimit"):  # Python 3.11+
            return int(raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
        return int(connection.features.max_query_params or 999)
    return int(connection.features.max_query_params or 65_535)


def _compute_one_by_one(
    items: Sequence[_ReplyItem],
    names: Sequence[str],
    compute: Callable[[Sequence[int], Callable[[int], None] | None], dict[str, list[float | None]]],
    fence: _Fence,
    outcome: _Outcome,
) -> tuple[dict[str, list[float | None]], list[int]]:
    """Each reply on its own: the scores of those that work, and a failure record for each that does not."""
    scores: dict[str, list[float | None]] = {name: [] for name in names}
    ok: list[int] = []
    for index, item in enumerate(items):
        fence.beat(index)
        try:
            one = compute([index], None)
        except (ChunkLostError, SoftTimeLimitExceeded):
            raise
        except Exception as error:
            outcome.failures.append(_failure(", ".join(names), item.pk, error_summary(error)))
            if len(outcome.failures) >= 5 and not ok:  # the first five all failed: not a per-reply problem
                return scores, ok
            continue
        ok.append(index)
        for name in names:
            scores[name].extend(one[name])
    return scores, ok


def _compute_systems(chunk: ScoringChunk, run: ScoringRun) -> _Outcome:
    """One value per system and metric, from the system's outputs grouped by context."""
    per_system: dict[int, dict[int, list[str]]] = {}
    references: dict[int, list[str]] = {}
    responses = (
        Response.objects.filter(context__study_id=run.study_id)
        .select_related("context")
        .prefetch_related(Prefetch("context__references", queryset=Reference.objects.order_by("id")))
        .order_by("context_id", "id")
    )
    for response in responses:
        per_system.setdefault(response.system_id, {}).setdefault(response.context_id, []).append(
            response.text
        )
        if response.context_id not in references:
            references[response.context_id] = references_for_mode(
                response.context.references.all(), run.references
            )
    systems = {system.pk: system for system in System.objects.filter(pk__in=per_system)}
    signatures = _signatures(run, chunk.metrics)
    outcome = _Outcome()
    for name in chunk.metrics:
        started = time.perf_counter()
        for system_id, contexts in per_system.items():
            implementation = run.implementations.get(name, "")
            score = compute_system_metric(
                name,
                [ContextOutputs(outputs, references[context_id]) for context_id, outputs in contexts.items()],
                run.study.language,
                options_for(name, implementation, run.options),
                tokenizer=run.tokenizer,
                implementation=implementation,
            )
            if score.value is None:
                outcome.undefined[name] = outcome.undefined.get(name, 0) + 1
                continue
            outcome.system_rows.append(
                SystemMetricScore(
                    system=systems[system_id],
                    signature=signatures[name],
                    value=score.value,
                    items=score.items,
                )
            )
        outcome.seconds[name] = time.perf_counter() - started
    return outcome


def _compute_whole_set(chunk: ScoringChunk, run: ScoringRun) -> _Outcome:
    """Whole-set metrics: RUBER's blends (normalised over the scored set) from the stored raw components of
    every reply of the study that has a reference, with no second model pass; and metrics whose values
    depend on every item scored together (nlg-eval's CIDEr-D: document frequencies over the contexts),
    computed in one call over every reply of the study."""
    outcome = _Outcome()
    items = list(
        Response.objects.filter(context__study_id=run.study_id, context__references__isnull=False)
        .distinct()
        .order_by("context_id", "id")
    )
    signatures = _signatures(run, chunk.metrics)
    for name in chunk.metrics:
        spec = metric_spec(name)
        started = time.perf_counter()
        if spec.combine is None:
            _compute_whole_set_metric(name, run, signatures[name], outcome)
            outcome.seconds[name] = time.perf_counter() - started
            continue
        component_ids = {component: int(run.signatures[component]) for component in spec.requires}
        stored: dict[tuple[int, int], float] = {
            (response_id, signature_id): value
            for response_id, signature_id, value in MetricScore.objects.filter(
                response__context__study_id=run.study_id, signature_id__in=component_ids.values()
            ).values_list("response_id", "signature_id", "value")
        }
        components = {
            component: [stored.get((item.pk, signature_id)) for item in items]
            for component, signature_id in component_ids.items()
        }
        values = combine_metric(name, components)
        for item, value in zip(items, values, strict=True):
            if value is None:
                outcome.undefined[name] = outcome.undefined.get(name, 0) + 1
            elif math.isfinite(value):
                outcome.score_rows.append((item.pk, signatures[name].pk, float(value)))
        outcome.seconds[name] = time.perf_counter() - started
    return outcome


def _compute_whole_set_metric(
    name: str, run: ScoringRun, signature: MetricSignature, outcome: _Outcome
) -> None:
    """One whole-set metric over every reply of the study (with a reference, when it needs one)."""
    response_ids = list(
        Response.objects.filter(context__study_id=run.study_id)
        .order_by("context_id", "id")
        .values_list("pk", flat=True)
    )
    items, references = _items_and_references(response_ids, [name], run)
    if not items:
        return
    values = _run_compute(run, [name], items, references)(range(len(items)), None)[name]
    for item, value in zip(items, values, strict=True):
        if value is None:
            outcome.undefined[name] = outcome.undefined.get(name, 0) + 1
        elif math.isfinite(value):
            outcome.score_rows.append((item.pk, signature.pk, float(value)))
        else:
            outcome.failures.append(_failure(name, item.pk, f"the metric gave the value {value!r}"))


# --- storing and failing ------------------------------------------------------------------------------


def _store(claimed: ClaimedChunk, run: ScoringRun, outcome: _Outcome) -> None:
    """The chunk's scores and its DONE mark in one transaction, only while this attempt owns the chunk."""
    chunk = claimed.chunk
    now = timezone.now()
    with transaction.atomic():
        owned = (
            claimed.lease.held()
            .filter(run__status=RunStatus.RUNNING)
            .update(
                status=ChunkStatus.DONE,
                units_done=F("units"),
                heartbeat_at=now,
                finished_at=now,
                seconds=outcome.seconds,
                undefined=outcome.undefined,
                failures=outcome.failures[:_MAX_FAILURES_KEPT],
                error="",
            )
        )
        if not owned:
            raise ChunkLostError
        if outcome.score_rows:
            _upsert_scores(outcome.score_rows, now=now)
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
        ScoringRun.objects.filter(pk=run.pk).update(
            progress_done=F("progress_done") + chunk.units, heartbeat_at=now
        )
        if outcome.score_rows or outcome.system_rows:  # a report read mid-run is not served after this chunk
            study_data_changed(study_id=run.study_id)


def _fail_run(fail_chunk: Callable[[], bool], *, run_id: int, run_error: str) -> None:
    """Fail the chunk (``fail_chunk``: a write fenced by its attempt, False when that attempt lost it) and,
    when it did, the run, cancelling the run's other chunks."""
    now = timezone.now()
    with transaction.atomic():
        if not fail_chunk():
            return
        ended = ScoringRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
            status=RunStatus.FAILED, error=run_error, finished_at=now, heartbeat_at=now
        )
        if ended:
            ScoringChunk.objects.filter(
                run_id=run_id, status__in=[ChunkStatus.PENDING, ChunkStatus.RUNNING]
            ).update(status=ChunkStatus.CANCELLED, finished_at=now)
    logger.error("scoring run %s failed: %s", run_id, run_error.splitlines()[0])


def _signatures(run: ScoringRun, names: Sequence[str]) -> dict[str, MetricSignature]:
    ids = {name: int(run.signatures[name]) for name in names}
    by_id = MetricSignature.objects.in_bulk(list(ids.values()))
    return {name: by_id[signature_id] for name, signature_id in ids.items()}


def _failure(metric: str, response_id: int, error: str) -> dict[str, Any]:
    return {"metric": metric, "response_id": response_id, "error": error[:500]}


def _chunk_description(chunk: ScoringChunk) -> str:
    if chunk.kind == ChunkKind.DIVERSITY:
        return (
            f"chunk {chunk.index} ({', '.join(chunk.metrics)} on {len(chunk.pairs)} (system, context) pairs)"
        )
    if chunk.kind in (ChunkKind.REPLIES, ChunkKind.PER_REFERENCE):
        return f"chunk {chunk.index} ({', '.join(chunk.metrics)} on {len(chunk.response_ids)} replies)"
    return f"chunk {chunk.index} ({chunk.get_kind_display()}: {', '.join(chunk.metrics)})"


def _reply_description(response_id: int) -> str:
    response = Response.objects.filter(pk=response_id).select_related("system", "context").first()
    if response is None:
        return f"reply {response_id} (since deleted)"
    return (
        f"reply {response_id} (system {response.system.name!r}, context {str(response.context)!r}): "
        f"{response.text[:80]!r}"
    )


def _system_metric_names(chunks: Sequence[ScoringChunk]) -> set[str]:
    return {name for chunk in chunks if chunk.kind == ChunkKind.SYSTEMS for name in chunk.metrics}

"""Computing a claimed chunk: read its items, compute its metrics by the chunk's kind, store the outcome.

The walk of a chunk (:func:`chunk_execute`): the chunk's kind picks its computer from
:data:`CHUNK_COMPUTERS`, each called alike (chunk, run, fence) and returning a ``ChunkOutcome``: replies
(each metric family of the chunk over its replies, computed by the metric engine,
``scoring.metrics.compute``), systems (one value per system), whole set (blends from their stored
components, or a metric over every reply of the study), the report's per-reference and diversity
chunks (``scoring.services.report_chunks``), and a pairwise judge's verdicts on pairs of replies
(``scoring.services.pairwise_chunks``); then :func:`~scoring.services.chunk_storage.chunk_store`
writes the outcome fenced by the chunk's attempt.
Claiming is :mod:`scoring.services.chunk_claims`'s, reading :mod:`scoring.services.chunk_reads`'s,
finishing the run :mod:`scoring.services.run_finish`'s; their names are importable from here too.

Heartbeats are written from inside the metric call (the metric core's progress callback, with the units
done) and, between those, by a :class:`~kernel.lease_keeper.LeaseKeeper` thread of the worker's process: a
long model call or a slow first load (WordNet, a model) is not mistaken for a dead worker, and a heartbeat
goes stale only when the process died (killed, out of memory, the hard time limit).

Failures:
- a metric that raises on some replies: the chunk is computed again reply by reply, the failing replies are
  recorded (metric, reply, error) in the chunk's and then the run's ``failures``, and the rest is stored;
- a metric that raises on every reply of a chunk (a missing model, a bug): the chunk and the run FAIL with
  the error and the first reply that caused it; the run's other chunks are cancelled;
- a worker that dies: see :mod:`scoring.services.chunk_claims`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db.models import Prefetch
from django.utils import timezone

from annotation.models import Reference, Response, System
from kernel.lease import Lease
from kernel.lease_keeper import LeaseKeeper
from scoring.metrics.registry import (
    combine_metric,
    compute_metrics,
    compute_system_metric,
    metric_spec,
    options_for,
)
from scoring.metrics.system_specs import ContextOutputs
from scoring.models import (
    ChunkKind,
    MetricScore,
    MetricSignature,
    ScoringChunk,
    ScoringRun,
    SystemMetricScore,
)
from scoring.services.chunk_claims import (
    CHUNK_LEASE,
    ChunkLostError,
    ClaimedChunk,
    RunChunksState,
    chunk_claim_next,
    chunk_fail,
    chunk_fail_exhausted,
    chunk_release,
    claimable_q,
    run_chunks_state,
    stale_before,
)
from scoring.services.chunk_reads import (
    ReplyItem,
    items_and_references,
    reply_items,
    with_references,
)
from scoring.services.chunk_storage import (
    ChunkOutcome,
    chunk_store,
    failure_record,
    upsert_scores,
)
from scoring.services.errors import error_summary
from scoring.services.pairwise_chunks import pairwise_chunk_outcome
from scoring.services.planning import metric_families
from scoring.services.references_policy import references_for_mode
from scoring.services.report_chunks import diversity_chunk_rows, per_reference_chunk_rows
from scoring.services.run_finish import ScoreCount, scoring_run_advance, scoring_run_score_counts
from scoring.services.run_vectors import run_vectors
from scoring.trained_model_services import run_model_paths

logger = logging.getLogger(__name__)


ProgressCallback = Callable[[int, int], None]  # (scores done, scores in total) of the run


class ChunkComputeError(Exception):
    """A metric failed on every reply of a chunk; ``response_id`` is the first reply that failed."""

    def __init__(self, message: str, *, response_id: int | None = None) -> None:
        super().__init__(message)
        self.response_id = response_id


def chunk_execute(*, claimed: ClaimedChunk, progress: Callable[[int], None] | None = None) -> None:
    """Compute and store a claimed chunk; a deterministic error fails the chunk and its run.

    Raises :class:`ChunkLostError` when the chunk was taken over or cancelled meanwhile (nothing stored),
    and lets ``SoftTimeLimitExceeded`` through (the caller releases the chunk for another attempt).
    ``progress`` gets the chunk's units done at each heartbeat (a report waiting for the run shows them).
    """
    chunk = claimed.chunk
    fence = ChunkFence(chunk=chunk, attempt=claimed.attempt, progress=progress)
    run = ScoringRun.objects.select_related("study").get(pk=chunk.run_id)
    try:
        with LeaseKeeper(fence.lease, interval=fence.interval) as fence.keeper:
            outcome = CHUNK_COMPUTERS[ChunkKind(chunk.kind)](chunk, run, fence)
        fence.check()
    except (ChunkLostError, SoftTimeLimitExceeded):
        raise
    except Exception as error:
        logger.exception("chunk %s of scoring run %s failed", chunk.index, chunk.run_id)
        chunk_fail(claimed=claimed, error=error)
    else:
        chunk_store(claimed, run, outcome)


class ChunkFence:
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
        self.keeper: LeaseKeeper | None = None  # keeps the heartbeat between beats (chunk_execute sets it)

    def check(self) -> None:
        """Raise ChunkLostError when the keeper found the attempt lost its chunk."""
        if self.keeper is not None and self.keeper.lost:
            raise ChunkLostError

    def beat(self, items_done: int, *, force: bool = False) -> None:
        self.check()
        now = time.monotonic()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        units_done = min(self.units, self.done_units + items_done * self.metrics)
        if not self.lease.write(heartbeat_at=timezone.now(), units_done=units_done):
            raise ChunkLostError
        if self.progress is not None:
            self.progress(units_done)


def _run_compute(
    run: ScoringRun, names: Sequence[str], items: Sequence[ReplyItem], references: Sequence[list[str]]
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


def _compute_replies(chunk: ScoringChunk, run: ScoringRun, fence: ChunkFence) -> ChunkOutcome:
    """Every metric family of the chunk over its replies, read once for all of them (planning puts the
    families that score the same replies on the same queue into one chunk); each family is computed on
    its own, so a family that fails on some replies loses only its own scores for them."""
    read = reply_items(chunk.response_ids)
    outcome = ChunkOutcome()
    for family in metric_families(chunk.metrics):
        items, references = with_references(read, family, run)
        if items:
            fence.metrics = len(family)
            _compute_family(chunk, run, family, items, references, fence, outcome)
        fence.done_units += len(chunk.response_ids) * len(family)
    return outcome


def _compute_family(
    chunk: ScoringChunk,
    run: ScoringRun,
    names: list[str],
    items: list[ReplyItem],
    references: list[list[str]],
    fence: ChunkFence,
    outcome: ChunkOutcome,
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
                    failure_record(name, items[index].pk, f"the metric gave the value {value!r}")
                )
            else:
                outcome.score_rows.append((items[index].pk, signature_id, float(value)))


def _compute_one_by_one(
    items: Sequence[ReplyItem],
    names: Sequence[str],
    compute: Callable[[Sequence[int], Callable[[int], None] | None], dict[str, list[float | None]]],
    fence: ChunkFence,
    outcome: ChunkOutcome,
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
            outcome.failures.append(failure_record(", ".join(names), item.pk, error_summary(error)))
            if len(outcome.failures) >= 5 and not ok:  # the first five all failed: not a per-reply problem
                return scores, ok
            continue
        ok.append(index)
        for name in names:
            scores[name].extend(one[name])
    return scores, ok


def _compute_systems(chunk: ScoringChunk, run: ScoringRun, fence: ChunkFence) -> ChunkOutcome:
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
    outcome = ChunkOutcome()
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


def _compute_whole_set(chunk: ScoringChunk, run: ScoringRun, fence: ChunkFence) -> ChunkOutcome:
    """Whole-set metrics: RUBER's blends (normalised over the scored set) from the stored raw components of
    every reply of the study that has a reference, with no second model pass; and metrics whose values
    depend on every item scored together (nlg-eval's CIDEr-D: document frequencies over the contexts),
    computed in one call over every reply of the study."""
    outcome = ChunkOutcome()
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
    name: str, run: ScoringRun, signature: MetricSignature, outcome: ChunkOutcome
) -> None:
    """One whole-set metric over every reply of the study (with a reference, when it needs one)."""
    response_ids = list(
        Response.objects.filter(context__study_id=run.study_id)
        .order_by("context_id", "id")
        .values_list("pk", flat=True)
    )
    items, references = items_and_references(response_ids, [name], run)
    if not items:
        return
    values = _run_compute(run, [name], items, references)(range(len(items)), None)[name]
    for item, value in zip(items, values, strict=True):
        if value is None:
            outcome.undefined[name] = outcome.undefined.get(name, 0) + 1
        elif math.isfinite(value):
            outcome.score_rows.append((item.pk, signature.pk, float(value)))
        else:
            outcome.failures.append(failure_record(name, item.pk, f"the metric gave the value {value!r}"))


def _compute_per_reference(chunk: ScoringChunk, run: ScoringRun, fence: ChunkFence) -> ChunkOutcome:
    """The report's per-reference values of the chunk's replies (``report_chunks``)."""
    return ChunkOutcome(per_reference_rows=per_reference_chunk_rows(chunk, run, fence.beat))


def _compute_diversity(chunk: ScoringChunk, run: ScoringRun, fence: ChunkFence) -> ChunkOutcome:
    """The report's diversity values of the chunk's (system, context) pairs (``report_chunks``)."""
    return ChunkOutcome(context_rows=diversity_chunk_rows(chunk, run, fence.beat))


def _compute_pairwise(chunk: ScoringChunk, run: ScoringRun, fence: ChunkFence) -> ChunkOutcome:
    """A pairwise judge's verdicts on the chunk's pairs of replies (``pairwise_chunks``)."""
    return pairwise_chunk_outcome(chunk, run, fence.beat)


ChunkComputer = Callable[[ScoringChunk, ScoringRun, ChunkFence], ChunkOutcome]
# What computes a chunk, by its kind: each takes the chunk, its run and the fence (whose beat writes the
# heartbeat; the systems and whole-set computations are short enough to need none) and returns what
# chunk_store writes.
CHUNK_COMPUTERS: dict[ChunkKind, ChunkComputer] = {
    ChunkKind.REPLIES: _compute_replies,
    ChunkKind.SYSTEMS: _compute_systems,
    ChunkKind.WHOLE_SET: _compute_whole_set,
    ChunkKind.PER_REFERENCE: _compute_per_reference,
    ChunkKind.DIVERSITY: _compute_diversity,
    ChunkKind.PAIRWISE: _compute_pairwise,
}


def _signatures(run: ScoringRun, names: Sequence[str]) -> dict[str, MetricSignature]:
    ids = {name: int(run.signatures[name]) for name in names}
    by_id = MetricSignature.objects.in_bulk(list(ids.values()))
    return {name: by_id[signature_id] for name, signature_id in ids.items()}


__all__ = [
    "CHUNK_COMPUTERS",
    "CHUNK_LEASE",
    "ChunkComputeError",
    "ChunkComputer",
    "ChunkFence",
    "ChunkLostError",
    "ClaimedChunk",
    "RunChunksState",
    "ScoreCount",
    "chunk_claim_next",
    "chunk_execute",
    "chunk_fail",
    "chunk_fail_exhausted",
    "chunk_release",
    "claimable_q",
    "run_chunks_state",
    "scoring_run_advance",
    "scoring_run_score_counts",
    "stale_before",
    "upsert_scores",
]

"""The values a correlation report reads besides the stored scores, computed by a scoring run of its own.

The report's number-of-references curve (Gupta et al. (2019) Figure 2) needs each multi-reference signature against
each reference of the rated replies (scoring/reference_scores.py), its diversity table (Gupta et al. (2019) Table 5)
the diversity metrics of each judged (system, context) pair (scoring/diversity_scores.py). The report asks
for them with :func:`report_scores_compute`, which plans a run (``purpose`` "report") with a 'per-reference'
chunk per signature and slice of replies and 'diversity' chunks for the pairs, only for what is missing or
was computed from other data, and waits for it; the report then only reads the values.

The chunks are claimed, fenced, heartbeated, stored and recovered like every other chunk
(scoring/services/chunks.py, scoring/services/recovery.py): one active run per request (``request_key``),
so two reports of the same data wait for one run. The waiting process works on the run itself, claiming
its chunks one after the other, and polls the chunks other processes hold: a worker building a report
would otherwise wait for the queue it occupies, and a report built in a web request or by
``study_report`` needs no worker. A reporter that dies leaves its run to the periodic recovery, which sends
its chunks to the workers; the next report finds the values kept.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence

from django.conf import settings
from django.utils import timezone

from annotation.models import Study
from scoring.diversity_scores import (
    DIVERSITY_METRICS,
    diversity_pairs_judged,
    diversity_signature_parameters,
    diversity_stale,
)
from scoring.models import (
    ChunkKind,
    MetricSignature,
    RunPurpose,
    RunStatus,
    ScoringChunk,
    ScoringRun,
)
from scoring.reference_scores import per_reference_stale
from scoring.selectors import scoring_run_progress
from scoring.services.execution import scoring_run_work_here
from scoring.services.planning import metric_signature_get_or_create
from scoring.services.queueing import default_queue
from scoring.services.run_finish import scoring_run_advance
from scoring.services.runs import scoring_run_create_once

logger = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (stage, done, total): the report's progress callback
POLL_SECONDS = 1.0  # how often a waiting report looks at chunks that other processes hold


def report_scores_compute(
    *,
    study: Study,
    curve_signatures: Sequence[MetricSignature],
    response_ids: Sequence[int],
    progress: Progress | None = None,
    timeout_seconds: float | None = None,
) -> str:
    """Make sure the per-reference values of ``curve_signatures`` for ``response_ids`` and the study's
    diversity values are kept and current: plan a run for what is not and wait for it (see the module).
    Returns "" when they are, else a note for the report saying which run did not finish and why (the
    report then leaves out the values it lacks)."""
    run = report_scores_request(study=study, curve_signatures=curve_signatures, response_ids=response_ids)
    if run is None:
        return ""
    timeout = settings.DIALEVAL_REPORT_SCORES_TIMEOUT_SECONDS if timeout_seconds is None else timeout_seconds
    run = report_scores_wait(run_id=run.pk, progress=progress, timeout_seconds=timeout)
    if run.status == RunStatus.SUCCEEDED:
        return ""
    what = "references curve and diversity table"
    if not run.is_finished:
        return (
            f"{what}: scoring run {run.pk} did not finish within {timeout:g} s "
            "(DIALEVAL_REPORT_SCORES_TIMEOUT_SECONDS); the values it has not computed yet are left out"
        )
    reason = (run.error or run.notes or run.get_status_display()).strip().splitlines()
    return (
        f"{what}: scoring run {run.pk} {run.status}: {reason[0] if reason else ''}; its values are left out"
    )


def report_scores_request(
    *, study: Study, curve_signatures: Sequence[MetricSignature], response_ids: Sequence[int]
) -> ScoringRun | None:
    """The run that computes what the report lacks (planned: RUNNING with its chunks), or the identical run
    already active; None when nothing is missing."""
    size = max(1, int(settings.DIALEVAL_SCORING_CHUNK_SIZE))
    chunks: list[ScoringChunk] = []
    queue = default_queue()
    for signature in curve_signatures:
        stale = per_reference_stale(study=study, signature=signature, response_ids=response_ids)
        for start in range(0, len(stale), size):
            part = stale[start : start + size]
            chunks.append(
                ScoringChunk(
                    kind=ChunkKind.PER_REFERENCE,
                    signature=signature,
                    metrics=[signature.name],
                    response_ids=part,
                    units=len(part),
                    queue=queue,
                )
            )
    judged = diversity_pairs_judged(study=study)
    diversity = _diversity_signatures(study) if judged else {}
    pairs = diversity_stale(signatures=diversity, pairs=judged) if judged else []
    for start in range(0, len(pairs), size):
        rows = [list(pair) for pair in pairs[start : start + size]]
        chunks.append(
            ScoringChunk(
                kind=ChunkKind.DIVERSITY,
                metrics=list(DIVERSITY_METRICS),
                pairs=rows,
                units=len(rows) * len(DIVERSITY_METRICS),
                queue=queue,
            )
        )
    if not chunks:
        return None
    return _run_create(study, chunks, signatures={name: row.pk for name, row in diversity.items()})


def report_scores_wait(*, run_id: int, progress: Progress | None, timeout_seconds: float) -> ScoringRun:
    """Work on run ``run_id`` in this process until it ends, claiming its chunks one by one and waiting for
    those other processes hold (taken over once stale), at most ``timeout_seconds``; ``progress`` gets the
    run's scores done and in total at each heartbeat. Returns the run as it stands."""
    deadline = time.monotonic() + timeout_seconds
    stage = f"scoring run {run_id}: per-reference and diversity scores"

    def report(_chunk_units_done: int = 0) -> None:  # the run's progress counts its running chunks' units
        if progress is not None:
            state = scoring_run_progress(run=ScoringRun.objects.get(pk=run_id))
            progress(stage, state.done, state.total)

    report()
    while True:
        scoring_run_work_here(run_id=run_id, chunk_progress=report, after_chunk=report)
        scoring_run_advance(run_id=run_id)
        run = ScoringRun.objects.get(pk=run_id)
        if run.is_finished or time.monotonic() >= deadline:
            return run
        report()  # keeps the report's own heartbeat while another process computes
        time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))


def _diversity_signatures(study: Study) -> dict[str, MetricSignature]:
    return {
        name: metric_signature_get_or_create(
            name, parameters, artifact_hash="", version=parameters["version"]
        )
        for name, parameters in diversity_signature_parameters(language=study.language).items()
    }


def _run_create(study: Study, chunks: list[ScoringChunk], *, signatures: dict[str, int]) -> ScoringRun:
    """Create the run RUNNING with its chunks in one transaction, or return the identical active run."""
    key = _request_key(study, chunks)
    names = list(dict.fromkeys(name for chunk in chunks for name in chunk.metrics))
    for index, chunk in enumerate(chunks):
        chunk.index = index

    def create() -> ScoringRun:
        now = timezone.now()
        run = ScoringRun.objects.create(
            study=study,
            purpose=RunPurpose.REPORT,
            request_key=key,
            metrics=names,
            signatures=signatures,
            status=RunStatus.RUNNING,
            attempts=1,
            progress_total=sum(chunk.units for chunk in chunks),
            started_at=now,
            heartbeat_at=now,
            enqueued_at=now,  # the periodic recovery leaves it to its reporter for a stale period
        )
        for chunk in chunks:
            chunk.pk = None  # a try rolled back may have numbered them
            chunk.run = run
        ScoringChunk.objects.bulk_create(chunks)
        logger.info("report scoring run %s planned: %d chunk(s)", run.pk, len(chunks))
        return run

    failure = RuntimeError(
        "could not create the report's scoring run: an identical run kept starting and ending"
    )
    return scoring_run_create_once(key=key, create=create, failure=failure)


def _request_key(study: Study, chunks: Sequence[ScoringChunk]) -> str:
    """What makes two reports' requests the same work: the study and every chunk's kind and items."""
    payload = {
        "purpose": RunPurpose.REPORT.value,
        "study": study.pk,
        "chunks": [
            [chunk.kind, chunk.signature.pk if chunk.signature else None, chunk.response_ids, chunk.pairs]
            for chunk in chunks
        ],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

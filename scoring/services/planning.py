"""Planning a run: claim it (PENDING -> RUNNING, its lease: kernel/lease.py) and split its work into
chunks, in one transaction. A running run is never claimed again: its chunks carry its work from then on,
each under its own lease, and the periodic recovery resumes them.

Chunks: the metric families (BLEU-1..4 together, a standalone metric alone) over slices of up
to ``settings.DIALEVAL_SCORING_CHUNK_SIZE`` replies, ordered by context so that the replies of several
systems to one context share their references' tokenization; families that score the same replies on the
same queue share their chunks (a chunk computes each of its families on its own); one chunk for
the system-level metrics; and, as stage
1 (after every stage-0 chunk is done), one chunk for the whole-set metrics, RUBER's blends, computed from
the stored raw components (``MetricSpec.combine``), never by a second model pass; and, for each pairwise
judge, its pairs of replies in chunks of the same size (scoring/services/pairwise_chunks.py).

Only what is missing: unless the run asks to recompute, a family's chunks hold only the replies that lack a
score of one of the family's signatures. Reference-based families hold only replies whose context has a
reference; the run's notes count the others.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Exists, OuterRef
from django.utils import timezone

from annotation.models import Reference, Response, System
from kernel.lease import LeaseTerms, lease_claim
from scoring.judges.pairwise_judges import pairwise_judge
from scoring.metrics.llm_judge.pairwise import pairwise_judge_names, without_pairwise_judges
from scoring.metrics.registry import (
    is_whole_set,
    metric_origin,
    metric_spec,
    metric_specs,
    options_for,
    split_metric_names,
    system_metric_spec,
)
from scoring.metrics.signature import metric_signature
from scoring.metrics.signature_parameters import chosen_signature_parameters
from scoring.metrics.spec import MetricSpec
from scoring.models import ChunkKind, MetricScore, MetricSignature, RunStatus, ScoringChunk, ScoringRun
from scoring.services.errors import error_text
from scoring.services.pairwise_chunks import pairs_to_judge
from scoring.services.queueing import chunk_queue, default_queue, preferred_queue
from scoring.services.run_vectors import run_vectors

logger = logging.getLogger(__name__)


RUN_LEASE = LeaseTerms(
    model=ScoringRun,
    running=RunStatus.RUNNING,
    waiting=RunStatus.PENDING,
    stale_seconds=lambda: float(settings.DIALEVAL_RUN_STALE_SECONDS),
    takeover=False,
)


@dataclass
class _Plan:
    chunks: list[ScoringChunk] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, **fields: object) -> None:
        self.chunks.append(ScoringChunk(index=len(self.chunks), **fields))


def scoring_run_plan(*, run_id: int, gpu_available: bool = False) -> bool:
    """Claim PENDING run ``run_id`` and create its chunks; False when it was not pending (already planned,
    cancelled or gone). A run with nothing to compute finishes at once."""
    now = timezone.now()
    with transaction.atomic():
        lease = lease_claim(
            RUN_LEASE, run_id, started_at=now, finished_at=None, progress_done=0, error="", notes=""
        )
        if lease is None:
            return False
        run = ScoringRun.objects.select_related("study").get(pk=run_id)
        try:
            with transaction.atomic():
                signatures = _signatures(run)
                plan = _plan(run, signatures=signatures, gpu_available=gpu_available)
                for chunk in plan.chunks:
                    chunk.run = run
                ScoringChunk.objects.bulk_create(plan.chunks)
        except Exception as error:  # e.g. a metric unregistered since the run was created
            logger.exception("scoring run %s could not be planned", run_id)
            lease.finish(
                RunStatus.FAILED, finished_at=timezone.now(), error=error_text(error, where="planning")
            )
            return False
        total = sum(chunk.units for chunk in plan.chunks)
        lease.write(
            signatures={name: signature.pk for name, signature in signatures.items()},
            progress_total=total,
            notes="\n".join(plan.notes),
        )
    logger.info("scoring run %s planned: %d chunk(s), %d score(s)", run_id, len(plan.chunks), total)
    return True


def _plan(run: ScoringRun, *, signatures: dict[str, MetricSignature], gpu_available: bool) -> _Plan:
    response_names, system_names = split_metric_names(without_pairwise_judges(run.metrics))
    specs = metric_specs(response_names)
    plan = _Plan()
    ordered = list(
        Response.objects.filter(context__study_id=run.study_id)
        .annotate(has_reference=Exists(Reference.objects.filter(context_id=OuterRef("context_id"))))
        .order_by("context_id", "id")
        .values_list("id", "has_reference")
    )
    everything = [response_id for response_id, _ in ordered]
    with_references = [response_id for response_id, has_reference in ordered if has_reference]
    referenced = [spec.name for spec in specs if spec.needs_references]
    if referenced and len(with_references) < len(everything):
        plan.notes.append(
            f"{len(everything) - len(with_references)} response(s) have no reference, so "
            f"{', '.join(referenced)} were not computed for them"
        )
    size = max(1, int(settings.DIALEVAL_SCORING_CHUNK_SIZE))

    def whole_set(spec: MetricSpec) -> bool:
        return is_whole_set(spec.name, run.implementations.get(spec.name, ""))

    # Families that score the same replies on the same queue share their chunks: a chunk's replies are
    # read, claimed and stored once for all of them (per-chunk database work outweighed the
    # metrics when each family had chunks of its own).
    shared: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for names in metric_families([spec.name for spec in specs if not whole_set(spec)]):
        candidates = everything
        if any(metric_spec(name).needs_references for name in names):
            candidates = with_references
        if not run.recompute:
            candidates = _missing(candidates, [signatures[name].pk for name in names])
        queue = chunk_queue(metrics=names, gpu_available=gpu_available)
        shared.setdefault((queue, tuple(candidates)), []).extend(names)
    for (queue, replies), names in shared.items():
        for start in range(0, len(replies), size):
            part = list(replies[start : start + size])
            plan.add(
                kind=ChunkKind.REPLIES,
                metrics=names,
                response_ids=part,
                units=len(part) * len(names),
                queue=queue,
            )
    if system_names:
        systems = System.objects.filter(study_id=run.study_id).count()
        plan.add(
            kind=ChunkKind.SYSTEMS,
            metrics=system_names,
            units=systems * len(system_names),
            queue=default_queue(),
        )
    whole_set_names = [spec.name for spec in specs if whole_set(spec)]
    if whole_set_names:
        items = (
            with_references if any(spec.needs_references for spec in specs if whole_set(spec)) else everything
        )
        plan.add(
            kind=ChunkKind.WHOLE_SET,
            stage=1,
            metrics=whole_set_names,
            units=len(items) * len(whole_set_names),
            queue=default_queue(),
        )
    _plan_pairwise(plan, run, signatures=signatures, gpu_available=gpu_available, size=size)
    return plan


def _plan_pairwise(
    plan: _Plan, run: ScoringRun, *, signatures: dict[str, MetricSignature], gpu_available: bool, size: int
) -> None:
    """Each pairwise judge's chunks: the study's pairs it has not judged (``pairwise_chunks``), on the
    queue its backend prefers."""
    for name in pairwise_judge_names(run.metrics):
        pairs = pairs_to_judge(
            study_id=run.study_id, signature_id=signatures[name].pk, recompute=run.recompute
        )
        prefers_gpu = pairwise_judge(name).backend.prefers_gpu
        queue = preferred_queue(prefers_gpu=prefers_gpu, gpu_available=gpu_available)
        for start in range(0, len(pairs), size):
            part = [list(pair) for pair in pairs[start : start + size]]
            plan.add(kind=ChunkKind.PAIRWISE, metrics=[name], pairs=part, units=len(part), queue=queue)


def _missing(response_ids: Sequence[int], signature_ids: Sequence[int]) -> list[int]:
    """The replies among ``response_ids`` without a stored score of every signature in ``signature_ids``."""
    complete = _complete_by_slices(response_ids, signature_ids)
    return [response_id for response_id in response_ids if response_id not in complete]


_IN_CLAUSE_LIMIT = 900  # below SQLite's bound-parameter limit of old builds: large lookups go in slices


def _complete_by_slices(response_ids: Sequence[int], signature_ids: Sequence[int]) -> set[int]:
    complete: set[int] = set()
    for start in range(0, len(response_ids), _IN_CLAUSE_LIMIT):
        part = response_ids[start : start + _IN_CLAUSE_LIMIT]
        complete |= set(
            MetricScore.objects.filter(response_id__in=part, signature_id__in=signature_ids)
            .values("response_id")
            .annotate(scores=Count("id"))
            .filter(scores=len(signature_ids))
            .values_list("response_id", flat=True)
        )
    return complete


def metric_families(names: Sequence[str]) -> list[list[str]]:
    """``names`` grouped by metric family (a metric without one is its own group), in first-seen order:
    the metrics that one metric-core call computes together."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(metric_spec(name).family or f"metric:{name}", []).append(name)
    return list(groups.values())


def _signatures(run: ScoringRun) -> dict[str, MetricSignature]:
    """The signature of every metric of the run (created when new), system metrics and pairwise judges
    included."""
    response_names, system_names = split_metric_names(without_pairwise_judges(run.metrics))
    signatures: dict[str, MetricSignature] = {}
    vectors = run_vectors(run)
    for spec in metric_specs(response_names):
        model_hash = str(run.trained_models[spec.model_kind]["hash"]) if spec.model_kind else ""
        parameters, artifact = chosen_signature_parameters(
            spec.name,
            language=run.study.language,
            references=run.references,
            tokenizer=run.tokenizer,
            implementation=run.implementations.get(spec.name, ""),
            options=run.options,
            model_hash=model_hash,
            vectors=vectors,
        )
        signatures[spec.name] = metric_signature_get_or_create(
            spec.name,
            parameters,
            artifact_hash=model_hash or artifact or spec.artifact_hash,
            version=parameters["version"],
        )
    for name in system_names:
        system_spec = system_metric_spec(name)
        implementation = run.implementations.get(name, "")
        parameters = system_spec.signature_parameters(
            language=run.study.language,
            references=run.references,
            tokenizer=run.tokenizer,
            implementation=implementation,
            params=options_for(name, implementation, run.options),
        )
        signatures[name] = metric_signature_get_or_create(
            name, parameters, artifact_hash="", version=parameters["version"]
        )
    for name in pairwise_judge_names(run.metrics):
        judge = pairwise_judge(name)
        parameters = judge.signature_parameters()
        signatures[name] = metric_signature_get_or_create(
            name, parameters, artifact_hash=judge.backend.model_hash, version=parameters["version"]
        )
    return signatures


def metric_signature_get_or_create(
    name: str, parameters: dict[str, str], *, artifact_hash: str, version: str
) -> MetricSignature:
    """The signature of ``name`` with ``parameters``, created when new."""
    signature, _ = MetricSignature.objects.get_or_create(
        text=metric_signature(name, parameters),
        defaults={
            "name": name,
            "parameters": parameters,
            "artifact_hash": artifact_hash,
            "version": version,
            "origin": metric_origin(name),  # a plugin's metric: "plugin" (its signature names the plugin)
        },
    )
    return signature

"""A report's per-reference and diversity values as the work of a scoring run: chunks claimed,
fenced, heartbeated and recovered like every other chunk, values written once, and a report that only reads
them (scoring/services/report_scores.py, correlation/report/loading.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Annotator, DiversityJudgment, Rating, Reference, Response, Study, System
from correlation.report.loading import report_inputs
from kernel.lease import recovery_of
from scoring.metrics.registry import compute_metrics, compute_system_metric
from scoring.metrics.system_specs import ContextOutputs
from scoring.models import (
    ChunkKind,
    ChunkStatus,
    ContextSystemScore,
    MetricSignature,
    PerReferenceScore,
    RunPurpose,
    RunStatus,
    ScoringChunk,
    ScoringRun,
)
from scoring.selectors import scoring_runs_for_study
from scoring.services import ChunkLostError, scoring_run_create, scoring_run_execute, scoring_run_work
from scoring.services.chunks import chunk_claim_next, chunk_execute
from scoring.services.queueing import default_queue
from scoring.services.recovery import RUN_KIND
from scoring.services.report_scores import report_scores_compute, report_scores_request, report_scores_wait
from tests.factories import DialogContextFactory, QuestionFactory, StudyFactory
from tests.live_services import celery_broker

pytestmark = pytest.mark.django_db

CONTEXTS = 3
REPLIES = CONTEXTS * 2 * 2  # two systems, two replies each
PAIRS = CONTEXTS * 2  # judged (system, context) pairs
DIVERSITY_VALUES = PAIRS * 6  # six diversity metrics per pair


def build_study() -> Study:
    """Contexts with three references each, two systems with two rated replies per context, and a diversity
    judgment of every (system, context); bleu-2 scored against every reference."""
    study = StudyFactory.create()
    question = QuestionFactory.create(study=study, name="appropriateness", scale_min=1, scale_max=5)
    rater = Annotator.objects.create(study=study, pseudonym="rater")
    systems = [System.objects.create(study=study, name=name) for name in ("varied", "dull")]
    for index in range(CONTEXTS):
        context = DialogContextFactory.create(study=study, external_id=f"c{index}")
        for position, text in enumerate([f"i am fine thank you {index}", "not bad and you", "so so today"]):
            Reference.objects.create(
                context=context, text=text, origin="original" if position == 0 else "collected"
            )
        for system in systems:
            texts = (
                [f"i am fine {index}", f"not bad {index} and you"]
                if system.name == "varied"
                else ["so so", "so so"]
            )
            for position, text in enumerate(texts):
                response = Response.objects.create(
                    context=context, system=system, text=text, sample_index=position
                )
                Rating.objects.create(
                    annotator=rater, response=response, question=question, value=1 + (index + position) % 5
                )
            DiversityJudgment.objects.create(
                annotator=rater, context=context, system=system, meanings=1 + (index + len(system.name)) % 3
            )
    run = scoring_run_create(study=study, metrics=["bleu-2"], references="multi", enqueue=False)
    assert scoring_run_execute(run_id=run.pk).status == RunStatus.SUCCEEDED
    study.refresh_from_db()
    return study


@pytest.fixture
def study() -> Study:
    return build_study()


def _signature() -> MetricSignature:
    return MetricSignature.objects.get(name="bleu-2")


def _replies(study: Study) -> list[int]:
    return list(Response.objects.filter(context__study=study).order_by("id").values_list("pk", flat=True))


def _request(study: Study) -> ScoringRun | None:
    return report_scores_request(study=study, curve_signatures=[_signature()], response_ids=_replies(study))


def _written(study: Study) -> dict[str, object]:
    """Every kept value of the study with when it was written, and the runs and chunks there are."""
    return {
        "per_reference": sorted(
            PerReferenceScore.objects.filter(response__context__study=study).values_list(
                "pk", "response_id", "computed_at"
            )
        ),
        "diversity": sorted(
            ContextSystemScore.objects.filter(context__study=study).values_list("pk", "computed_at")
        ),
        "runs": ScoringRun.objects.filter(study=study).count(),
        "chunks": ScoringChunk.objects.filter(run__study=study).count(),
    }


def test_the_report_asks_one_run_whose_chunks_write_the_values_it_reads(study: Study) -> None:
    stages: list[str] = []
    inputs = report_inputs(study=study, progress=lambda stage, done, total: stages.append(stage))

    run = ScoringRun.objects.get(study=study, purpose=RunPurpose.REPORT)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert sorted(run.chunks.values_list("kind", flat=True)) == [ChunkKind.DIVERSITY, ChunkKind.PER_REFERENCE]
    assert f"scoring run {run.pk}: per-reference and diversity scores" in stages
    assert list(scoring_runs_for_study(study=study)) == [ScoringRun.objects.get(purpose=RunPurpose.SCORES)]
    assert inputs.unvalued == ()  # nor do they count as runs that left a metric without values
    assert PerReferenceScore.objects.count() == REPLIES
    assert ContextSystemScore.objects.count() == DIVERSITY_VALUES

    [curve] = inputs.reference_scores
    assert curve.width == 3
    for response in Response.objects.filter(context__study=study).select_related("context"):
        references = list(response.context.references.order_by("id").values_list("text", flat=True))
        expected = compute_metrics(
            ["bleu-2"], [response.text] * 3, [[r] for r in references], [""] * 3, "en"
        )["bleu-2"]
        assert curve.scores[response.pk] == pytest.approx(expected)
    assert inputs.diversity is not None
    for (system, external_id), value in inputs.diversity.metrics["distinct-2"].items():
        outputs = list(
            Response.objects.filter(system__name=system, context__external_id=external_id)
            .order_by("id")
            .values_list("text", flat=True)
        )
        references = list(
            Reference.objects.filter(context__external_id=external_id, context__study=study)
            .order_by("id")
            .values_list("text", flat=True)
        )
        expected_value = compute_system_metric(
            "distinct-2", [ContextOutputs(outputs, references)], "en"
        ).value
        assert value == pytest.approx(expected_value)
    assert len(inputs.diversity.metrics["distinct-2"]) == PAIRS


def test_a_report_of_kept_values_only_reads_them(study: Study) -> None:
    first = report_inputs(study=study)
    written = _written(study)

    rating = Rating.objects.filter(response__context__study=study).first()
    assert rating is not None
    Rating.objects.filter(pk=rating.pk).update(value=5)  # changes the report, no reply and no reference
    again = report_inputs(study=study)

    assert _written(study) == written  # no run, no chunk, no value written again
    assert again.reference_scores[0].scores.keys() == first.reference_scores[0].scores.keys()
    for response_id, values in first.reference_scores[0].scores.items():
        assert again.reference_scores[0].scores[response_id] == pytest.approx(values, nan_ok=True)
    assert again.diversity == first.diversity


def test_a_new_reply_is_the_only_work_of_the_next_run(study: Study) -> None:
    report_inputs(study=study)
    system = System.objects.get(study=study, name="varied")
    context = study.contexts.get(external_id="c1")
    reply = Response.objects.create(context=context, system=system, text="fine thanks", sample_index=2)

    run = _request(study)

    assert run is not None
    chunks = {chunk.kind: chunk for chunk in run.chunks.all()}
    assert chunks[ChunkKind.PER_REFERENCE].response_ids == [reply.pk]  # its references are unchanged
    assert chunks[ChunkKind.DIVERSITY].pairs == [[system.pk, context.pk]]
    assert run.progress_total == 1 + 6


def test_a_stale_claim_of_a_report_chunk_is_taken_over_and_its_values_written_once(study: Study) -> None:
    run = _request(study)
    assert run is not None
    dead = chunk_claim_next(run_id=run.pk, queue=None)  # the reporter that claimed it died
    assert dead is not None
    assert dead.chunk.kind == ChunkKind.PER_REFERENCE
    long_ago = timezone.now() - timedelta(minutes=10)
    ScoringChunk.objects.filter(pk=dead.chunk.pk).update(heartbeat_at=long_ago)

    finished = report_scores_wait(run_id=run.pk, progress=None, timeout_seconds=30)  # the next reporter

    assert finished.status == RunStatus.SUCCEEDED, finished.error
    taken_over = ScoringChunk.objects.get(pk=dead.chunk.pk)
    assert (taken_over.status, taken_over.attempts) == (ChunkStatus.DONE, 2)
    written = _written(study)
    assert len(written["per_reference"]) == REPLIES  # type: ignore[arg-type]
    assert len(written["diversity"]) == DIVERSITY_VALUES  # type: ignore[arg-type]

    with pytest.raises(ChunkLostError):  # the first attempt comes back: fenced off, it stores nothing
        chunk_execute(claimed=dead)
    assert not scoring_run_work(run_id=run.pk, queue=default_queue())  # a duplicate message: nothing to do
    assert _request(study) is None  # nothing missing: no run
    assert _written(study) == written


def test_recovery_gives_a_dead_reporters_run_to_the_workers(study: Study, redis_server: str) -> None:
    from scoring.services import scoring_runs_recover

    run = _request(study)
    assert run is not None
    dead = chunk_claim_next(run_id=run.pk, queue=None)
    assert dead is not None
    long_ago = timezone.now() - timedelta(minutes=10)
    ScoringChunk.objects.filter(pk=dead.chunk.pk).update(heartbeat_at=long_ago)
    ScoringRun.objects.filter(pk=run.pk).update(enqueued_at=long_ago)

    # A database of the session's Redis that no worker consumes; this test plays the worker.
    with celery_broker(redis_server.rsplit("/", 1)[0] + "/9"):
        recovered = scoring_runs_recover()
        assert run.pk in recovery_of(recovered, RUN_KIND).requeued
        while scoring_run_work(run_id=run.pk, queue=default_queue()):
            pass

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert ScoringChunk.objects.get(pk=dead.chunk.pk).attempts == 2
    assert PerReferenceScore.objects.count() == REPLIES
    assert ContextSystemScore.objects.count() == DIVERSITY_VALUES


def test_a_run_another_process_holds_is_waited_for_then_noted(study: Study, settings) -> None:
    settings.DIALEVAL_REPORT_SCORES_TIMEOUT_SECONDS = 1
    run = _request(study)
    assert run is not None
    held = chunk_claim_next(run_id=run.pk, queue=None)  # alive: its heartbeat is fresh
    assert held is not None

    inputs = report_inputs(study=study)  # the same request: it waits for that run

    assert ScoringRun.objects.filter(purpose=RunPurpose.REPORT).count() == 1
    assert ScoringChunk.objects.get(pk=held.chunk.pk).attempts == 1  # not taken from a live process
    assert (
        f"references curve and diversity table: scoring run {run.pk} did not finish within 1 s "
        "(DIALEVAL_REPORT_SCORES_TIMEOUT_SECONDS); the values it has not computed yet are left out"
    ) in inputs.reference_notes
    assert inputs.reference_scores[0].scores == {}  # the held chunk's replies: none read
    assert inputs.diversity is not None
    assert len(inputs.diversity.metrics["distinct-1"]) == PAIRS


def test_a_failed_run_is_noted_and_the_report_goes_on(study: Study) -> None:
    signature = _signature()
    signature.parameters = {**signature.parameters, "version": "0.0.1-old"}
    signature.save()

    note = report_scores_compute(study=study, curve_signatures=[signature], response_ids=_replies(study))

    run = ScoringRun.objects.get(purpose=RunPurpose.REPORT)
    assert run.status == RunStatus.FAILED
    assert note.startswith(f"references curve and diversity table: scoring run {run.pk} failed: ")
    assert "has changed since these scores" in note
    assert not PerReferenceScore.objects.exists()
    assert set(run.chunks.values_list("status", flat=True)) == {ChunkStatus.FAILED, ChunkStatus.CANCELLED}

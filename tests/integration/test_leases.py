"""Every kind of background work holds its row by a lease (kernel/lease.py): these tests drive each kind
through its own service functions, with the work itself (the computation, the conversion, the training)
replaced by a body that writes progress through the service's own callback and then succeeds or fails.

(a) an attempt that lost its claim (its heartbeat went stale and another attempt took the work over)
writes nothing: neither its progress, nor its success, nor its failure;
(b) a stale claim is taken over: the next attempt holds the work with attempt number 2;
(c) a result stored by the attempt that took over is never overwritten by a late failure (or success) of
the attempt that lost it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db.models import Model
from django.utils import timezone

from annotation.models import ImportJob, ImportJobStatus, StudyImport
from correlation.models import ReportBundle, ReportSnapshot, SnapshotStatus
from scoring.metrics.vector_files import VectorStoreInfo
from scoring.models import (
    ChunkKind,
    ChunkStatus,
    JudgePreview,
    PreviewStatus,
    RunStatus,
    ScoringChunk,
    ScoringRun,
    TrainedModel,
    TrainingJob,
    TrainingStatus,
    VectorsStatus,
    WordVectorsFile,
)
from tests.factories import StudyFactory, a_running_run_chunk

pytestmark = pytest.mark.django_db

Progress = Callable[[], None]  # one progress write, through the service's own callback
Body = Callable[[Progress], None]  # the work: returns (the service stores its result) or raises (it fails)


class Paused(BaseException):
    """Stops an attempt in the middle of its work, its claim still held (no service catches it)."""


def pause(progress: Progress) -> None:
    progress()
    raise Paused


def succeed(progress: Progress) -> None:
    progress()


class Work:
    """One kind of background work, driven through its service's task body."""

    name = ""
    model: type[Model]
    running = ""
    succeeded = ""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Any) -> None:
        self.monkeypatch = monkeypatch
        self.tmp_path = tmp_path
        self.settings = settings
        self.bodies: list[Body] = []  # the body of each attempt, in the order the attempts start

    def create(self) -> int:
        raise NotImplementedError

    def execute(self, pk: int) -> None:
        """The task's body for ``pk``; its work is the next body of ``self.bodies``."""
        raise NotImplementedError

    def run(self, pk: int, body: Body) -> None:
        self.bodies.append(body)
        with contextlib.suppress(Paused, RuntimeError):  # a failing body may be re-raised for Celery's log
            self.execute(pk)

    def go_silent(self, pk: int) -> None:
        """The holder's heartbeat, set back a day: its worker looks dead."""
        self.model._default_manager.filter(pk=pk).update(heartbeat_at=timezone.now() - timedelta(days=1))

    def take_over(self, pk: int, body: Body) -> None:
        """What happens once the holder went silent: the next delivery (after the periodic recovery, for the
        kinds it queues again) claims the work and runs ``body``."""
        self.go_silent(pk)
        self.run(pk, body)

    def next_body(self) -> Body:
        return self.bodies.pop(0)

    def row(self, pk: int) -> dict[str, Any]:
        return dict(self.model._default_manager.filter(pk=pk).values().get())


class ReportWork(Work):
    name = "report snapshot"
    model = ReportSnapshot
    running = SnapshotStatus.RUNNING
    succeeded = SnapshotStatus.READY

    def create(self) -> int:
        from correlation.report.cache import snapshot_key
        from stats.report.types import ReportOptions

        study = StudyFactory.create()
        snapshot = ReportSnapshot.objects.create(
            study=study, options_key=snapshot_key(ReportOptions()), data_version=study.data_version
        )

        def compute(study: Any, options: Any, progress: Any) -> tuple[dict[str, Any], dict[str, Any]]:
            self.next_body()(lambda: progress("statistics", 1, 2))
            return {"sections": []}, {}

        self.monkeypatch.setattr("correlation.report.cache._compute", compute)
        self.monkeypatch.setattr("correlation.report.cache.HEARTBEAT_SECONDS", 0.0)
        return snapshot.pk

    def execute(self, pk: int) -> None:
        from correlation.report.cache import report_snapshot_build

        report_snapshot_build(snapshot_id=pk)


class BundleWork(Work):
    name = "bundle"
    model = ReportBundle
    running = SnapshotStatus.RUNNING
    succeeded = SnapshotStatus.READY

    def create(self) -> int:
        study = StudyFactory.create()
        snapshot = ReportSnapshot.objects.create(
            study=study, options_key="k", data_version=study.data_version, status=SnapshotStatus.READY
        )
        bundle = ReportBundle.objects.create(snapshot=snapshot)

        def build(*, study: Any, snapshot: Any, progress: Any) -> bytes:
            self.next_body()(lambda: progress("figures", 1, 2))
            return b"zip"

        self.monkeypatch.setattr("correlation.bundle.jobs.report_bundle", build)
        return bundle.pk

    def execute(self, pk: int) -> None:
        from correlation.bundle.jobs import bundle_build

        bundle_build(bundle_id=pk)


class ChunkWork(Work):
    name = "scoring chunk"
    model = ScoringChunk
    running = ChunkStatus.RUNNING
    succeeded = ChunkStatus.DONE

    def create(self) -> int:
        from scoring.services import chunks

        chunk = a_running_run_chunk()

        def compute(chunk: Any, run: Any, fence: Any) -> Any:
            self.next_body()(lambda: fence.beat(1, force=True))
            return chunks.ChunkOutcome()

        self.monkeypatch.setitem(chunks.CHUNK_COMPUTERS, ChunkKind.REPLIES, compute)
        return chunk.pk

    def execute(self, pk: int) -> None:
        from scoring.services.chunks import ChunkLostError, chunk_claim_next, chunk_execute

        run_id = ScoringChunk.objects.filter(pk=pk).values_list("run_id", flat=True).get()
        claimed = chunk_claim_next(run_id=run_id, queue=None)
        if claimed is None:
            return
        with contextlib.suppress(ChunkLostError):  # as scoring_run_work does
            chunk_execute(claimed=claimed)


class ImportWork(Work):
    name = "import"
    model = ImportJob
    running = ImportJobStatus.RUNNING
    succeeded = ImportJobStatus.SUCCEEDED

    def create(self) -> int:
        from annotation.services.imports import READING

        self.settings.DIALEVAL_IMPORT_DIR = str(self.tmp_path / "imports")
        folder = self.tmp_path / "imports" / "job"
        folder.mkdir(parents=True)
        (folder / "file-00").write_bytes(b"{}\n")
        job = ImportJob.objects.create(
            study=StudyFactory.create(), format="jsonl", filenames=["a.jsonl"], folder="job", total_bytes=3
        )

        def study_import(*, study: Any, progress: Any, before_commit: Any, **kwargs: Any) -> StudyImport:
            self.next_body()(lambda: progress(READING, 1, 2))
            record = StudyImport.objects.create(study=study, format="jsonl")
            before_commit(record)
            return record

        self.monkeypatch.setattr("annotation.services.import_jobs.study_import", study_import)
        self.monkeypatch.setattr("annotation.services.import_jobs.PROGRESS_SECONDS", 0.0)
        return job.pk

    def execute(self, pk: int) -> None:
        from annotation.services.import_jobs import import_job_run

        import_job_run(job_id=pk)


class TrainingWork(Work):
    name = "training"
    model = TrainingJob
    running = TrainingStatus.RUNNING
    succeeded = TrainingStatus.SUCCEEDED

    def create(self) -> int:
        from scoring.metrics.training_progress import TrainingReport

        job = TrainingJob.objects.create(name="lease", kind="ruber", corpus="c", corpus_path="/c")
        self.monkeypatch.setattr("scoring.services.training_jobs.task_send", lambda *args, **kwargs: True)
        models = iter(range(100))

        def train(job: Any, reporter: Any) -> TrainedModel:
            self.next_body()(lambda: reporter(TrainingReport(stage="training", epoch=1)))
            folder = self.tmp_path / f"model-{next(models)}"
            folder.mkdir()
            return TrainedModel.objects.create(
                name=folder.name, kind="ruber", path=str(folder), content_hash="h"
            )

        self.monkeypatch.setattr("scoring.services.training_jobs._train", train)
        self.monkeypatch.setattr("scoring.services.training_jobs.PROGRESS_WRITE_SECONDS", 0.0)
        return job.pk

    def execute(self, pk: int) -> None:
        from scoring.services.training_jobs import training_job_run

        training_job_run(job_id=pk)

    def take_over(self, pk: int, body: Body) -> None:
        from scoring.services.training_jobs import training_jobs_recover

        self.go_silent(pk)
        training_jobs_recover()  # queued again: PENDING, its message sent
        self.run(pk, body)


class VectorsWork(Work):
    name = "word vectors"
    model = WordVectorsFile
    running = VectorsStatus.CONVERTING
    succeeded = VectorsStatus.READY

    def create(self) -> int:
        self.settings.DIALEVAL_VECTORS_DIR = str(self.tmp_path / "vectors")
        source = self.tmp_path / "vectors.txt"
        source.write_text("a 1 2\n", encoding="utf-8")
        vectors = WordVectorsFile.objects.create(
            name="lease", format="glove-text", source="path", source_path=str(source), size_bytes=6
        )
        self.monkeypatch.setattr("scoring.services.word_vectors.task_send", lambda *args, **kwargs: True)
        stores = iter(range(100))

        def convert(source: Any, fmt: Any, root: Any, reporter: Any) -> VectorStoreInfo:
            self.next_body()(lambda: reporter(1, 2))
            content_hash = f"{next(stores):064d}"
            return VectorStoreInfo(
                path=Path(root) / content_hash,
                content_hash=content_hash,
                dimension=2,
                words=1,
                size_bytes=6,
                duplicates=0,
                reused=False,
                format="glove-text",
                source_name="vectors.txt",
            )

        self.monkeypatch.setattr("scoring.services.word_vectors.convert_vectors_file", convert)
        self.monkeypatch.setattr("scoring.services.word_vectors.PROGRESS_WRITE_SECONDS", 0.0)
        return vectors.pk

    def execute(self, pk: int) -> None:
        from scoring.services.word_vectors import word_vectors_convert

        word_vectors_convert(vectors_id=pk)

    def take_over(self, pk: int, body: Body) -> None:
        from scoring.services.word_vectors import word_vectors_recover

        self.go_silent(pk)
        word_vectors_recover()  # queued again: PENDING, its message sent
        self.run(pk, body)


class JudgePreviewWork(Work):
    name = "judge preview"
    model = JudgePreview
    running = PreviewStatus.RUNNING
    succeeded = PreviewStatus.DONE

    def create(self) -> int:
        from scoring.metrics.llm_judge.definition import JudgeDefinition
        from scoring.metrics.llm_judge.recipes import G_EVAL
        from tests.scoring.llm_judge.examples import QUESTION

        study = StudyFactory.create()
        preview = JudgePreview.objects.create(
            requested_by=study.owner,
            study=study,
            key="lease",
            definition=JudgeDefinition(G_EVAL, QUESTION, "local", "m").as_json(),
            item={"context": ["hi"], "reply": "hello", "references": []},
        )

        def reading(definition: Any, item: Any, *, beat: Any) -> dict[str, Any]:
            self.next_body()(beat)
            return {"expected": 1.0}

        self.monkeypatch.setattr("scoring.judges.previews.preview_reading", reading)
        return preview.pk

    def execute(self, pk: int) -> None:
        from scoring.judges.previews import judge_preview_compute

        judge_preview_compute(preview_id=pk)


KINDS = [ReportWork, BundleWork, ChunkWork, ImportWork, TrainingWork, VectorsWork, JudgePreviewWork]


@pytest.fixture(params=KINDS, ids=lambda kind: kind.name.replace(" ", "-"))
def work(request: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Any) -> Work:
    return request.param(monkeypatch, tmp_path, settings)


def late_writes(work: Work, pk: int, ending: str, second: Body) -> Body:
    """Attempt 1's work: progress, then the takeover by attempt 2 (running ``second``), then attempt 1's
    late progress and its ``ending``; the row must not change from the takeover on."""
    seen: dict[str, Any] = {}

    def first(progress: Progress) -> None:
        progress()  # attempt 1 holds the work: its progress is written
        work.take_over(pk, second)
        seen["after takeover"] = work.row(pk)
        with contextlib.suppress(Exception):  # a lost attempt may be told so here: it stops, or goes on
            progress()
        assert work.row(pk) == seen["after takeover"], "a lost attempt wrote its progress"
        if ending == "failure":
            raise RuntimeError("the lost attempt fails late")

    work.run(pk, first)
    assert work.row(pk) == seen["after takeover"], f"a lost attempt's {ending} was written"
    return first


@pytest.mark.parametrize("ending", ["success", "failure"])
def test_a_lost_attempt_writes_nothing(work: Work, ending: str) -> None:
    """(a) The attempt that lost its claim writes neither progress nor its end; attempt 2 still runs."""
    pk = work.create()
    late_writes(work, pk, ending, pause)
    row = work.row(pk)
    assert row["status"] == work.running
    assert _attempts(work, row) == 2


def test_a_stale_claim_is_taken_over(work: Work) -> None:
    """(b) A claim whose heartbeat went stale is taken over by the next attempt, which can finish."""
    pk = work.create()
    work.run(pk, pause)
    assert work.row(pk)["status"] == work.running
    assert _attempts(work, work.row(pk)) == 1
    work.take_over(pk, succeed)
    row = work.row(pk)
    assert _attempts(work, row) == 2
    assert row["status"] == work.succeeded


def test_a_fresh_claim_is_not_taken_over(work: Work) -> None:
    """A second delivery while the holder's heartbeat is fresh does nothing."""
    pk = work.create()
    work.run(pk, pause)
    before = work.row(pk)
    work.run(pk, succeed)
    assert work.row(pk) == before
    work.bodies.clear()


@pytest.mark.parametrize("ending", ["success", "failure"])
def test_a_result_is_never_overwritten_by_a_lost_attempt(work: Work, ending: str) -> None:
    """(c) Attempt 2 stores its result; attempt 1, which lost the work, then ends late: nothing changes."""
    pk = work.create()
    late_writes(work, pk, ending, succeed)
    row = work.row(pk)
    assert row["status"] == work.succeeded
    assert _attempts(work, row) == 2


@pytest.mark.parametrize("ending", ["success", "failure"])
def test_a_report_tried_again_is_out_of_reach_of_the_failed_builds_attempts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Any, ending: str
) -> None:
    """ "Try again" after a report failed starts its attempts from 1 again, on a new row: the failed build's
    attempt 1, stalled rather than dead, then ends late and writes nothing into the new build's attempt 1."""
    from correlation.report.cache import report_retry

    work = ReportWork(monkeypatch, tmp_path, settings)
    pk = work.create()
    seen: dict[str, Any] = {}

    def first(progress: Progress) -> None:
        progress()
        ReportSnapshot.objects.filter(pk=pk).update(status=SnapshotStatus.FAILED, error="gave up")
        failed = ReportSnapshot.objects.get(pk=pk)
        report_retry(snapshot=failed)
        again = ReportSnapshot.objects.get(
            study_id=failed.study_id, options_key=failed.options_key, data_version=failed.data_version
        )
        work.run(again.pk, pause)  # the new build's attempt 1 holds it
        seen["pk"], seen["row"] = again.pk, work.row(again.pk)
        with contextlib.suppress(Exception):
            progress()
        if ending == "failure":
            raise RuntimeError("the failed build's attempt ends late")

    work.run(pk, first)
    assert work.row(seen["pk"]) == seen["row"]
    assert (seen["row"]["status"], seen["row"]["attempts"]) == (SnapshotStatus.RUNNING, 1)


def _attempts(work: Work, row: dict[str, Any]) -> int:
    if isinstance(work, VectorsWork):  # what the page shows agrees with the lease's column
        assert row["progress"]["attempts"] == row["attempts"]
    return int(row["attempts"])


def test_a_run_is_planned_by_one_attempt_and_its_lost_plan_writes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planning claims a pending run once: a second delivery finds it running and plans nothing; a running
    run is never taken over (its chunks are), and a plan's writes are fenced by its attempt."""
    from kernel.lease import Lease
    from scoring.services.planning import RUN_LEASE, scoring_run_plan

    run = ScoringRun.objects.create(study=StudyFactory.create(), metrics=["bleu-1"])
    assert scoring_run_plan(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.attempts) == (RunStatus.RUNNING, 1)
    ScoringRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(days=1))
    before = dict(ScoringRun.objects.filter(pk=run.pk).values().get())
    assert not scoring_run_plan(run_id=run.pk)  # a duplicate message, even long after
    lost = Lease(RUN_LEASE, run.pk, 0)  # an attempt before the one that planned it
    assert not lost.write(notes="late")
    assert not lost.finish(RunStatus.FAILED, error="late")
    assert dict(ScoringRun.objects.filter(pk=run.pk).values().get()) == before


def test_the_periodic_recovery_says_what_it_did_in_one_report_per_kind(settings: Any) -> None:
    """One pass returns one RecoveryReport per kind of work; the command prints those that did something."""
    from io import StringIO

    from django.core.management import call_command

    from kernel.lease import recovery_of
    from scoring.services import scoring_runs_recover

    job = TrainingJob.objects.create(
        name="cap",
        kind="ruber",
        corpus="c",
        corpus_path="/c",
        status=TrainingStatus.RUNNING,
        attempts=settings.DIALEVAL_TRAINING_MAX_ATTEMPTS,
        heartbeat_at=timezone.now() - timedelta(days=1),
    )
    reports = scoring_runs_recover()
    assert [report.kind for report in reports] == ["scoring run", "scoring chunk", "training", "word vectors"]
    assert recovery_of(reports, "training").failed == [job.pk]
    assert str(recovery_of(reports, "training")) == f"training: failed {job.pk}"
    out = StringIO()
    call_command("recover_scoring_runs", stdout=out)
    assert out.getvalue().strip() == "nothing to recover"

"""Scoring runs on a real database: what they store, which references they use, and how they recover."""

from __future__ import annotations

import math

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Response, Study
from kernel.lease import recovery_of
from scoring.metrics import METRICS_VERSION, registry
from scoring.metrics.spec import MetricSpec
from scoring.models import MetricScore, MetricSignature, RunStatus, ScoringRun
from scoring.selectors import metric_scores_for_study, metric_signatures_for_study
from scoring.services import (
    ScoringRequestError,
    chunk_queue,
    scoring_run_create,
    scoring_run_execute,
)
from scoring.services.recovery import RUN_KIND
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)
from tests.live_services import celery_broker, free_port
from tests.scoring.metric_batches import MetricBatch
from tests.scoring.metric_tester import assert_values_close
from tests.scoring.reference_metrics import nltk_bleu_reference

pytestmark = pytest.mark.django_db

ORIGINAL = "i am fine , thank you ."
COLLECTED = "not bad at all , and you ?"
REPLIES = {"echo": "i am fine , thank you .", "other": "not bad , and you ?", "short": "fine"}
# the stored scores against nltk's BLEU (tests/scoring/reference_metrics.py), which agrees to the last bits
NLTK_TOLERANCE = 1e-12


def nltk_bleu(texts: list[str], references: list[str], n: int, **options: str) -> list[float | None]:
    """nltk's BLEU-n of each text against ``references`` (the best one: Gupta et al., 2019, eq. 1)."""
    return nltk_bleu_reference(n, **options)(MetricBatch.of(texts, [references] * len(texts)))


def build_study(*, contexts: int = 2, language: str = "en") -> Study:
    """``contexts`` contexts, each with an original and a collected reference, answered by three systems."""
    study = StudyFactory.create(language=language)
    systems = {name: SystemFactory.create(study=study, name=name) for name in REPLIES}
    for index in range(contexts):
        context = DialogContextFactory.create(study=study, position=index)
        ReferenceFactory.create(
            context=context, text=COLLECTED, origin="collected"
        )  # first by id, but not original
        ReferenceFactory.create(context=context, text=ORIGINAL, origin="original")
        for name, system in systems.items():
            ResponseFactory.create(context=context, system=system, text=REPLIES[name])
    return study


def scores_by(study: Study, metric: str) -> dict[int, float]:
    return {
        s.response_id: s.value for s in metric_scores_for_study(study=study).filter(signature__name=metric)
    }


def run_sync(
    study: Study, metrics: list[str], references: str = "multi", *, recompute: bool = False
) -> ScoringRun:
    run = scoring_run_create(
        study=study, metrics=metrics, references=references, enqueue=False, recompute=recompute
    )
    return scoring_run_execute(run_id=run.pk)


def test_sync_run_stores_nltk_equal_scores_with_signatures() -> None:
    study = build_study()
    run = run_sync(study, ["bleu-1", "bleu-2", "bleu-4"], "multi")

    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.error == ""
    assert run.progress_done == run.progress_total == 18  # scores: 6 replies x 3 metrics
    assert run.attempts == 1
    assert run.started_at
    assert run.finished_at
    assert run.heartbeat_at
    assert set(run.timings) == {"bleu-1", "bleu-2", "bleu-4"}
    assert all(seconds >= 0 for seconds in run.timings.values())

    signatures = {s.name: s for s in metric_signatures_for_study(study=study)}
    assert (
        signatures["bleu-2"].text
        == f"bleu-2|case:lc|impl:nltk|refagg:max|refs:multi|smooth:method1|tok:en-v1|version:{METRICS_VERSION}"
    )
    assert signatures["bleu-2"].parameters["refs"] == "multi"
    assert signatures["bleu-2"].references_mode == "multi"
    assert signatures["bleu-2"].version == METRICS_VERSION
    assert MetricScore.objects.count() == 18
    responses = list(Response.objects.filter(context__study=study))
    for metric, n in (("bleu-1", 1), ("bleu-2", 2), ("bleu-4", 4)):
        stored = scores_by(study, metric)
        # Gupta et al., 2019, eq. 1: the multi-reference score is the best single-reference score
        expected = nltk_bleu([response.text for response in responses], [COLLECTED, ORIGINAL], n)
        assert_values_close([stored[response.pk] for response in responses], expected, NLTK_TOLERANCE, metric)


def test_single_uses_the_original_reference_and_multi_uses_all() -> None:
    study = build_study(contexts=1)
    single = run_sync(study, ["bleu-2"], "single")
    multi = run_sync(study, ["bleu-2"], "multi")
    assert single.status == multi.status == RunStatus.SUCCEEDED

    single_scores = {
        s.response.text: s.value
        for s in metric_scores_for_study(study=study).filter(signature__text__contains="refs:single")
    }
    multi_scores = {
        s.response.text: s.value
        for s in metric_scores_for_study(study=study).filter(signature__text__contains="refs:multi")
    }
    other = REPLIES["other"]
    assert_values_close([single_scores[other]], nltk_bleu([other], [ORIGINAL], 2), NLTK_TOLERANCE, "single")
    assert_values_close([multi_scores[other]], nltk_bleu([other], [COLLECTED], 2), NLTK_TOLERANCE, "multi")
    assert_values_close(
        [multi_scores[other]], nltk_bleu([other], [COLLECTED, ORIGINAL], 2), NLTK_TOLERANCE, "multi"
    )
    assert multi_scores[other] > single_scores[other]  # the collected reference is the closer one
    assert MetricSignature.objects.filter(name="bleu-2").count() == 2  # single and multi are different scores


def test_single_falls_back_to_the_first_reference_and_skips_contexts_without_one() -> None:
    study = StudyFactory.create()
    system = SystemFactory.create(study=study)
    collected_only = DialogContextFactory.create(study=study)
    ReferenceFactory.create(context=collected_only, text="first collected", origin="collected")
    ReferenceFactory.create(context=collected_only, text="second collected", origin="imported")
    no_reference = DialogContextFactory.create(study=study)
    scored = ResponseFactory.create(context=collected_only, system=system, text="first collected")
    skipped = ResponseFactory.create(context=no_reference, system=system, text="anything")

    run = run_sync(study, ["bleu-1", "bleu-2"], "single")

    assert run.status == RunStatus.SUCCEEDED
    assert run.progress_done == run.progress_total == 2  # 1 reply x 2 metrics; the other has no reference
    assert run.error == ""
    assert run.notes == "1 response(s) have no reference, so bleu-1, bleu-2 were not computed for them"
    assert scores_by(study, "bleu-1") == {scored.pk: pytest.approx(1.0)}
    assert not MetricScore.objects.filter(response=skipped).exists()


def test_executing_twice_keeps_one_row_per_response_and_signature() -> None:
    study = build_study()
    run = run_sync(study, ["bleu-1", "bleu-3"])
    first = {(s.response_id, s.signature_id): s.value for s in MetricScore.objects.all()}
    finished_at = run.finished_at

    again = scoring_run_execute(run_id=run.pk)  # a duplicate delivery of the same task
    assert again.status == RunStatus.SUCCEEDED
    assert again.attempts == 1
    assert again.finished_at == finished_at

    rerun = run_sync(study, ["bleu-3", "bleu-1"], recompute=True)  # rewrites the same rows
    assert rerun.status == RunStatus.SUCCEEDED
    assert rerun.progress_total == 12
    assert {(s.response_id, s.signature_id): s.value for s in MetricScore.objects.all()} == first
    assert MetricScore.objects.count() == 12


def test_a_rerun_updates_values_in_place() -> None:
    study = build_study(contexts=1)
    run_sync(study, ["bleu-1"])
    response = Response.objects.get(context__study=study, system__name="short")
    before = MetricScore.objects.get(response=response)
    Response.objects.filter(pk=response.pk).update(text=ORIGINAL)
    run_sync(study, ["bleu-1"], recompute=True)
    after = MetricScore.objects.get(response=response)
    assert after.pk == before.pk
    assert before.value < 1.0
    assert after.value == pytest.approx(1.0)
    assert after.computed_at >= before.computed_at


def test_a_second_run_computes_only_the_missing_scores() -> None:
    study = build_study(contexts=1)
    first = run_sync(study, ["bleu-1", "bleu-2"])
    assert first.progress_total == 6
    context = study.contexts.get()
    late = ResponseFactory.create(context=context, system__study=study, text="a late reply")

    second = run_sync(study, ["bleu-2", "bleu-1"])

    assert second.status == RunStatus.SUCCEEDED, second.error
    assert second.progress_total == 2  # the late reply's two scores; the other six are stored already
    assert set(scores_by(study, "bleu-1")) == set(
        Response.objects.filter(context__study=study).values_list("pk", flat=True)
    )
    assert late.pk in scores_by(study, "bleu-2")


def test_the_same_request_twice_is_one_run_and_a_finished_one_does_not_block_the_next() -> None:
    study = build_study(contexts=1)
    first = scoring_run_create(study=study, metrics=["bleu-1", "bleu-2"], enqueue=False)
    again = scoring_run_create(study=study, metrics=["bleu-2", "bleu-1", "bleu-1"], enqueue=False)
    other = scoring_run_create(study=study, metrics=["bleu-1"], references="single", enqueue=False)

    assert again.pk == first.pk
    assert again.was_existing
    assert not first.was_existing
    assert other.pk != first.pk  # a different request (references mode) is a different run
    assert ScoringRun.objects.count() == 2
    scoring_run_execute(run_id=first.pk)
    later = scoring_run_create(study=study, metrics=["bleu-1", "bleu-2"], enqueue=False)
    assert later.pk != first.pk
    assert not later.was_existing


def test_a_metric_raising_on_one_reply_records_it_and_scores_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fragile(inputs, params):
        if any("boom" in text for text in inputs.hypotheses):
            raise RuntimeError("cannot score a reply that says boom")
        return [float(len(text)) for text in inputs.hypotheses]

    spec = MetricSpec(
        name="fragile", description="test", needs_references=False, version="0", compute=fragile
    )
    monkeypatch.setitem(registry._SPECS, spec.name, spec)
    study = build_study(contexts=2)
    bad = Response.objects.filter(context__study=study).earliest("pk")
    Response.objects.filter(pk=bad.pk).update(text="boom")

    run = run_sync(study, ["fragile"])

    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.failures == [
        {
            "metric": "fragile",
            "response_id": bad.pk,
            "error": "RuntimeError: cannot score a reply that says boom",
        }
    ]
    assert "1 score(s) could not be computed, on 1 reply(ies)" in run.notes
    stored = scores_by(study, "fragile")
    assert bad.pk not in stored
    expected = {
        r.pk: float(len(r.text)) for r in Response.objects.filter(context__study=study).exclude(pk=bad.pk)
    }
    assert stored == expected


def test_a_failing_run_stores_a_readable_error_naming_the_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(inputs, params):
        raise OSError("the model file is missing")

    spec = MetricSpec(name="broken", description="test", needs_references=False, version="0", compute=broken)
    monkeypatch.setitem(registry._SPECS, spec.name, spec)
    study = build_study(contexts=1)

    failed = run_sync(study, ["bleu-1", "broken"])  # does not raise

    assert failed.status == RunStatus.FAILED
    assert failed.finished_at is not None
    first_line = failed.error.splitlines()[0]
    assert (
        first_line
        == "ChunkComputeError: broken failed on every reply of the chunk: OSError: the model file is missing"
    )
    first = Response.objects.filter(context__study=study).order_by("context_id", "id")[0]
    assert f"first failing reply: reply {first.pk} (system " in failed.error
    assert "Traceback (most recent call last)" in failed.error
    assert failed.chunks.filter(status="failed").count() == 1


def test_a_metric_returning_nan_is_recorded_naming_the_metric_and_reply(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def not_a_number(inputs, params):
        return [math.nan for _ in inputs.hypotheses]

    spec = MetricSpec(
        name="nan-metric", description="test", needs_references=False, version="0", compute=not_a_number
    )
    monkeypatch.setitem(registry._SPECS, spec.name, spec)
    study = build_study(contexts=1)

    run = run_sync(study, ["nan-metric"])

    assert run.status == RunStatus.SUCCEEDED
    assert len(run.failures) == 3
    assert {failure["error"] for failure in run.failures} == {"the metric gave the value nan"}
    assert not MetricScore.objects.exists()


@pytest.mark.parametrize(
    ("metrics", "references", "message"),
    [
        (
            ["bleu-1", "bleu-9"],
            "multi",
            "unknown metric 'bleu-9'; known metrics: bleu-1, bleu-2, bleu-3, bleu-4",
        ),
        ([], "multi", "choose at least one metric; known metrics: bleu-1"),
        ([" ", ""], "multi", "choose at least one metric"),
        ("bleu-1", "multi", "must be a list of metric names"),
        (["bleu-1"], "both", "unknown references mode 'both'; choose one of single, multi"),
    ],
)
def test_bad_requests_are_refused_and_create_nothing(
    metrics: list[str], references: str, message: str
) -> None:
    study = build_study(contexts=1)
    with pytest.raises(ScoringRequestError) as caught:
        scoring_run_create(study=study, metrics=metrics, references=references, enqueue=False)
    assert message in str(caught.value)
    assert not ScoringRun.objects.exists()


def test_create_expands_all_and_drops_duplicates() -> None:
    study = build_study(contexts=1)
    # of the baselines, those the default implementation (nltk) has: not CIDEr-D, chrF, ROUGE-Lsum
    untrained = [
        name
        for name in registry.available_metric_names()
        if not registry.metric_spec(name).model_kind
        and (
            not registry.metric_spec(name).implementations
            or "nltk" in registry.metric_spec(name).implementations
        )
    ]
    untrained += [name for name in registry.available_system_metric_names() if "chrf" not in name]
    assert scoring_run_create(study=study, metrics=["all"], enqueue=False).metrics == untrained
    run = scoring_run_create(study=study, metrics=["bleu-2", "bleu-1", "bleu-2"], enqueue=False)
    assert run.metrics == ["bleu-2", "bleu-1"]
    assert run.status == RunStatus.PENDING
    assert run.progress_total == 0  # planned by the worker


def test_create_enqueues_only_after_commit(django_capture_on_commit_callbacks) -> None:
    study = build_study(contexts=1)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        scoring_run_create(study=study, metrics=["bleu-1"], enqueue=False)
    assert callbacks == []
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        scoring_run_create(study=study, metrics=["bleu-2"])
    assert len(callbacks) == 1


def test_queue_routing_sends_gpu_preferring_metrics_to_gpu_only_when_a_gpu_worker_is_live(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert chunk_queue(metrics=["bleu-1", "bleu-4"], gpu_available=True) == settings.CELERY_TASK_DEFAULT_QUEUE
    assert chunk_queue(metrics=["bert-ruber-referenced"], gpu_available=True) == "gpu"
    assert chunk_queue(metrics=["bert-ruber-referenced"], gpu_available=False) == "cpu"
    assert chunk_queue(metrics=["ruber-referenced"], gpu_available=True) == "cpu"  # word2vec: no GPU gain


def test_a_run_with_tokenizer_none_scores_whitespace_tokens_under_tok_none() -> None:
    study = StudyFactory.create()
    context = DialogContextFactory.create(study=study)
    ReferenceFactory.create(context=context, text="see you at 2:00 , _UNK .", origin="original")
    response = ResponseFactory.create(context=context, text="see you at 2 , _UNK")
    run = scoring_run_create(
        study=study, metrics=["bleu-2", "distinct-1"], references="single", tokenizer="none", enqueue=False
    )
    assert run.tokenizer == "none"
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error

    score = MetricScore.objects.select_related("signature").get(response=response)
    assert (
        score.signature.text
        == f"bleu-2|case:mixed|impl:nltk|refs:single|smooth:method1|tok:none|version:{METRICS_VERSION}"
    )
    assert score.signature.parameters["tok"] == "none"
    reference = ["see you at 2:00 , _UNK ."]
    whitespace = nltk_bleu([response.text], reference, 2, tokenizer="none")
    assert response.text.split() == ["see", "you", "at", "2", ",", "_UNK"]  # what nltk scores, as it comes
    assert_values_close([score.value], whitespace, NLTK_TOLERANCE, "tok:none")
    assert score.value != pytest.approx(nltk_bleu([response.text], reference, 2)[0], abs=1e-6)
    system_signature = MetricSignature.objects.get(name="distinct-1")
    assert "|tok:none|" in system_signature.text

    default = run_sync(study, ["bleu-2"], "single")  # the default keeps the signature stored scores carry
    assert default.tokenizer == "default"
    assert MetricSignature.objects.filter(name="bleu-2").count() == 2
    assert MetricSignature.objects.filter(
        text=f"bleu-2|case:lc|impl:nltk|refs:single|smooth:method1|tok:en-v1|version:{METRICS_VERSION}"
    ).exists()


def test_an_unknown_tokenizer_is_refused_and_creates_nothing() -> None:
    study = build_study(contexts=1)
    with pytest.raises(
        ScoringRequestError, match="unknown tokenizer 'whitespace'; choose one of default, none"
    ):
        scoring_run_create(study=study, metrics=["bleu-1"], tokenizer="whitespace", enqueue=False)
    assert not ScoringRun.objects.exists()


def test_chinese_study_uses_the_chinese_tokenizer() -> None:
    pytest.importorskip("jieba")
    study = StudyFactory.create(language="zh")
    context = DialogContextFactory.create(study=study)
    ReferenceFactory.create(context=context, text="我爱北京天安门", origin="original")
    response = ResponseFactory.create(context=context, text="我爱北京")
    run = run_sync(study, ["bleu-1"])
    assert run.status == RunStatus.SUCCEEDED
    score = MetricScore.objects.select_related("signature").get(response=response)
    assert "|tok:zh-jieba|" in score.signature.text
    expected = nltk_bleu([response.text], ["我爱北京天安门"], 1, language="zh")
    assert_values_close([score.value], expected, NLTK_TOLERANCE, "zh")


def test_queries_do_not_grow_with_the_number_of_responses() -> None:
    def queries_for(contexts: int) -> int:
        study = build_study(contexts=contexts)
        run = scoring_run_create(study=study, metrics=["bleu-1", "bleu-2"], enqueue=False)
        with CaptureQueriesContext(connection) as captured:
            assert scoring_run_execute(run_id=run.pk).status == RunStatus.SUCCEEDED
        return len(captured)

    queries_for(1)  # creates the signature rows, which later runs reuse
    assert queries_for(2) == queries_for(12)  # 6 vs 36 responses, one chunk each: no per-response query


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_broker_leaves_the_run_pending_saying_so_and_recovery_sends_it_later(
    redis_server: str,
) -> None:
    from scoring.services import scoring_runs_recover

    study = build_study(contexts=1)
    with celery_broker(f"redis://127.0.0.1:{free_port()}/0"):  # nothing listens there
        run = scoring_run_create(study=study, metrics=["bleu-1"])  # commits, then tries to send
        run.refresh_from_db()
        assert run.status == RunStatus.PENDING
        assert run.enqueued_at is None
        assert run.notes.startswith("not queued yet: the task broker (Redis) is unreachable")
        assert (
            recovery_of(scoring_runs_recover(pending_grace_seconds=0), RUN_KIND).resent == []
        )  # still down: still pending
    # The broker is back. A database of the session's Redis that no worker consumes: a worker another
    # test left running would take the run and could still hold its rows while this test's teardown
    # truncates the tables (a deadlock on PostgreSQL).
    with celery_broker(redis_server.rsplit("/", 1)[0] + "/9"):
        report = scoring_runs_recover(pending_grace_seconds=0)
    run.refresh_from_db()
    assert recovery_of(report, RUN_KIND).resent == [run.pk]
    assert run.status == RunStatus.PENDING  # sent: pending until a worker takes it
    assert run.enqueued_at is not None
    assert run.notes == ""

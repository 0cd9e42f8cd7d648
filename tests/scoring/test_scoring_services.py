"""Scoring runs on a real database: what they store, which references they use, and how they recover."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from nltk.translate.bleu_score import SmoothingFunction
from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu

from annotation.models import Response, Study
from scoring.metrics import METRICS_VERSION, registry
from scoring.metrics.spec import MetricSpec
from scoring.metrics.tokenize import tokenize
from scoring.models import MetricScore, MetricSignature, RunStatus, ScoringRun
from scoring.selectors import metric_scores_for_study, metric_signatures_for_study
from scoring.services import (
    ScoringRequestError,
    scoring_run_create,
    scoring_run_execute,
    scoring_run_queue,
    scoring_run_takeover_delay,
)
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)
from tests.live_services import celery_broker, free_port

pytestmark = pytest.mark.django_db

ORIGINAL = "i am fine , thank you ."
COLLECTED = "not bad at all , and you ?"
REPLIES = {"echo": "i am fine , thank you .", "other": "not bad , and you ?", "short": "fine"}


def nltk_bleu(text: str, references: list[str], n: int) -> float:
    return float(
        nltk_sentence_bleu(
            [tokenize(reference) for reference in references],
            tokenize(text),
            weights=tuple(1 / n for _ in range(n)),
            smoothing_function=SmoothingFunction().method1,
        )
    )


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


def run_sync(study: Study, metrics: list[str], references: str = "multi", **kwargs: object) -> ScoringRun:
    run = scoring_run_create(study=study, metrics=metrics, references=references, enqueue=False)
    return scoring_run_execute(run_id=run.pk, **kwargs)  # type: ignore[arg-type]


def test_sync_run_stores_nltk_equal_scores_with_signatures() -> None:
    study = build_study()
    run = run_sync(study, ["bleu-1", "bleu-2", "bleu-4"], "multi")

    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.error == ""
    assert run.progress_done == run.progress_total == 6
    assert run.attempts == 1
    assert run.started_at
    assert run.finished_at
    assert run.heartbeat_at
    assert set(run.timings) == {"bleu-1", "bleu-2", "bleu-4"}
    assert all(seconds >= 0 for seconds in run.timings.values())

    signatures = {s.name: s for s in metric_signatures_for_study(study=study)}
    assert (
        signatures["bleu-2"].text
        == f"bleu-2|refagg:max|refs:multi|smooth:method1|tok:en-v1|version:{METRICS_VERSION}"
    )
    assert signatures["bleu-2"].parameters["refs"] == "multi"
    assert signatures["bleu-2"].references_mode == "multi"
    assert signatures["bleu-2"].version == METRICS_VERSION
    assert MetricScore.objects.count() == 18
    for metric, n in (("bleu-1", 1), ("bleu-2", 2), ("bleu-4", 4)):
        stored = scores_by(study, metric)
        for response in Response.objects.filter(context__study=study):
            # seed 003, eq. 1: the multi-reference score is the best single-reference score
            expected = max(nltk_bleu(response.text, [ref], n) for ref in (COLLECTED, ORIGINAL))
            assert stored[response.pk] == pytest.approx(expected, abs=1e-9), (metric, response.text)


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
    assert single_scores[other] == pytest.approx(nltk_bleu(other, [ORIGINAL], 2), abs=1e-9)
    assert multi_scores[other] == pytest.approx(nltk_bleu(other, [COLLECTED], 2), abs=1e-9)
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
    assert run.progress_done == run.progress_total == 2  # the skipped response still counts as processed
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

    rerun = run_sync(study, ["bleu-3", "bleu-1"])  # a new run of the same metrics rewrites the same rows
    assert rerun.status == RunStatus.SUCCEEDED
    assert {(s.response_id, s.signature_id): s.value for s in MetricScore.objects.all()} == first
    assert MetricScore.objects.count() == 12


def test_a_rerun_updates_values_in_place() -> None:
    study = build_study(contexts=1)
    run_sync(study, ["bleu-1"])
    response = Response.objects.get(context__study=study, system__name="short")
    before = MetricScore.objects.get(response=response)
    Response.objects.filter(pk=response.pk).update(text=ORIGINAL)
    run_sync(study, ["bleu-1"])
    after = MetricScore.objects.get(response=response)
    assert after.pk == before.pk
    assert before.value < 1.0
    assert after.value == pytest.approx(1.0)
    assert after.computed_at >= before.computed_at


def test_a_run_whose_worker_died_is_taken_over_once_stale() -> None:
    study = build_study(contexts=1)
    run = scoring_run_create(study=study, metrics=["bleu-2"], enqueue=False)
    stale = timezone.now() - timedelta(seconds=settings.DIALEVAL_RUN_STALE_SECONDS + 5)
    ScoringRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, attempts=1, heartbeat_at=stale)

    taken = scoring_run_execute(run_id=run.pk)

    assert taken.status == RunStatus.SUCCEEDED
    assert taken.attempts == 2
    assert MetricScore.objects.filter(response__context__study=study).count() == 3


def test_a_run_with_a_live_heartbeat_is_left_alone() -> None:
    study = build_study(contexts=1)
    run = scoring_run_create(study=study, metrics=["bleu-2"], enqueue=False)
    ScoringRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, attempts=1, heartbeat_at=timezone.now()
    )

    untouched = scoring_run_execute(run_id=run.pk)

    assert untouched.status == RunStatus.RUNNING
    assert untouched.attempts == 1
    assert not MetricScore.objects.exists()
    delay = scoring_run_takeover_delay(run=untouched)
    assert settings.DIALEVAL_RUN_STALE_SECONDS - 5 < delay <= settings.DIALEVAL_RUN_STALE_SECONDS


def test_an_attempt_that_lost_its_claim_stops_without_touching_the_run() -> None:
    study = build_study(contexts=3)  # 9 responses, in batches of 2
    run = scoring_run_create(study=study, metrics=["bleu-1"], enqueue=False)
    seen: list[int] = []

    def another_worker_takes_over(done: int, total: int) -> None:
        seen.append(done)
        if len(seen) == 1:  # what a second worker's claim does to the row after the first batch
            ScoringRun.objects.filter(pk=run.pk).update(attempts=2, progress_done=0)

    result = scoring_run_execute(run_id=run.pk, progress=another_worker_takes_over, batch_size=2)

    assert seen == [2]  # the next batch found the run no longer its own, and stopped
    assert result.status == RunStatus.RUNNING  # neither failed nor finished by the attempt that lost it
    assert result.attempts == 2
    assert result.progress_done == 0
    assert result.error == ""
    assert MetricScore.objects.count() == 2  # the first batch's scores (valid) stay; nothing after


def test_a_failing_run_stores_a_readable_error() -> None:
    study = build_study(contexts=1)
    run = scoring_run_create(study=study, metrics=["bleu-1"], enqueue=False)
    ScoringRun.objects.filter(pk=run.pk).update(metrics=["bleu-1", "gone-metric"])  # unregistered since

    failed = scoring_run_execute(run_id=run.pk)  # does not raise

    assert failed.status == RunStatus.FAILED
    assert failed.finished_at is not None
    first_line = failed.error.splitlines()[0]
    assert first_line.startswith("UnknownMetricError: unknown metric 'gone-metric'; known metrics: bleu-1")
    assert "Traceback (most recent call last)" in failed.error


def test_a_metric_returning_nan_fails_the_run_naming_the_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_a_number(hypotheses, references, queries, language, params):
        return [math.nan for _ in hypotheses]

    spec = MetricSpec(
        name="nan-metric", description="test", needs_references=False, version="0", compute=not_a_number
    )
    monkeypatch.setitem(registry._SPECS, spec.name, spec)
    study = build_study(contexts=1)

    failed = run_sync(study, ["nan-metric"])

    assert failed.status == RunStatus.FAILED
    assert failed.error.splitlines()[0].startswith("ValueError: nan-metric gave the value nan for response ")


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
    untrained = [
        name for name in registry.available_metric_names() if not registry.metric_spec(name).model_kind
    ]
    untrained += registry.available_system_metric_names()
    assert scoring_run_create(study=study, metrics=["all"], enqueue=False).metrics == untrained
    run = scoring_run_create(study=study, metrics=["bleu-2", "bleu-1", "bleu-2"], enqueue=False)
    assert run.metrics == ["bleu-2", "bleu-1"]
    assert run.status == RunStatus.PENDING
    assert run.progress_total == 3


def test_create_enqueues_only_after_commit(django_capture_on_commit_callbacks) -> None:
    study = build_study(contexts=1)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        scoring_run_create(study=study, metrics=["bleu-1"], enqueue=False)
    assert callbacks == []
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        scoring_run_create(study=study, metrics=["bleu-1"])
    assert len(callbacks) == 1


def test_queue_routing_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    assert scoring_run_queue(metrics=["bleu-1", "bleu-4"]) == settings.CELERY_TASK_DEFAULT_QUEUE == "cpu"
    spec = MetricSpec(
        name="learned-metric",
        description="test",
        needs_references=False,
        version="0",
        compute=lambda hypotheses, references, queries, language, params: [0.0] * len(hypotheses),
        needs_gpu=True,
    )
    monkeypatch.setitem(registry._SPECS, spec.name, spec)
    assert scoring_run_queue(metrics=["bleu-1", "learned-metric"]) == "gpu"


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
    assert score.signature.text == f"bleu-2|refs:single|smooth:method1|tok:none|version:{METRICS_VERSION}"
    assert score.signature.parameters["tok"] == "none"
    expected = nltk_sentence_bleu(
        [["see", "you", "at", "2:00", ",", "_UNK", "."]],
        ["see", "you", "at", "2", ",", "_UNK"],
        weights=(0.5, 0.5),
        smoothing_function=SmoothingFunction().method1,
    )
    assert score.value == pytest.approx(expected, abs=1e-12)
    assert score.value != pytest.approx(nltk_bleu(response.text, ["see you at 2:00 , _UNK ."], 2), abs=1e-6)
    system_signature = MetricSignature.objects.get(name="distinct-1")
    assert "|tok:none|" in system_signature.text

    default = run_sync(study, ["bleu-2"], "single")  # the default keeps the signature stored scores carry
    assert default.tokenizer == "default"
    assert MetricSignature.objects.filter(name="bleu-2").count() == 2
    assert MetricSignature.objects.filter(
        text=f"bleu-2|refs:single|smooth:method1|tok:en-v1|version:{METRICS_VERSION}"
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
    assert score.value == pytest.approx(nltk_bleu_zh(response.text, ["我爱北京天安门"]), abs=1e-9)


def nltk_bleu_zh(text: str, references: list[str]) -> float:
    return float(
        nltk_sentence_bleu(
            [tokenize(r, "zh") for r in references],
            tokenize(text, "zh"),
            weights=(1.0,),
            smoothing_function=SmoothingFunction().method1,
        )
    )


def test_queries_do_not_grow_with_the_number_of_responses() -> None:
    def queries_for(contexts: int) -> int:
        study = build_study(contexts=contexts)
        run = scoring_run_create(study=study, metrics=["bleu-1", "bleu-2"], enqueue=False)
        with CaptureQueriesContext(connection) as captured:
            assert scoring_run_execute(run_id=run.pk).status == RunStatus.SUCCEEDED
        return len(captured)

    queries_for(1)  # creates the signature rows, which later runs reuse
    assert queries_for(2) == queries_for(12)  # 6 vs 36 responses, one batch each: no per-response query


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_broker_fails_the_run_instead_of_leaving_it_pending() -> None:
    study = build_study(contexts=1)
    with celery_broker(f"redis://127.0.0.1:{free_port()}/0"):  # nothing listens there
        run = scoring_run_create(study=study, metrics=["bleu-1"])  # commits, then tries to enqueue
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.error.startswith("could not queue the run: the task broker is unreachable (")
    assert "is Redis running?" in run.error

"""Pairwise judges in scoring runs: asked for with a pairwise template on a study with a pairwise task,
planned into 'pairwise' chunks over the study's pairs of replies, computed by the real model through the
command line, stored one verdict per pair (a rerun skips judged pairs)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotation.models import PairwiseJudgment, Response, Study
from correlation.report.loading import study_unvalued_metrics
from scoring.judges.definitions import JudgeRequest, JudgeRequestError, judge_definitions, judge_metric_names
from scoring.metrics.llm_judge.local_model import LocalJudgeModel, model_content_hash
from scoring.metrics.llm_judge.pairwise import PAIRWISE_SCALE, Pair, local_pair_verdicts
from scoring.models import ChunkKind, JudgePairVerdict, MetricSignature, ScoringChunk, ScoringRun
from scoring.selectors import scoring_run_metrics_without_values
from scoring.services import GPU_QUEUE, ScoringRequestError, scoring_run_create, scoring_run_execute
from scoring.services.planning import scoring_run_plan
from tests.factories import AnnotatorFactory, QuestionFactory
from tests.scoring.llm_judge.pair_studies import PROMPT, item_pairs, pair_study, pairwise_judge_of

pytestmark = pytest.mark.django_db


def _planned(study: Study, names: list[str], *, gpu: bool = False, recompute: bool = False) -> ScoringRun:
    run = scoring_run_create(study=study, metrics=names, enqueue=False, recompute=recompute)
    assert scoring_run_plan(run_id=run.pk, gpu_available=gpu)
    run.refresh_from_db()
    return run


def test_a_pairwise_template_makes_one_judge_asking_the_studys_pairwise_question() -> None:
    study = pair_study()
    (definition,) = judge_definitions(study=study, request=JudgeRequest("pairwise"), user=None)
    assert definition.template.pairwise
    assert (definition.question.text, definition.question.scale) == (PROMPT, PAIRWISE_SCALE)
    assert definition.question.scale.labels == ("A", "B", "C")
    assert definition.question.scale.code == "A/B/C"
    name = pairwise_judge_of(study)
    assert name == f"llm-pairwise:{definition.key()}"
    asked_as_pairwise = judge_definitions(
        study=study, request=JudgeRequest("pairwise", pairwise=True), user=None
    )
    assert asked_as_pairwise == [definition]


def test_what_cannot_be_a_pairwise_judge_is_refused_naming_the_field() -> None:
    study = pair_study()
    with pytest.raises(
        JudgeRequestError, match=r"^template: 'g-eval' rates one reply; a pairwise judge needs"
    ):
        judge_definitions(study=study, request=JudgeRequest("g-eval", pairwise=True), user=None)
    with pytest.raises(
        JudgeRequestError, match=r"^questions: a pairwise judge asks the study's pairwise question"
    ):
        judge_definitions(study=study, request=JudgeRequest("pairwise", questions=("x",)), user=None)
    Study.objects.filter(pk=study.pk).update(pairwise_enabled=False)
    study.refresh_from_db()
    with pytest.raises(JudgeRequestError, match=r"^template: 'pairwise' compares two replies, and the study"):
        judge_definitions(study=study, request=JudgeRequest("pairwise"), user=None)
    with pytest.raises(CommandError, match="pairwise_enabled is off"):
        call_command("score_study", "paired", "--judge", "pairwise", "--sync")


def test_a_run_accepts_only_stored_pairwise_judges() -> None:
    study = pair_study()
    with pytest.raises(ScoringRequestError, match="'llm-pairwise:0123456789abcdef' names no pairwise judge"):
        scoring_run_create(study=study, metrics=["llm-pairwise:0123456789abcdef"], enqueue=False)
    QuestionFactory.create(study=study)
    rating = judge_metric_names(study=study, requests=[JudgeRequest("g-eval")], user=None)[0]
    as_pairwise = "llm-pairwise:" + rating.partition(":")[2]
    with pytest.raises(ScoringRequestError, match="asks the rating template 'g-eval', not a pairwise one"):
        scoring_run_create(study=study, metrics=[as_pairwise], enqueue=False)
    assert not ScoringRun.objects.exists()


def test_planning_makes_pairwise_chunks_of_the_studys_pairs_beside_the_metrics(
    settings, smollm2_path
) -> None:
    settings.DIALEVAL_SCORING_CHUNK_SIZE = 4
    study = pair_study()
    name = pairwise_judge_of(study)
    run = _planned(study, ["bleu-1", name], gpu=True)
    chunks = list(ScoringChunk.objects.filter(run=run, kind=ChunkKind.PAIRWISE).order_by("index"))
    assert [chunk.pairs for chunk in chunks] == [item_pairs(study)[:4], item_pairs(study)[4:]]
    assert len(item_pairs(study)) == 2 * 3
    assert [chunk.units for chunk in chunks] == [4, 2]
    assert {chunk.queue for chunk in chunks} == {GPU_QUEUE}  # a local model prefers a GPU, when one is live
    assert {tuple(chunk.metrics) for chunk in chunks} == {(name,)}
    assert ScoringChunk.objects.filter(run=run, kind=ChunkKind.REPLIES).exists()  # bleu-1 as ever
    assert run.progress_total == 6 * 1 + 6  # replies x bleu-1, and the pairs
    signature = MetricSignature.objects.get(pk=run.signatures[name])
    assert signature.name == name
    assert signature.origin == "builtin"
    assert signature.artifact_hash == model_content_hash(smollm2_path)[:16]
    parameters = signature.parameters
    assert parameters["template"].startswith("pairwise@")
    assert parameters["question"].startswith("pairwise@")
    assert (parameters["scale"], parameters["orders"], parameters["version"]) == ("A/B/C", "both", "1")
    assert parameters["artifact"] == signature.artifact_hash
    cpu = _planned(study, [name], recompute=True)
    assert set(ScoringChunk.objects.filter(run=cpu).values_list("queue", flat=True)) == {"cpu"}


def test_planning_skips_judged_pairs_and_takes_the_judgments_pairs_without_items(settings) -> None:
    settings.DIALEVAL_SCORING_CHUNK_SIZE = 100
    study = pair_study(items=False)
    annotator = AnnotatorFactory.create(study=study)
    replies = list(Response.objects.filter(context__study=study).order_by("pk").values_list("pk", flat=True))
    judged = [(replies[0], replies[1]), (replies[0], replies[2]), (replies[3], replies[4])]
    for first, second in judged:
        PairwiseJudgment.objects.create(
            annotator=annotator, response_a_id=first, response_b_id=second, choice="a", shown_first_id=first
        )
    name = pairwise_judge_of(study)
    run = _planned(study, [name])
    (chunk,) = ScoringChunk.objects.filter(run=run)
    assert chunk.pairs == [list(pair) for pair in judged]
    signature_id = run.signatures[name]
    JudgePairVerdict.objects.create(
        signature_id=signature_id,
        response_a_id=replies[0],
        response_b_id=replies[2],
        verdict="tie",
        mass_first=0.5,
        mass_second=0.5,
    )
    ScoringRun.objects.filter(pk=run.pk).update(status="succeeded")
    # verdicts are no per-reply scores: neither the run nor the report says the judge has no value
    assert scoring_run_metrics_without_values(run=run) == []
    assert study_unvalued_metrics(study=study, signatures=[]) == []
    rerun = _planned(study, [name])
    assert [chunk.pairs for chunk in ScoringChunk.objects.filter(run=rerun)] == [
        [list(judged[0]), list(judged[2])]
    ]
    ScoringRun.objects.filter(pk=rerun.pk).update(status="cancelled")
    everything = _planned(study, [name], recompute=True)
    assert [chunk.pairs for chunk in ScoringChunk.objects.filter(run=everything)] == [
        [list(p) for p in judged]
    ]


def test_score_study_stores_the_verdict_of_each_pair_and_a_rerun_judges_none_again(
    smollm2: LocalJudgeModel,
) -> None:
    study = pair_study(contexts=2, systems=2)
    call_command("score_study", "paired", "--judge", "pairwise", "--sync", "--threads", "1")
    (definition,) = judge_definitions(study=study, request=JudgeRequest("pairwise"), user=None)
    pairs = item_pairs(study)
    replies = {response.pk: response for response in Response.objects.filter(context__study=study)}
    expected = local_pair_verdicts(
        smollm2,
        definition.template,
        definition.question,
        [
            Pair(
                tuple(turn["text"] for turn in replies[first].context.turns),
                replies[first].text,
                replies[second].text,
            )
            for first, second in pairs
        ],
    )
    stored = {(row.response_a_id, row.response_b_id): row for row in JudgePairVerdict.objects.all()}
    assert sorted(stored) == [tuple(pair) for pair in pairs]
    for (first, second), verdict in zip(pairs, expected, strict=True):
        row = stored[(first, second)]
        assert row.verdict == verdict.verdict
        assert row.consistent == verdict.consistent
        values = (
            row.first_better,
            row.second_better,
            row.tie,
            row.position_bias,
            row.mass_first,
            row.mass_second,
        )
        wanted = (
            verdict.first_better,
            verdict.second_better,
            verdict.tie,
            verdict.position_bias,
            *verdict.mass,
        )
        assert values == pytest.approx(wanted, abs=1e-9)
    run = ScoringRun.objects.get()
    assert (run.status, run.progress_total, run.notes) == ("succeeded", len(pairs), "")
    assert {row.signature_id for row in stored.values()} == {run.signatures[pairwise_judge_of(study)]}
    computed = {key: row.computed_at for key, row in stored.items()}
    call_command("score_study", "paired", "--judge", "pairwise", "--sync", "--threads", "1")
    rerun = ScoringRun.objects.exclude(pk=run.pk).get()
    assert (rerun.status, rerun.progress_total) == ("succeeded", 0)
    assert not ScoringChunk.objects.filter(run=rerun).exists()
    assert {
        (row.response_a_id, row.response_b_id): row.computed_at for row in JudgePairVerdict.objects.all()
    } == computed


def test_a_judge_whose_model_is_gone_fails_its_run_naming_the_chunk(settings, smollm2_path) -> None:
    settings.DIALEVAL_LLM_LOCAL_MODELS = {"smollm2-copy": str(smollm2_path)}
    study = pair_study(contexts=1)
    (name,) = judge_metric_names(
        study=study, requests=[JudgeRequest("pairwise", model="smollm2-copy")], user=None
    )
    run = _planned(study, [name])
    settings.DIALEVAL_LLM_LOCAL_MODELS = {}  # the operator removed the model meanwhile
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == "failed"
    assert f"chunk 0 ({name} on 3 pairs of replies)" in run.error
    assert "no local model 'smollm2-copy'" in run.error
    assert not JudgePairVerdict.objects.exists()

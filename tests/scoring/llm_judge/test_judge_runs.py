"""Judges as metrics of a scoring run: asked for from the command line, computed through the chunks of the
engine, stored under signatures that name backend, model, template, question, scale and reading."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Response, Study
from scoring.judges.definitions import JudgeRequest, judge_definitions
from scoring.metrics.llm_judge.judging import JudgeSetup, local_readings, server_readings
from scoring.metrics.llm_judge.local_model import LocalJudgeModel, model_content_hash
from scoring.metrics.llm_judge.prompts import JudgeItem
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from scoring.metrics.llm_judge.server_client import Endpoint, MemoryCache, ServerJudge
from scoring.models import JudgeAnswer, MetricScore, ScoringRun
from tests.live_services import LlamaServer
from tests.scoring.llm_judge.studies import REPLIES, judged_study

pytestmark = pytest.mark.django_db


def _items(study: Study) -> tuple[list[int], list[JudgeItem]]:
    responses = list(Response.objects.filter(context__study=study).select_related("context").order_by("pk"))
    return [response.pk for response in responses], [
        JudgeItem(tuple(turn["text"] for turn in response.context.turns), response.text)
        for response in responses
    ]


def _stored(study: Study, name: str) -> dict[int, float]:
    return {
        score.response_id: score.value
        for score in MetricScore.objects.filter(response__context__study=study, signature__name=name)
    }


@pytest.mark.language_model
def test_score_study_judges_every_question_in_process(smollm2: LocalJudgeModel, smollm2_path) -> None:
    study = judged_study()
    call_command("score_study", "judged", "--judge", "g-eval", "--sync", "--threads", "1")
    definitions = judge_definitions(study=study, request=JudgeRequest("g-eval"), user=None)
    assert [definition.question.name for definition in definitions] == ["appropriateness", "engagingness"]
    run = ScoringRun.objects.get()
    assert set(run.metrics) == {name for d in definitions for name in (d.metric_name, d.mass_name)}
    ids, items = _items(study)
    for definition in definitions:
        expected = local_readings(smollm2, JudgeSetup(definition.template, definition.question), items)
        scores, masses = _stored(study, definition.metric_name), _stored(study, definition.mass_name)
        for response_id, result in zip(ids, expected, strict=True):
            assert scores[response_id] == pytest.approx(result.expected, abs=1e-9)
            assert masses[response_id] == pytest.approx(result.mass, abs=1e-9)
        signature = MetricScore.objects.filter(signature__name=definition.metric_name)[0].signature
        parameters = signature.parameters
        assert parameters["backend"] == "local"
        assert parameters["model"] == "smollm2-135m"
        assert parameters["artifact"] == model_content_hash(smollm2_path)[:16]
        assert parameters["template"] == f"g-eval@{BUILT_IN_TEMPLATES['g-eval'].content_hash()}"
        assert parameters["question"].startswith(f"{definition.question.name}@")
        assert parameters["scale"] == definition.question.scale.code
        assert parameters["read"] == "expectation"
        assert parameters["version"] == "1"
    scales = {definition.question.name: definition.question.scale.code for definition in definitions}
    assert scales == {"appropriateness": "0-2", "engagingness": "1-5"}


def test_the_command_names_what_is_wrong_with_a_judge() -> None:
    judged_study()
    with pytest.raises(CommandError, match="template: no prompt template 'geval'; the templates: g-eval"):
        call_command("score_study", "judged", "--judge", "geval", "--sync")
    with pytest.raises(CommandError, match="questions: fluency not in the study"):
        call_command("score_study", "judged", "--judge", "g-eval", "--judge-question", "fluency", "--sync")
    with pytest.raises(CommandError, match="model: 'gpt' is not one of the endpoints: none"):
        call_command(
            "score_study", "judged", "--judge", "g-eval", "--judge-backend", "server", "--judge-model", "gpt"
        )
    with pytest.raises(CommandError, match="template: 'pairwise' compares two replies"):
        call_command("score_study", "judged", "--judge", "pairwise", "--sync")
    assert not ScoringRun.objects.exists()


def test_a_server_judge_run_pays_once_and_a_rerun_asks_nothing(llama_server: LlamaServer, settings) -> None:
    settings.DIALEVAL_LLM_ENDPOINTS = [
        {
            "name": "llama",
            "base_url": llama_server.base_url,
            "model": "smollm2",
            "api_key_env": "DIALEVAL_TEST_KEY",
        }
    ]
    study = judged_study()
    arguments = [
        "judged",
        "--judge",
        "single-answer",
        "--judge-backend",
        "server",
        "--judge-question",
        "engagingness",
    ]
    before = llama_server.requests()
    call_command("score_study", *arguments, "--sync")
    run = ScoringRun.objects.get()
    assert llama_server.requests() - before == len(REPLIES)
    answers = JudgeAnswer.objects.filter(run=run)
    assert answers.count() == len(REPLIES)
    assert all(answer.prompt_tokens > 0 for answer in answers)
    (definition,) = judge_definitions(
        study=study, request=JudgeRequest("single-answer", "server", questions=("engagingness",)), user=None
    )
    ids, items = _items(study)
    setup = JudgeSetup(definition.template, definition.question)
    expected = server_readings(ServerJudge(settings_endpoint(llama_server), MemoryCache()), setup, items)
    stored = _stored(study, definition.metric_name)
    assert [stored[response_id] for response_id in ids] == pytest.approx(
        [r.expected for r in expected], abs=1e-9
    )
    signature = MetricScore.objects.filter(signature__name=definition.metric_name)[0].signature
    assert signature.parameters["model"] == "smollm2"
    assert signature.parameters["reads"] == "logprobs"
    assert "artifact" not in signature.parameters
    asked = llama_server.requests()
    call_command("score_study", *arguments, "--sync", "--recompute")
    assert llama_server.requests() == asked  # every answer came from the cache
    assert JudgeAnswer.objects.filter(run__isnull=False).count() == len(REPLIES)
    assert "sk-" not in json.dumps(list(JudgeAnswer.objects.values("answer")))


def settings_endpoint(server: LlamaServer) -> Endpoint:
    return Endpoint(name="check", base_url=server.base_url, model="smollm2")


def test_a_runs_chunks_share_the_endpoints_concurrency(settings) -> None:
    from scoring.judges.backends import chunk_workers

    settings.DIALEVAL_SCORING_PARALLEL_CHUNKS = 4
    assert [chunk_workers(concurrency) for concurrency in (1, 4, 8, 10)] == [1, 1, 2, 2]
    settings.DIALEVAL_SCORING_PARALLEL_CHUNKS = 1
    assert chunk_workers(8) == 8

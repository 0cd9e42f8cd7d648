"""A judge's preview before a run starts: the prompt shown is the one the judge's model reads (the
template's messages for the reply, the text sent where the app formats it), the reading computed by the
worker's task equals the run's, a preview is its asker's alone, and the estimate counts what a run costs."""

from __future__ import annotations

import math

import pytest
from rest_framework.test import APIClient

from scoring.judges.backends import endpoint_settings
from scoring.judges.definitions import JudgeRequest, judge_definitions
from scoring.judges.estimates import TOKEN_SAMPLE, judge_run_estimate
from scoring.judges.previews import judge_preview_compute
from scoring.judges.study_items import judge_items, study_reply_ids
from scoring.metrics.llm_judge.judging import JudgeSetup, local_readings
from scoring.metrics.llm_judge.local_model import LocalJudgeModel
from scoring.metrics.llm_judge.prompts import JudgeItem
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from scoring.metrics.llm_judge.server_client import MemoryCache, ServerJudge, ServerPrompt, formatted
from scoring.models import JudgeAnswer, JudgePreview, PreviewStatus
from tests.factories import ResearcherFactory
from tests.scoring.llm_judge.studies import REPLIES, judged_study

pytestmark = pytest.mark.django_db

ENDPOINT = {
    "name": "vllm",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "qwen",
    "api_key_env": "NO_SUCH_KEY",
}


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_prompt_shown_is_the_templates_messages_for_the_reply_chosen() -> None:
    study = judged_study()
    answer = _api(study.owner).get(
        f"/api/studies/{study.pk}/judge-preview/",
        {"template": "single-answer", "question": "engagingness", "position": "1", "references": "single"},
    )
    assert answer.status_code == 200, answer.content
    shown = answer.json()
    (definition,) = judge_definitions(
        study=study, request=JudgeRequest("single-answer", questions=("engagingness",)), user=study.owner
    )
    item = JudgeItem(("hello , how are you ?", "fine , and you ?"), REPLIES[0], ("the original reply",))
    system, user, prefix = BUILT_IN_TEMPLATES["single-answer"].messages(definition.question, item)
    assert (shown["system"], shown["user"], shown["answer_prefix"]) == (system, user, prefix)
    assert shown["judge"] == definition.metric_name
    assert shown["item"] == {
        "context": list(item.context),
        "reply": REPLIES[0],
        "references": ["the original reply"],
    }
    assert (shown["position"], shown["replies"]) == (1, 3)
    assert shown["formatted"] is None  # a local model's chat template comes with the reading
    multi = _api(study.owner).get(f"/api/studies/{study.pk}/judge-preview/", {"template": "g-eval"}).json()
    assert multi["item"]["references"] == ["another reference", "the original reply"]  # multi: every one
    assert multi["question"] == "appropriateness"  # the study's first


def test_an_endpoint_of_the_completions_api_shows_the_text_sent(settings) -> None:
    settings.DIALEVAL_LLM_ENDPOINTS = [ENDPOINT]
    study = judged_study()
    shown = (
        _api(study.owner)
        .get(
            f"/api/studies/{study.pk}/judge-preview/",
            {"template": "g-eval", "backend": "server", "model": "vllm", "position": "3"},
        )
        .json()
    )
    assert shown["item"]["reply"] == REPLIES[2]
    assert shown["formatted"] == formatted("chatml", shown["system"], shown["user"], shown["answer_prefix"])
    assert shown["formatted"].endswith("<|im_start|>assistant\n- appropriateness: ")
    settings.DIALEVAL_LLM_ENDPOINTS = [{**ENDPOINT, "api": "chat"}]
    chat = _api(study.owner).get(
        f"/api/studies/{study.pk}/judge-preview/", {"template": "g-eval", "backend": "server"}
    )
    assert chat.json()["formatted"] is None
    assert "chat template" in chat.json()["formatted_note"]


def test_a_preview_names_the_field_that_is_wrong_and_hides_other_studies() -> None:
    study = judged_study()
    client = _api(study.owner)
    url = f"/api/studies/{study.pk}/judge-preview/"
    assert client.get(url, {"template": "g-eval", "position": "4"}).json() == {
        "position": ["the study has 3 replies; choose 1 to 3"]
    }
    assert (
        client.get(url, {"template": "g-eval", "question": "fluency"})
        .json()["question"][0]
        .startswith("fluency not in the study")
    )
    assert "template" in client.get(url, {"template": "pairwise"}).json()
    assert _api(ResearcherFactory.create()).get(url, {"template": "g-eval"}).status_code == 404


@pytest.mark.language_model
def test_the_workers_reading_is_the_runs_and_shows_what_the_model_read(smollm2: LocalJudgeModel) -> None:
    study = judged_study()
    client = _api(study.owner)
    url = f"/api/studies/{study.pk}/judge-preview/"
    asked = client.post(url, {"template": "g-eval", "question": "engagingness", "position": 2}, format="json")
    assert asked.status_code == 202, asked.content
    assert asked["Location"] == f"/api/judge-previews/{asked.json()['id']}/"
    assert asked.json()["status"] == "pending"
    assert asked.json()["reading"] is None
    judge_preview_compute(preview_id=asked.json()["id"])  # the task's body, as a worker runs it
    preview = client.get(asked["Location"]).json()
    assert preview["status"] == "done", preview["error"]
    reading = preview["reading"]
    (definition,) = judge_definitions(
        study=study, request=JudgeRequest("g-eval", questions=("engagingness",)), user=study.owner
    )
    (item,) = judge_items(response_ids=study_reply_ids(study=study)[1:2], references="multi")
    (expected,) = local_readings(smollm2, JudgeSetup(definition.template, definition.question), [item])
    assert reading["labels"] == ["1", "2", "3", "4", "5"]
    assert reading["probabilities"] == pytest.approx(list(expected.probabilities), abs=1e-9)
    assert reading["expected"] == pytest.approx(expected.expected, abs=1e-9)
    assert reading["score"] == reading["expected"]
    assert reading["mass"] == pytest.approx(expected.mass, abs=1e-9)
    assert reading["formatted"] == smollm2.formatted(*definition.template.messages(definition.question, item))
    again = client.post(url, {"template": "g-eval", "question": "engagingness", "position": 2}, format="json")
    assert (again.status_code, again.json()["id"]) == (200, preview["id"])  # known: not computed twice
    assert _api(ResearcherFactory.create()).get(asked["Location"]).status_code == 404
    assert JudgePreview.objects.get().status == PreviewStatus.DONE


def test_a_lost_preview_is_sent_again_and_a_failure_says_why(settings) -> None:
    settings.DIALEVAL_LLM_ENDPOINTS = [{**ENDPOINT, "attempts": 1, "timeout": 1}]
    study = judged_study()
    client = _api(study.owner)
    body = {"template": "g-eval", "backend": "server", "model": "vllm"}
    first = client.post(f"/api/studies/{study.pk}/judge-preview/", body, format="json").json()
    judge_preview_compute(preview_id=first["id"])  # nothing listens on port 9
    failed = client.get(first["url"]).json()
    assert failed["status"] == "failed"
    assert "vllm (/completions) did not answer" in failed["error"]
    again = client.post(f"/api/studies/{study.pk}/judge-preview/", body, format="json")
    assert (again.status_code, again.json()["id"], again.json()["status"]) == (202, first["id"], "pending")


def test_the_estimate_counts_requests_cached_answers_and_prompt_tokens(settings) -> None:
    settings.DIALEVAL_LLM_ENDPOINTS = [ENDPOINT]
    study = judged_study()
    requests = [
        JudgeRequest("g-eval", "server"),
        JudgeRequest("single-answer", "server", questions=("engagingness",)),
    ]
    before = judge_run_estimate(study=study, requests=requests, user=study.owner, references="multi")
    assert (before.replies, before.judges, before.server_requests, before.cached) == (3, 3, 9, 0)
    assert before.local_passes == 0
    definition = judge_definitions(study=study, request=requests[1], user=study.owner)[0]
    items = judge_items(response_ids=study_reply_ids(study=study), references="multi")
    expected_tokens = 0
    for judge in [*judge_definitions(study=study, request=requests[0], user=study.owner), definition]:
        texts = [formatted("chatml", *judge.template.messages(judge.question, item)) for item in items]
        expected_tokens += math.ceil(sum(map(len, texts)) / len(texts) / 4) * len(items)
    assert len(items) < TOKEN_SAMPLE  # every reply sampled
    assert before.prompt_tokens == expected_tokens
    server = ServerJudge(endpoint_settings()["vllm"].endpoint(), MemoryCache())
    key = server.cache_key(
        server.request_body(ServerPrompt(*definition.template.messages(definition.question, items[0])))
    )
    JudgeAnswer.objects.create(key=key, endpoint="vllm", answer={})
    after = judge_run_estimate(study=study, requests=requests, user=study.owner, references="multi")
    assert (after.cached, after.to_send) == (1, 8)
    assert after.prompt_tokens < before.prompt_tokens
    assert "8 requests to send (1 answered from the cache)" in after.text
    local = _api(study.owner).get(
        f"/api/studies/{study.pk}/judge-estimate/",
        {"template": ["g-eval", "llm-eval"], "question": "engagingness"},
    )
    assert local.status_code == 200, local.content
    assert (local.json()["local_passes"], local.json()["server_requests"]) == (6, 0)
    assert "6 forward passes of the local model" in local.json()["text"]


def test_the_estimate_says_at_most_when_counting_the_cache_costs_too_much(settings, monkeypatch) -> None:
    settings.DIALEVAL_LLM_ENDPOINTS = [ENDPOINT]
    monkeypatch.setattr("scoring.judges.estimates.CACHE_COUNT_LIMIT", 5)
    study = judged_study()
    estimate = judge_run_estimate(
        study=study, requests=[JudgeRequest("g-eval", "server")], user=None, references="multi"
    )
    assert estimate.cached is None
    assert "at most 6 requests" in estimate.text

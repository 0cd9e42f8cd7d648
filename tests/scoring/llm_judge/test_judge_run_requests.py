"""Judges asked for by the study page's run form and by the run API: their metrics added to the run through
the run's service, errors under the field (and judge) they name, and what a run's judges cost."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from scoring.judges.definitions import JudgeRequest, judge_metric_names
from scoring.judges.usage import JudgeUsage, judge_usage_for_run, judge_usage_for_runs
from scoring.models import JudgeAnswer, ScoringRun
from scoring.services import scoring_run_create
from tests.factories import ResearcherFactory
from tests.scoring.llm_judge.studies import judged_study, logged_in

pytestmark = pytest.mark.django_db


def test_the_form_adds_the_judges_metrics_to_the_run() -> None:
    study = judged_study()
    posted = logged_in(study.owner).post(
        reverse("scoring:run-start", args=[study.pk]),
        {
            "references": "multi",
            "judge_templates": ["g-eval", "single-answer"],
            "judge_backend": "local",
            "judge_questions": ["engagingness"],
            "judge_read": "argmax",
        },
    )
    assert posted.status_code == 302
    run = ScoringRun.objects.get()
    expected = judge_metric_names(
        study=study,
        requests=[
            JudgeRequest(template, "local", "", ("engagingness",), "argmax")
            for template in ("g-eval", "single-answer")
        ],
        user=study.owner,
    )
    assert run.metrics == expected
    assert len(expected) == 4  # two judges (one question each), each a score and a mass
    page = logged_in(study.owner).get(reverse("annotation:study-detail", args=[study.pk])).content.decode()
    assert "g-eval on engagingness (smollm2-135m, local, argmax)" in page


def test_the_form_wants_a_metric_or_a_judge_and_names_the_judges_field() -> None:
    study = judged_study()
    client = logged_in(study.owner)
    url = reverse("scoring:run-start", args=[study.pk])
    client.post(url, {"references": "multi"})
    page = client.get(reverse("annotation:study-detail", args=[study.pk])).content.decode()
    assert "choose at least one metric or an LLM judge" in page
    client.post(url, {"references": "multi", "judge_templates": ["someone-elses"]})
    page = client.get(reverse("annotation:study-detail", args=[study.pk])).content.decode()
    assert 'id="judge_templates-errors"' in page
    assert "someone-elses is not one of the available choices" in page
    assert not ScoringRun.objects.exists()


def test_the_form_offers_only_what_the_operator_configured(settings) -> None:
    study = judged_study()
    settings.DIALEVAL_LLM_ENDPOINTS = [{"name": "vllm", "base_url": "http://127.0.0.1:9/v1", "model": "m"}]
    page = logged_in(study.owner).get(reverse("annotation:study-detail", args=[study.pk])).content.decode()
    assert 'value="vllm"' in page
    assert "http://127.0.0.1:9" not in page  # names only
    settings.DIALEVAL_LLM_ENDPOINTS = []
    settings.DIALEVAL_LLM_LOCAL_MODELS = {}
    page = logged_in(study.owner).get(reverse("annotation:study-detail", args=[study.pk])).content.decode()
    assert "No endpoint is configured" in page
    assert 'value="vllm"' not in page


def test_the_api_creates_a_run_with_judges_and_names_the_judge_and_field_that_is_wrong() -> None:
    study = judged_study()
    client = APIClient()
    client.force_authenticate(study.owner)
    url = f"/api/studies/{study.pk}/scoring-runs/"
    posted = client.post(
        url,
        {"metrics": ["bleu-1"], "judges": [{"template": "llm-eval", "questions": ["appropriateness"]}]},
        format="json",
    )
    assert posted.status_code == 202, posted.content
    judges = judge_metric_names(
        study=study, requests=[JudgeRequest("llm-eval", questions=("appropriateness",))], user=study.owner
    )
    assert posted.json()["metrics"] == ["bleu-1", *judges]
    assert posted.json()["judge_usage"] == {
        "answers": 0,
        "requests": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
    }
    refused = client.post(
        url,
        {"judges": [{"template": "g-eval"}, {"template": "g-eval", "backend": "server", "model": "gpt"}]},
        format="json",
    )
    assert refused.status_code == 400
    assert refused.json() == {"judges": {"1": {"model": ["'gpt' is not one of the endpoints: none"]}}}
    refused = client.post(url, {"judges": [{"template": "g-eval", "read": "mean"}]}, format="json")
    assert refused.status_code == 400
    assert "read" in refused.json()["judges"]["0"]  # the shape's own check, nested alike
    assert ScoringRun.objects.count() == 1


def test_all_metrics_keep_the_judges_asked_beside_them() -> None:
    study = judged_study()
    run = scoring_run_create(
        study=study, metrics=["all"], judges=[JudgeRequest("g-eval")], user=study.owner, enqueue=False
    )
    judges = [name for name in run.metrics if name.startswith("llm-judge")]
    assert len(judges) == 4
    assert "bleu-1" in run.metrics


def test_a_runs_usage_sums_the_answers_it_paid_for() -> None:
    study = judged_study()
    first = scoring_run_create(study=study, metrics=["bleu-1"], enqueue=False)
    second = scoring_run_create(study=study, metrics=["bleu-2"], enqueue=False)
    rows = [(first, 100, 1, 1), (first, 150, 1, 2), (second, 70, 2, 1), (None, 999, 9, 9)]
    for index, (run, prompt, completion, requests) in enumerate(rows):
        JudgeAnswer.objects.create(
            key=f"k{index}",
            endpoint="e",
            answer={},
            run=run,
            prompt_tokens=prompt,
            completion_tokens=completion,
            requests=requests,
        )
    assert judge_usage_for_run(run_id=first.pk) == JudgeUsage(2, 3, 250, 2)
    empty = scoring_run_create(study=study, metrics=["bleu-4"], enqueue=False)
    assert judge_usage_for_runs(run_ids=[second.pk, empty.pk]) == {
        second.pk: JudgeUsage(1, 1, 70, 2),
        empty.pk: JudgeUsage(),
    }
    client = APIClient()
    client.force_authenticate(study.owner)
    detail = client.get(f"/api/scoring-runs/{first.pk}/").json()
    assert detail["judge_usage"] == {
        "answers": 2,
        "requests": 3,
        "prompt_tokens": 250,
        "completion_tokens": 2,
    }
    listed = {
        run["id"]: run["judge_usage"] for run in client.get(f"/api/studies/{study.pk}/scoring-runs/").json()
    }
    assert listed[second.pk]["prompt_tokens"] == 70
    stranger = APIClient()
    stranger.force_authenticate(ResearcherFactory.create())
    assert stranger.get(f"/api/scoring-runs/{first.pk}/").status_code == 404

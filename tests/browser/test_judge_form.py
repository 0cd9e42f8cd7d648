"""A researcher picks an LLM judge in the study page's run form, reads the estimate and the prompt its model
will read for a reply, asks for the reading (no worker listens: the page says so), starts the run, and the run,
executed in this process as ``score_study --sync`` does, stores the judge's scores (SmolLM2, in-process)."""

from __future__ import annotations

import pytest

from scoring.judges.definitions import JudgeRequest, judge_definitions
from scoring.judges.study_items import judge_items, study_reply_ids
from scoring.models import MetricScore, ScoringRun
from scoring.services import scoring_run_execute
from tests.browser_fixtures import log_in
from tests.factories import ResearcherFactory
from tests.live_services import celery_broker, free_port
from tests.scoring.llm_judge.studies import REPLIES, judged_study

pytestmark = [pytest.mark.browser]


def test_a_judge_is_picked_previewed_and_run(page, live_server, transactional_db) -> None:
    researcher = ResearcherFactory.create(username="judge-researcher")
    study = judged_study(researcher)
    log_in(page, live_server, researcher)
    with celery_broker(f"redis://127.0.0.1:{free_port()}/0"):  # nothing listens: no worker
        page.goto(f"{live_server.url}/studies/{study.pk}/")
        page.eval_on_selector_all(
            "input[name=metrics]", "boxes => boxes.forEach(box => { box.checked = false; })"
        )
        page.check("input[name=judge_templates][value=g-eval]")
        page.check("input[name=judge_questions][value=engagingness]")
        page.locator("#judge-estimate", has_text="forward passes").wait_for()  # no eval: the page's CSP
        assert "1 judge × 3 replies: 3 forward passes" in page.inner_text("#judge-estimate")

        page.click("#judge-preview summary")
        page.select_option("#judge-preview-template", "g-eval")
        page.select_option("#judge-preview-question", "engagingness")
        page.fill("#judge-preview-position", "2")
        page.click("#judge-preview-show")
        page.wait_for_selector("#judge-preview-output:not([hidden])")
        (definition,) = judge_definitions(
            study=study, request=JudgeRequest("g-eval", questions=("engagingness",)), user=researcher
        )
        (item,) = judge_items(response_ids=study_reply_ids(study=study)[1:2], references="multi")
        system, user, prefix = definition.template.messages(definition.question, item)
        assert REPLIES[1] in user
        assert page.text_content("#judge-prompt-user") == user
        assert page.text_content("#judge-prompt-system") == system
        assert page.text_content("#judge-prompt-prefix") == prefix
        assert "Reply 2 of 3" in page.inner_text("#judge-preview-item")

        page.click("#judge-preview-read")
        page.locator("#judge-reading-status", has_text="no worker could be reached").wait_for()

        page.click("#scoring-form button[type=submit]")
        page.wait_for_selector(".messages li.success")
    run = ScoringRun.objects.get()
    assert run.metrics == [definition.metric_name, definition.mass_name]
    run = scoring_run_execute(run_id=run.pk)  # what score_study --sync does, here in the test's process
    assert run.status == "succeeded", run.error
    assert MetricScore.objects.filter(signature__name=definition.metric_name).count() == len(REPLIES)
    page.reload()
    row = page.inner_text(f"#run-{run.pk}")
    assert "g-eval on engagingness (smollm2-135m, local, expectation)" in row
    assert "finished" in row.lower() or "succeeded" in row.lower()


def test_a_server_judge_is_picked_run_and_its_usage_shown(
    page, live_server, transactional_db, settings, llama_server
) -> None:
    settings.DIALEVAL_LLM_ENDPOINTS = [
        {"name": "llama", "base_url": llama_server.base_url, "model": "smollm2"}
    ]
    researcher = ResearcherFactory.create(username="server-judge-researcher")
    study = judged_study(researcher)
    log_in(page, live_server, researcher)
    with celery_broker(f"redis://127.0.0.1:{free_port()}/0"):  # nothing listens: the run is executed below
        page.goto(f"{live_server.url}/studies/{study.pk}/")
        page.eval_on_selector_all(
            "input[name=metrics]", "boxes => boxes.forEach(box => { box.checked = false; })"
        )
        page.check("input[name=judge_templates][value=single-answer]")
        page.check("input[name=judge_backend][value=server]")
        page.select_option("select[name=judge_model]", "llama")
        page.check("input[name=judge_questions][value=engagingness]")
        page.locator("#judge-estimate", has_text="requests").wait_for()
        page.click("#scoring-form button[type=submit]")
        page.wait_for_selector(".messages li.success")
    (definition,) = judge_definitions(
        study=study,
        request=JudgeRequest("single-answer", "server", "llama", questions=("engagingness",)),
        user=researcher,
    )
    run = ScoringRun.objects.get()
    assert run.metrics == [definition.metric_name, definition.mass_name]
    before = llama_server.requests()
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == "succeeded", run.error
    assert llama_server.requests() - before == len(REPLIES)
    assert MetricScore.objects.filter(signature__name=definition.metric_name).count() == len(REPLIES)
    page.reload()
    row = page.inner_text(f"#run-{run.pk}")
    assert "single-answer on engagingness (llama, server, expectation)" in row
    assert f"{len(REPLIES)} requests" in row

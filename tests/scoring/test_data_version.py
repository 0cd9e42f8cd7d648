"""Metric scores change the correlation report, so every committed write of them bumps the study's data
version (annotation/services/data_version.py): each batch of a scoring run, each system-level metric, and
the admin's edits; a batch that rolls back, a run that stores nothing, and creating a run bump nothing.

The bumps run in ``transaction.on_commit``; ``committed()`` runs the callbacks of what committed and drops
those of a rolled-back savepoint, as a real commit does.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Study
from annotation.services.data_version import study_data_version
from scoring.models import MetricScore, MetricSignature, RunStatus, ScoringRun, SystemMetricScore
from scoring.services import scoring_run_create, scoring_run_execute
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)
from tests.form_posts import admin_post_data, admin_url

pytestmark = pytest.mark.django_db


def version(study: Study) -> int:
    return study_data_version(study_id=study.pk)


def build_study(*, contexts: int = 3, references: bool = True) -> Study:
    """``contexts`` contexts (with a reference unless told), each answered by two systems."""
    study = StudyFactory.create()
    systems = [SystemFactory.create(study=study, name=name) for name in ("echo", "other")]
    for index in range(contexts):
        context = DialogContextFactory.create(study=study, position=index)
        if references:
            ReferenceFactory.create(context=context, text=f"i am fine , thanks . {index}", origin="original")
        for system in systems:
            ResponseFactory.create(context=context, system=system, text=f"{system.name} is fine {index} .")
    return study


def run(study: Study, metrics: list[str], batch_size: int = 256) -> ScoringRun:
    created = scoring_run_create(study=study, metrics=metrics, enqueue=False)
    return scoring_run_execute(run_id=created.pk, batch_size=batch_size)


def test_a_run_bumps_once_per_committed_batch_of_scores(committed) -> None:
    study = build_study(contexts=3)  # 6 responses
    before = version(study)
    with committed():
        done = run(study, ["bleu-1", "bleu-2"])  # one batch, two metrics
    assert done.status == RunStatus.SUCCEEDED
    assert MetricScore.objects.filter(response__context__study=study).count() == 12
    assert version(study) == before + 1
    with committed():
        run(study, ["bleu-1"], batch_size=4)  # two batches: a report read between them is stale after
    assert version(study) == before + 3


def test_system_level_scores_bump_once_per_metric_written(committed) -> None:
    study = build_study(contexts=3)
    before = version(study)
    with committed():
        done = run(study, ["distinct-1", "distinct-2"])
    assert done.status == RunStatus.SUCCEEDED
    assert SystemMetricScore.objects.filter(system__study=study).count() == 4
    assert version(study) == before + 2


def test_a_batch_rolled_back_by_a_lost_claim_bumps_nothing(committed) -> None:
    study = build_study(contexts=3)
    created = scoring_run_create(study=study, metrics=["bleu-1"], enqueue=False)

    def another_worker_takes_over(done: int, total: int) -> None:
        ScoringRun.objects.filter(pk=created.pk).update(attempts=99)

    before = version(study)
    with committed():
        result = scoring_run_execute(run_id=created.pk, progress=another_worker_takes_over, batch_size=2)
    assert result.attempts == 99  # the second batch found the run no longer its own and rolled back
    assert MetricScore.objects.filter(response__context__study=study).count() == 2
    assert version(study) == before + 1  # the first batch's scores, committed, and nothing after


def test_creating_a_run_and_a_run_that_stores_nothing_bump_nothing(committed) -> None:
    study = build_study(contexts=2, references=False)  # BLEU needs references: every response is skipped
    before = version(study)
    with committed():
        created = scoring_run_create(study=study, metrics=["bleu-1"], enqueue=False)
    assert version(study) == before
    with committed():
        done = scoring_run_execute(run_id=created.pk)
    assert done.status == RunStatus.SUCCEEDED
    assert "have no reference" in done.notes
    assert not MetricScore.objects.exists()
    assert version(study) == before


def test_a_run_that_fails_before_storing_bumps_nothing(committed) -> None:
    study = build_study(contexts=1)
    created = scoring_run_create(study=study, metrics=["bleu-1"], enqueue=False)
    ScoringRun.objects.filter(pk=created.pk).update(metrics=["bleu-1", "gone-metric"])  # unregistered since
    before = version(study)
    with committed():
        failed = scoring_run_execute(run_id=created.pk)
    assert failed.status == RunStatus.FAILED
    assert version(study) == before


def test_score_study_sync_bumps(committed) -> None:
    study = build_study(contexts=2)
    before = version(study)
    with committed():
        call_command("score_study", str(study.pk), "--metrics", "bleu-1", "--sync", stdout=StringIO())
    assert MetricScore.objects.filter(response__context__study=study).count() == 4
    assert version(study) > before


# ---- the admin ----------------------------------------------------------------------------------------


def _scored_study() -> tuple[Study, MetricScore, SystemMetricScore]:
    study = build_study(contexts=2)
    run(study, ["bleu-1", "distinct-1"])
    return (
        study,
        MetricScore.objects.filter(response__context__study=study).earliest("pk"),
        SystemMetricScore.objects.filter(system__study=study).earliest("pk"),
    )


@pytest.mark.parametrize("level", ["response", "system"])
def test_an_admin_save_or_deletion_of_a_score_bumps_its_study(admin_client, committed, level) -> None:
    study, response_score, system_score = _scored_study()
    bystander, *_ = _scored_study()
    score = response_score if level == "response" else system_score
    data = admin_post_data(admin_client.get(admin_url(score)))
    data["value"] = "0.5"
    before, unrelated = version(study), version(bystander)
    with committed():
        assert admin_client.post(admin_url(score), data).status_code == 302
    assert type(score).objects.get(pk=score.pk).value == 0.5
    assert version(study) == before + 1
    with committed():
        assert admin_client.post(admin_url(score, "delete"), {"post": "yes"}).status_code == 302
    assert not type(score).objects.filter(pk=score.pk).exists()
    assert version(study) == before + 2
    assert version(bystander) == unrelated


def test_an_admin_edit_of_a_signature_bumps_every_study_scored_with_it(admin_client, committed) -> None:
    """A signature's name and text are in the report of every study with a score under it."""
    by_response, _, _ = _scored_study()
    by_system, _, _ = _scored_study()
    MetricScore.objects.filter(response__context__study=by_system).delete()
    SystemMetricScore.objects.filter(system__study=by_response).delete()
    unscored = build_study(contexts=1)
    signature = MetricSignature.objects.get(name="bleu-1")
    system_signature = MetricSignature.objects.get(name="distinct-1")
    # One study has only the response-level signature's scores, the other only the system-level one's.
    studies = [by_response, by_system, unscored]
    before = [version(study) for study in studies]
    with committed():
        for edited in (signature, system_signature):
            data = admin_post_data(admin_client.get(admin_url(edited)))
            data["version"] = "9.9.9"
            assert admin_client.post(admin_url(edited), data).status_code == 302
    assert [version(study) for study in studies] == [before[0] + 1, before[1] + 1, before[2]]

"""Metric scores change the correlation report, so every committed write of them bumps the study's data
version (kernel/data_version.py): each batch of a scoring run, each system-level metric, and
the admin's edits; a run that leaves a metric without any value, once at its end (the report lists the
metric with the reason); a batch that rolls back and creating a run bump nothing.

The bumps run in ``transaction.on_commit``; ``committed()`` runs the callbacks of what committed and drops
those of a rolled-back savepoint, as a real commit does.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Study
from kernel.data_version import study_data_version
from scoring.metrics.registry import compute_metrics
from scoring.models import (
    ChunkStatus,
    MetricScore,
    MetricSignature,
    RunStatus,
    ScoringChunk,
    ScoringRun,
    SystemMetricScore,
)
from scoring.services import chunks, scoring_run_create, scoring_run_execute
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


def run(study: Study, metrics: list[str], *, recompute: bool = False) -> ScoringRun:
    created = scoring_run_create(study=study, metrics=metrics, enqueue=False, recompute=recompute)
    return scoring_run_execute(run_id=created.pk)


def test_a_run_bumps_once_per_committed_chunk_of_scores(committed, settings) -> None:
    study = build_study(contexts=3)  # 6 responses
    before = version(study)
    with committed():
        done = run(study, ["bleu-1", "bleu-2"])  # one batch, two metrics
    assert done.status == RunStatus.SUCCEEDED
    assert MetricScore.objects.filter(response__context__study=study).count() == 12
    assert version(study) == before + 1
    settings.DIALEVAL_SCORING_CHUNK_SIZE = 4
    with committed():
        run(study, ["bleu-1"], recompute=True)  # two chunks: a report read between them is stale after
    assert version(study) == before + 3


def test_system_level_scores_bump_once_per_chunk_written(committed) -> None:
    study = build_study(contexts=3)
    before = version(study)
    with committed():
        done = run(study, ["distinct-1", "distinct-2"])
    assert done.status == RunStatus.SUCCEEDED
    assert SystemMetricScore.objects.filter(system__study=study).count() == 4
    assert version(study) == before + 1  # both system-level metrics are one chunk


def test_a_chunk_that_lost_its_claim_stores_nothing_and_bumps_nothing(
    committed, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DIALEVAL_SCORING_CHUNK_SIZE = 2
    study = build_study(contexts=3)  # 6 responses: three chunks of bleu-1
    created = scoring_run_create(study=study, metrics=["bleu-1"], enqueue=False)
    calls: list[int] = []

    def taken_over_during_the_second_chunk(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # what another worker's claim of this stale chunk does to its row
            ScoringChunk.objects.filter(run=created, status=ChunkStatus.RUNNING).update(attempts=99)
        return compute_metrics(*args, **kwargs)

    monkeypatch.setattr(chunks, "compute_metrics", taken_over_during_the_second_chunk)
    before = version(study)
    with committed():
        result = scoring_run_execute(run_id=created.pk)
    assert result.status == RunStatus.RUNNING  # the taken-over chunk belongs to its new owner now
    lost = ScoringChunk.objects.get(run=created, attempts=99)
    assert lost.status == ChunkStatus.RUNNING
    stored = set(
        MetricScore.objects.filter(response__context__study=study).values_list("response_id", flat=True)
    )
    assert stored.isdisjoint(lost.response_ids)
    assert len(stored) == 4
    assert version(study) == before + 2  # the two chunks that committed, nothing for the lost one


def test_creating_a_run_bumps_nothing_and_a_run_that_stores_nothing_bumps_once_at_its_end(committed) -> None:
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
    # no score, but the report now lists bleu-1 as a metric without values: one bump, at the end
    assert version(study) == before + 1


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

"""Every write that can change a study's correlation report bumps ``Study.data_version`` once, after it
commits; a write that is refused or rolled back, and a read, bump nothing (annotation/services/
data_version.py). Metric scores written by scoring runs: tests/scoring/test_data_version.py.

Bumps run in ``transaction.on_commit``: the tests run each write under
``django_capture_on_commit_callbacks(execute=True)``, which runs the callbacks of what committed and
drops those of a rolled-back savepoint, as a real commit does; one test goes through real commits.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from typing import Any

import pytest
from django.contrib import admin
from django.db import transaction
from django.db.models import F
from django.test import Client, RequestFactory
from django.utils import timezone

from annotation.importers import ImportFile, ImportRejected
from annotation.models import (
    Adjudication,
    Annotator,
    DialogContext,
    ImportedMeanRating,
    PairwiseJudgment,
    Rating,
    Reference,
    Response,
    Study,
    System,
    WorkKind,
)
from annotation.services.annotator_review import ReviewInvalid, annotator_inclusion_set
from annotation.services.assignment import assignment_skip, next_assignment
from annotation.services.checks import distractors_generate
from annotation.services.imports import study_import
from annotation.services.studies import QuestionSpec, study_create
from annotation.services.study_settings import AnnotationSettings, SettingsInvalid, annotation_settings_update
from annotation.services.submissions import (
    SubmissionInvalid,
    diversity_submit,
    rating_submit,
    reference_add,
)
from annotation.services.work_items import work_items_sync
from kernel.data_version import study_data_version
from tests.annotation.test_import_atomicity import refuse_rating_value_2  # noqa: F401 (a fixture)
from tests.annotation.work_builders import annotators, work_study
from tests.factories import (
    AnnotatorFactory,
    DialogContextFactory,
    RatingFactory,
    ReferenceFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
)
from tests.form_posts import admin_post_data, admin_url, form_values

pytestmark = pytest.mark.django_db


def version(study: Study) -> int:
    return study_data_version(study_id=study.pk)


def _two_question_study() -> Study:
    owner = ResearcherFactory.create()
    study = study_create(
        owner=owner,
        name=f"two questions {owner.pk}",
        ratings_per_item=2,
        questions=[QuestionSpec("appropriateness", 0, 2), QuestionSpec("fluency", 1, 5)],
    )
    Study.objects.filter(pk=study.pk).update(check_interval=0)
    system = SystemFactory.create(study=study)
    for index in range(2):
        context = DialogContextFactory.create(study=study)
        ResponseFactory.create(context=context, system=system, text=f"reply {index}")
    work_items_sync(study=study)
    return Study.objects.get(pk=study.pk)


# ---- studies and their settings ---------------------------------------------------------------------


def test_creating_a_study_with_its_questions_bumps_once(committed) -> None:
    with committed():
        study = study_create(
            owner=ResearcherFactory.create(),
            name="new",
            questions=[QuestionSpec("appropriateness", 0, 2), QuestionSpec("fluency", 1, 5)],
        )
    assert version(study) == 1


def test_changing_the_kappa_threshold_bumps_once(committed) -> None:
    study = work_study()
    before = version(study)
    with committed():
        changed = annotation_settings_update(
            study=study, settings=dataclasses.replace(AnnotationSettings.of(study), kappa_threshold=0.5)
        )
    assert changed == ["kappa_threshold"]
    assert version(study) == before + 1


def test_settings_that_only_change_the_handout_bump_nothing(committed) -> None:
    study = work_study()
    before = version(study)
    with committed():
        changed = annotation_settings_update(
            study=study,
            settings=dataclasses.replace(AnnotationSettings.of(study), hold_seconds=600, ratings_per_item=5),
        )
    assert sorted(changed) == ["hold_seconds", "ratings_per_item"]
    assert version(study) == before


def test_invalid_settings_bump_nothing(committed) -> None:
    study = work_study()
    before = version(study)
    with committed(), pytest.raises(SettingsInvalid):
        annotation_settings_update(
            study=study,
            settings=dataclasses.replace(AnnotationSettings.of(study), kappa_threshold=0.4, hold_seconds=1),
        )
    assert version(study) == before
    assert Study.objects.get(pk=study.pk).kappa_threshold == 0.2


def test_the_settings_page_bumps_through_the_service(committed) -> None:
    study = work_study()
    client = Client()
    client.force_login(study.owner)
    data = form_values(client.get(f"/studies/{study.pk}/annotation/").context["settings_form"])
    data["settings-kappa_threshold"] = "0.35"
    before = version(study)
    with committed():
        saved = client.post(f"/studies/{study.pk}/annotation/settings/", data)
    assert saved.status_code == 302
    assert Study.objects.get(pk=study.pk).kappa_threshold == pytest.approx(0.35)
    assert version(study) == before + 1


# ---- who counts ---------------------------------------------------------------------------------------


def test_an_inclusion_override_bumps_once_and_the_same_choice_again_bumps_nothing(committed) -> None:
    study = work_study()
    annotator = AnnotatorFactory.create(study=study)
    before = version(study)
    with committed():
        annotator_inclusion_set(annotator=annotator, inclusion="exclude")
    assert version(study) == before + 1
    assert Annotator.objects.get(pk=annotator.pk).report_inclusion == "exclude"
    with committed():
        annotator_inclusion_set(annotator=Annotator.objects.get(pk=annotator.pk), inclusion="exclude")
    assert version(study) == before + 1


def test_an_invalid_inclusion_bumps_nothing(committed) -> None:
    study = work_study()
    annotator = AnnotatorFactory.create(study=study)
    before = version(study)
    with committed(), pytest.raises(ReviewInvalid):
        annotator_inclusion_set(annotator=annotator, inclusion="sometimes")
    assert version(study) == before


def test_the_inclusion_page_bumps_through_the_service(committed) -> None:
    study = work_study()
    annotator = AnnotatorFactory.create(study=study)
    client = Client()
    client.force_login(study.owner)
    before = version(study)
    url = f"/studies/{study.pk}/annotation/annotators/{annotator.pk}/inclusion/"
    with committed():
        assert client.post(url, {"report_inclusion": "include"}).status_code == 302
    assert version(study) == before + 1


# ---- what annotators hand back ----------------------------------------------------------------------


def test_a_first_rating_bumps_once_for_all_its_questions(committed) -> None:
    study = _two_question_study()
    annotator = AnnotatorFactory.create(study=study)
    handout = next_assignment(annotator=annotator)
    before = version(study)
    with committed():
        rating_submit(
            annotator=annotator,
            assignment_id=handout.assignment.pk,
            values={"appropriateness": 2, "fluency": 4},
        )
    assert Rating.objects.filter(annotator=annotator).count() == 2
    assert version(study) == before + 1


def test_going_back_and_changing_a_rating_bumps_once(committed) -> None:
    study = _two_question_study()
    annotator = AnnotatorFactory.create(study=study)
    handout = next_assignment(annotator=annotator)
    rating_submit(
        annotator=annotator, assignment_id=handout.assignment.pk, values={"appropriateness": 2, "fluency": 4}
    )
    before = version(study)
    with committed():
        rating_submit(
            annotator=annotator,
            assignment_id=handout.assignment.pk,
            values={"appropriateness": 0, "fluency": 4},
        )
    assert sorted(Rating.objects.filter(annotator=annotator).values_list("value", flat=True)) == [0, 4]
    assert version(study) == before + 1


@pytest.mark.parametrize(
    "values",
    [{"appropriateness": 3, "fluency": 4}, {"appropriateness": 1}, {"appropriateness": 1, "fluency": "x"}],
)
def test_a_rating_that_fails_validation_bumps_nothing(committed, values) -> None:
    study = _two_question_study()
    annotator = AnnotatorFactory.create(study=study)
    handout = next_assignment(annotator=annotator)
    before = version(study)
    with committed(), pytest.raises(SubmissionInvalid):
        rating_submit(annotator=annotator, assignment_id=handout.assignment.pk, values=values)
    assert not Rating.objects.exists()
    assert version(study) == before


def test_rating_someone_elses_item_bumps_nothing(committed) -> None:
    study = _two_question_study()
    owner, intruder = annotators(study, 2)
    handout = next_assignment(annotator=owner)
    before = version(study)
    with committed(), pytest.raises(SubmissionInvalid):
        rating_submit(
            annotator=intruder,
            assignment_id=handout.assignment.pk,
            values={"appropriateness": 1, "fluency": 1},
        )
    assert version(study) == before


def test_an_attention_check_answer_bumps_nothing(committed) -> None:
    """Check answers are shown on the quality page, but which ratings count depends only on the ratings,
    the overrides and the threshold (annotation/selectors/quality.py), so a report does not change."""
    study = work_study(contexts=3, check_interval=1)
    distractors_generate(study=study, count=1, seed=0)
    annotator = AnnotatorFactory.create(study=study)
    handout = next_assignment(annotator=annotator)
    assert handout.assignment.item.kind == WorkKind.CHECK
    before = version(study)
    with committed():
        rating_submit(annotator=annotator, assignment_id=handout.assignment.pk, values={"appropriateness": 2})
    assert annotator.check_answers.get().passed is False
    assert version(study) == before


def test_a_collected_reference_bumps_once_and_a_refused_one_bumps_nothing(committed) -> None:
    study = work_study(contexts=2, references_wanted=2)
    writer = AnnotatorFactory.create(study=study)
    handout = next_assignment(annotator=writer, kind=WorkKind.WRITE)
    before = version(study)
    with committed():
        reference_add(annotator=writer, assignment_id=handout.assignment.pk, text="sounds good to me .")
    assert version(study) == before + 1
    with committed(), pytest.raises(SubmissionInvalid):
        reference_add(annotator=writer, assignment_id=handout.assignment.pk, text="x")
    with committed(), pytest.raises(SubmissionInvalid):  # the same reply twice
        reference_add(annotator=writer, assignment_id=handout.assignment.pk, text="Sounds good to me !")
    assert Reference.objects.filter(author=writer).count() == 1
    assert version(study) == before + 1


def test_a_diversity_judgment_bumps_once_and_a_refused_one_bumps_nothing(committed) -> None:
    study = work_study(contexts=1, systems=1, diversity_enabled=True)
    context = DialogContext.objects.get(study=study)
    system = System.objects.get(study=study)
    for sample in (1, 2):
        ResponseFactory.create(context=context, system=system, sample_index=sample, text=f"sample {sample}")
    work_items_sync(study=study)
    judge = AnnotatorFactory.create(study=study)
    handout = next_assignment(annotator=judge, kind=WorkKind.DIVERSITY)
    replies = list(Response.objects.filter(context=context).values_list("pk", flat=True))
    before = version(study)
    with committed(), pytest.raises(SubmissionInvalid):
        diversity_submit(
            annotator=judge, assignment_id=handout.assignment.pk, appropriate=replies, meanings=4
        )
    assert version(study) == before
    with committed():
        diversity_submit(
            annotator=judge, assignment_id=handout.assignment.pk, appropriate=replies, meanings=2
        )
    assert version(study) == before + 1


def test_a_rating_whose_transaction_rolls_back_bumps_nothing(committed) -> None:
    """The bump is registered with the ratings, so the caller's rollback takes both back."""
    study = _two_question_study()
    annotator = AnnotatorFactory.create(study=study)
    handout = next_assignment(annotator=annotator)

    def rate_then_fail() -> None:
        with transaction.atomic():
            rating_submit(
                annotator=annotator,
                assignment_id=handout.assignment.pk,
                values={"appropriateness": 2, "fluency": 4},
            )
            raise RuntimeError("the caller's transaction fails after the ratings")

    before = version(study)
    with committed(), pytest.raises(RuntimeError):
        rate_then_fail()
    assert not Rating.objects.exists()
    assert version(study) == before


@pytest.mark.django_db(transaction=True)
def test_a_rating_posted_on_the_page_bumps_after_a_real_commit() -> None:
    """No captured callbacks here: the page's transaction really commits, and only then is the bump."""
    study = work_study()
    user = UserFactory.create()
    annotator = Annotator.objects.create(
        study=study, user=user, pseudonym="real-commit", consented_at=timezone.now()
    )
    client = Client()
    client.force_login(user)
    before = version(study)
    page = client.get(f"/work/{study.pk}/rate/")
    assert page.status_code == 200
    assert version(study) == before  # a handout is no report change
    assignment = next_assignment(annotator=annotator).assignment.pk
    assert client.post(f"/work/{study.pk}/rate/{assignment}/", {"q-appropriateness": "1"}).status_code == 302
    assert Rating.objects.filter(annotator=annotator).count() == 1
    assert version(study) == before + 1


# ---- imports ------------------------------------------------------------------------------------------


def _jsonl(*records: dict[str, Any]) -> ImportFile:
    return ImportFile("replies.jsonl", "".join(json.dumps(record) + "\n" for record in records).encode())


def _mean_ratings_csv() -> ImportFile:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["model", "context_id", "human_average_rating", "response", "prevgt", "all_references"])
    writer.writerow(["seq2seq", "0_0", "3.5", "i do n't know .", "it is .", "it is .\tyes ."])
    writer.writerow(["human", "0_0", "4.5", "yes , take one .", "it is .", "it is .\tyes ."])
    return ImportFile("mturk.csv", out.getvalue().encode())


IMPORTS = {
    # contexts with their original references, no replies
    "contexts and references": (
        "0-2",
        "dailydialog",
        ImportFile("dialogues_test.txt", b"Is it raining ? __eou__ It is . __eou__ Thanks . __eou__\n"),
    ),
    # replies with per-annotator ratings and a reference
    "replies and ratings": (
        "0-2",
        "jsonl",
        _jsonl(
            {
                "context": ["hi ?"],
                "response": "hello .",
                "system": "a",
                "ratings": {"appropriateness": [2, 1]},
            },
            {"context": ["hi ?"], "response": "bye .", "system": "b", "references": ["hey ."]},
        ),
    ),
    # replies with imported mean ratings
    "mean ratings": ("1-5", "multiref-ratings", _mean_ratings_csv()),
}


@pytest.mark.parametrize("what", IMPORTS)
def test_an_accepted_import_bumps_once(committed, researcher, what) -> None:
    scale, format_name, file = IMPORTS[what]
    study = study_create(owner=researcher, name=f"import {what}", scale=scale)
    if format_name == "multiref-ratings":  # its rows need their context first
        DialogContextFactory.create(
            study=study, external_id="0_0", turns=[{"speaker": "A", "text": "Rain ?"}]
        )
    before = version(study)
    with committed():
        record = study_import(study=study, format=format_name, files=[file])
    assert sum(record.counts.values()) > 0
    assert version(study) == before + 1


def test_a_mean_rating_import_writes_what_the_report_reads(committed, researcher) -> None:
    """The "mean ratings" case above imports what it says it does."""
    study = study_create(owner=researcher, name="means", scale="1-5")
    DialogContextFactory.create(study=study, external_id="0_0", turns=[{"speaker": "A", "text": "Rain ?"}])
    study_import(study=study, format="multiref-ratings", files=[_mean_ratings_csv()])
    assert ImportedMeanRating.objects.filter(question__study=study).count() == 2


def test_a_rejected_import_bumps_nothing(committed, researcher) -> None:
    study = study_create(owner=researcher, name="rejected")
    before = version(study)
    bad = _jsonl(
        {"context": ["hi ?"], "response": "hello .", "system": "a", "ratings": {"appropriateness": [7]}}
    )
    with committed(), pytest.raises(ImportRejected):
        study_import(study=study, format="jsonl", files=[bad])
    assert version(study) == before


@pytest.mark.usefixtures("refuse_rating_value_2")
def test_an_import_the_database_refuses_while_writing_bumps_nothing(committed, researcher) -> None:
    study = study_create(owner=researcher, name="refused")
    before = version(study)
    refused = _jsonl(
        {"context": ["hi ?"], "response": "hello .", "system": "a", "ratings": {"appropriateness": [2]}}
    )
    with committed(), pytest.raises(ImportRejected):
        study_import(study=study, format="jsonl", files=[refused])
    assert not Response.objects.filter(context__study=study).exists()
    assert version(study) == before


def test_the_import_page_bumps_through_the_service(committed) -> None:
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="import page")
    client = Client()
    client.force_login(owner)
    upload = io.BytesIO(b'{"context": ["hi ?"], "response": "hello .", "system": "a"}\n')
    upload.name = "replies.jsonl"
    before = version(study)
    with committed():
        posted = client.post(f"/studies/{study.pk}/import/", {"format": "jsonl", "files": [upload]})
    assert posted.status_code == 302
    assert version(study) == before + 1


# ---- reads ----------------------------------------------------------------------------------------------


def test_reading_pages_and_handing_out_work_bumps_nothing(committed) -> None:
    study = work_study(contexts=2, references_wanted=1)
    RatingFactory.create(
        response=Response.objects.filter(context__study=study).first(),
        annotator=AnnotatorFactory.create(study=study),
        question=study.questions.get(),
    )
    researcher = Client()
    researcher.force_login(study.owner)
    user = UserFactory.create()
    annotator = Annotator.objects.create(
        study=study, user=user, pseudonym="reader", consented_at=timezone.now()
    )
    worker = Client()
    worker.force_login(user)
    before = version(study)
    with committed() as callbacks:
        for url in (
            f"/studies/{study.pk}/",
            f"/studies/{study.pk}/annotation/",
            f"/studies/{study.pk}/export/ratings.csv",
            f"/reports/{study.pk}/",
            f"/reports/{study.pk}/correlations.csv",
            f"/reports/{study.pk}/correlations.json",
            f"/reports/{study.pk}/scores.csv",
            f"/api/studies/{study.pk}/correlations/",
            f"/api/studies/{study.pk}/progress/",
        ):
            # 202: a report download or the API queued the report's build for a worker (served.py).
            assert researcher.get(url).status_code in (200, 202), url
        for url in (
            f"/work/{study.pk}/",
            f"/work/{study.pk}/rate/",  # hands an item out, unanswered
            f"/work/{study.pk}/write/",
            f"/api/work/{study.pk}/next/?kind=rate",
            f"/api/work/{study.pk}/previous/?kind=rate",
        ):
            assert worker.get(url).status_code == 200, url
        held = next_assignment(annotator=annotator).assignment.pk
        assignment_skip(annotator=annotator, assignment_id=held)  # passing on an item changes no report
    # The only after-commit work: queuing the report's build (correlation.report.cache), no version bump.
    assert [callback for callback in callbacks if callback.__module__ != "correlation.report.cache"] == []
    assert version(study) == before


# ---- the admin ----------------------------------------------------------------------------------------


def _rating_of_a_study() -> Rating:
    rating = RatingFactory.create()
    ReferenceFactory.create(context=rating.response.context)
    ImportedMeanRating.objects.create(response=rating.response, question=rating.question, value=1.5)
    Adjudication.objects.create(response=rating.response, excluded=True)
    rival = ResponseFactory.create(context=rating.response.context)
    low, high = sorted([rating.response, rival], key=lambda response: response.pk)
    PairwiseJudgment.objects.create(
        annotator=rating.annotator, response_a=low, response_b=high, choice="a", shown_first=low
    )
    return rating


ADMIN_ROWS = {
    "rating": lambda rating: rating,
    "response": lambda rating: rating.response,
    "context": lambda rating: rating.response.context,
    "system": lambda rating: rating.response.system,
    "annotator": lambda rating: rating.annotator,
    "reference": lambda rating: rating.response.context.references.get(),
    "imported mean": lambda rating: rating.response.imported_means.get(),
    "adjudication": lambda rating: rating.response.adjudication,
    "pairwise judgment": lambda rating: rating.annotator.pairwise_judgments.get(),
}


@pytest.mark.parametrize("what", ADMIN_ROWS)
def test_an_admin_save_bumps_its_study_once(admin_client, committed, what) -> None:
    rating = _rating_of_a_study()
    other = _rating_of_a_study()
    study, bystander = rating.question.study, other.question.study
    row = ADMIN_ROWS[what](rating)
    data = admin_post_data(admin_client.get(admin_url(row)))
    before, unrelated = version(study), version(bystander)
    with committed():
        saved = admin_client.post(admin_url(row), data)
    assert saved.status_code == 302, saved.context["adminform"].form.errors if saved.context else saved
    assert version(study) == before + 1
    assert version(bystander) == unrelated


@pytest.mark.parametrize("what", ADMIN_ROWS)
def test_an_admin_deletion_bumps_its_study_once(admin_client, committed, what) -> None:
    rating = _rating_of_a_study()
    study = rating.question.study
    row = ADMIN_ROWS[what](rating)
    before = version(study)
    with committed():
        deleted = admin_client.post(admin_url(row, "delete"), {"post": "yes"})
    assert deleted.status_code == 302
    assert not type(row)._default_manager.filter(pk=row.pk).exists()
    assert version(study) == before + 1


def test_delete_selected_bumps_each_study_once(admin_client, committed) -> None:
    first, second = _rating_of_a_study(), _rating_of_a_study()
    extra = ResponseFactory.create(
        context=first.response.context, system=first.response.system, sample_index=1
    )
    chosen = [first.response.pk, extra.pk, second.response.pk]
    studies = [first.question.study, second.question.study]
    before = [version(study) for study in studies]
    with committed():
        done = admin_client.post(
            "/admin/annotation/response/",
            {"action": "delete_selected", "_selected_action": chosen, "post": "yes"},
        )
    assert done.status_code == 302
    assert not Response.objects.filter(pk__in=chosen).exists()
    assert [version(study) for study in studies] == [value + 1 for value in before]


def test_moving_a_row_to_another_study_in_the_admin_bumps_both(admin_client, committed) -> None:
    rating, other = _rating_of_a_study(), _rating_of_a_study()
    reference = rating.response.context.references.get()
    data = admin_post_data(admin_client.get(admin_url(reference)))
    data["context"] = other.response.context_id
    studies = [rating.question.study, other.question.study]
    before = [version(study) for study in studies]
    with committed():
        assert admin_client.post(admin_url(reference), data).status_code == 302
    assert Reference.objects.get(pk=reference.pk).context_id == other.response.context_id
    assert [version(study) for study in studies] == [value + 1 for value in before]


def test_an_admin_form_that_fails_validation_bumps_nothing(admin_client, committed) -> None:
    rating = _rating_of_a_study()
    data = admin_post_data(admin_client.get(admin_url(rating)))
    data["value"] = "a lot"
    before = version(rating.question.study)
    with committed():
        refused = admin_client.post(admin_url(rating), data)
    assert refused.status_code == 200
    assert Rating.objects.get(pk=rating.pk).value == 1
    assert version(rating.question.study) == before


def test_an_admin_save_of_a_study_and_its_questions_bumps_once(admin_client, committed) -> None:
    study = study_create(owner=ResearcherFactory.create(), name="admin study", scale="1-5")
    data = admin_post_data(admin_client.get(admin_url(study)))
    data["kappa_threshold"] = "0.4"
    data["questions-0-prompt"] = "Does the reply fit?"
    before = version(study)
    with committed():
        saved = admin_client.post(admin_url(study), data)
    assert saved.status_code == 302, saved.context["adminform"].form.errors if saved.context else saved
    assert Study.objects.get(pk=study.pk).kappa_threshold == pytest.approx(0.4)
    assert study.questions.get().prompt == "Does the reply fit?"
    assert version(study) == before + 1


def test_an_admin_save_of_a_study_keeps_a_bump_committed_meanwhile(committed) -> None:
    """The admin's object was read before another write's bump committed; saving it must not write the
    old data_version back (a cached report would then be served under a version that was already used)."""
    study = study_create(owner=ResearcherFactory.create(), name="stale admin copy")
    loaded = Study.objects.get(pk=study.pk)
    Study.objects.filter(pk=study.pk).update(data_version=F("data_version") + 1)  # someone else's bump
    bumped = version(study)
    loaded.name = "renamed in the admin"
    request = RequestFactory().post("/admin/")
    admin.site._registry[Study].save_model(request, loaded, form=None, change=True)
    assert Study.objects.get(pk=study.pk).name == "renamed in the admin"
    assert version(study) == bumped

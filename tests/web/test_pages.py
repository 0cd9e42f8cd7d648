"""Web pages: who may open what, the import form's all-or-nothing behaviour, upload bounds, escaping."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from annotation.models import Annotator, Response, Study
from annotation.services.studies import study_create
from scoring.models import ScoringRun
from tests.factories import ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db


def _login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _upload(name: str, rows: list[dict]) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, "\n".join(json.dumps(r) for r in rows).encode())


def test_anonymous_visitors_are_sent_to_login() -> None:
    response = Client().get("/studies/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_researcher_creates_a_study_and_imports_through_the_form() -> None:
    owner = ResearcherFactory.create()
    client = _login(owner)
    response = client.post("/studies/new/", {"name": "web study", "language": "en", "scale": "1-5",
                                             "ratings_per_item": 3, "instructions": ""})  # fmt: skip
    study = Study.objects.get(name="web study")
    assert response.status_code == 302
    assert study.questions.get().scale_max == 5

    rows = [{"context": ["hi ?"], "response": "hello <b>there</b> <script>alert(1)</script>", "system": "s",
             "references": ["hello !"], "ratings": {"appropriateness": [4, 5]}}]  # fmt: skip
    response = client.post(
        f"/studies/{study.pk}/import/", {"format": "jsonl", "files": [_upload("a.jsonl", rows)]}
    )
    assert response.status_code == 302
    assert Response.objects.filter(context__study=study).count() == 1
    page = client.get(f"/studies/{study.pk}/")
    assert page.status_code == 200
    assert b"<script>alert(1)</script>" not in page.content
    assert b"bleu-2" in page.content  # the scoring form lists the metrics


def test_a_rejected_upload_names_the_problem_and_changes_nothing() -> None:
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="s", scale="0-2")
    client = _login(owner)
    rows = [
        {"context": ["hi ?"], "response": "hello", "system": "s", "ratings": {"appropriateness": [1]}},
        {"context": ["bye ?"], "response": "bye", "system": "s", "ratings": {"appropriateness": [9]}},
    ]
    response = client.post(
        f"/studies/{study.pk}/import/", {"format": "jsonl", "files": [_upload("b.jsonl", rows)]}
    )
    assert response.status_code == 400
    text = response.content.decode()
    assert "b.jsonl" in text
    assert "line 2" in text
    assert Response.objects.filter(context__study=study).count() == 0


def test_uploads_above_the_limit_are_refused(settings) -> None:
    settings.DIALEVAL_MAX_UPLOAD_BYTES = 100
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="s", scale="0-2")
    big = SimpleUploadedFile("big.jsonl", b"x" * 101)
    response = _login(owner).post(f"/studies/{study.pk}/import/", {"format": "jsonl", "files": [big]})
    assert response.status_code == 400
    assert "upload limit" in response.content.decode()


def test_other_researchers_and_annotators_cannot_open_a_study() -> None:
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="private", scale="0-2")
    assert _login(ResearcherFactory.create()).get(f"/studies/{study.pk}/").status_code == 404
    assert _login(ResearcherFactory.create()).get(f"/reports/{study.pk}/").status_code == 404
    annotator = UserFactory.create()
    assert _login(annotator).get(f"/studies/{study.pk}/").status_code == 403
    assert _login(annotator).get("/studies/").status_code == 403
    response = _login(ResearcherFactory.create()).post(
        f"/scoring/studies/{study.pk}/runs/", {"metrics": ["bleu-1"]}
    )
    assert response.status_code == 404
    assert ScoringRun.objects.count() == 0


def test_starting_a_run_from_the_page_queues_it_after_commit(django_capture_on_commit_callbacks) -> None:
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="s", scale="0-2")
    client = _login(owner)
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(
            f"/scoring/studies/{study.pk}/runs/", {"metrics": ["bleu-1", "bleu-4"], "references": "single"}
        )
    assert response.status_code == 302
    run = ScoringRun.objects.get()
    assert run.metrics == ["bleu-1", "bleu-4"]
    assert run.references == "single"
    assert len(callbacks) == 1  # enqueue waits for the commit: the worker never sees a missing row


def test_csrf_is_enforced_on_forms() -> None:
    owner = ResearcherFactory.create()
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post("/studies/new/", {"name": "x"}).status_code == 403


def test_annotator_home_lists_only_their_own_roles() -> None:
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="rated", scale="0-2")
    me, other = UserFactory.create(), UserFactory.create()
    Annotator.objects.create(study=study, user=me, pseudonym="me-here")
    Annotator.objects.create(study=study, user=other, pseudonym="someone-else")
    page = _login(me).get("/").content.decode()
    assert "me-here" in page
    assert "someone-else" not in page


def test_demo_setup_is_idempotent_and_prints_logins(capsys) -> None:
    call_command("demo_setup", "--sample")
    call_command("demo_setup", "--sample")
    out = capsys.readouterr().out
    assert "researcher / researcher-demo" in out
    assert "annotator1 / annotator1-demo" in out
    study = Study.objects.get(name="Demo: sample dialogs")
    assert Response.objects.filter(context__study=study).count() == 36
    assert Annotator.objects.filter(study=study, user__username__startswith="annotator").count() == 2
    assert Study.objects.count() == 1


def test_the_new_study_form_takes_several_questions_one_per_line() -> None:
    client = _login(ResearcherFactory.create())
    form = {"name": "multi-q", "language": "en", "scale": "0-2", "ratings_per_item": 3}
    response = client.post(
        "/studies/new/", dict(form, questions="fluency 1-5\nengaging 0-2 no / somewhat / yes\n")
    )
    assert response.status_code == 302
    questions = list(
        Study.objects.get(name="multi-q").questions.values_list("name", "scale_min", "scale_max", "labels")
    )
    assert questions == [("fluency", 1, 5, []), ("engaging", 0, 2, ["no", "somewhat", "yes"])]

    response = client.post("/studies/new/", dict(form, name="broken", questions="fluency 5-1"))
    assert response.status_code == 200
    assert "line 1: the scale 5-1 must go from low to high" in response.content.decode()
    assert not Study.objects.filter(name="broken").exists()


def test_an_oversized_request_is_refused_before_its_body_is_read(settings) -> None:
    settings.DIALEVAL_MAX_REQUEST_BYTES = 1000
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name="s", scale="0-2")
    client = _login(owner)
    big = SimpleUploadedFile("big.jsonl", b"x" * 2000)
    response = client.post(f"/studies/{study.pk}/import/", {"format": "jsonl", "files": [big]})
    assert response.status_code == 413
    assert "the limit is 1,000 bytes" in response.content.decode()
    big_again = SimpleUploadedFile("big.jsonl", b"x" * 2000)
    api = client.post(f"/api/studies/{study.pk}/imports/", {"format": "jsonl", "files": [big_again]})
    assert api.status_code == 413
    assert "limit" in api.json()["detail"]
    assert client.get(f"/studies/{study.pk}/").status_code == 200  # small requests pass
    assert Response.objects.filter(context__study=study).count() == 0


def test_demo_setup_imports_the_multi_reference_study_when_the_data_is_there(shared_data, settings) -> None:
    settings.SHARED_DATA_DIR = shared_data
    call_command("demo_setup")
    study = Study.objects.get(name__startswith="Demo: DailyDialog multi-reference")
    assert study.questions.get().scale_max == 5
    assert study.contexts.count() == 6740
    responses = Response.objects.filter(context__study=study)
    assert responses.count() == 500
    assert responses.filter(imported_means__isnull=False).count() == 500
    assert set(study.systems.values_list("name", flat=True)) == {
        "human", "hredf", "seq2seqf", "CVAEf", "dualencoder_train"
    }  # fmt: skip
    call_command("demo_setup")  # again: nothing new
    assert Response.objects.filter(context__study=study).count() == 500

"""The scoring-run API's tokenizer choice: recorded on the run, used in signatures, refused when unknown."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from scoring.models import MetricSignature, ScoringRun
from scoring.services import scoring_run_execute
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResearcherFactory,
    ResponseFactory,
    StudyFactory,
)

pytestmark = pytest.mark.django_db


def _client_and_study() -> tuple[APIClient, int]:
    owner = ResearcherFactory.create()
    study = StudyFactory.create(owner=owner)
    context = DialogContextFactory.create(study=study)
    ReferenceFactory.create(context=context, text="at 2:00 , _UNK .", origin="original")
    ResponseFactory.create(context=context, text="at 2:00 , _UNK .")
    client = APIClient()
    client.force_authenticate(owner)
    return client, study.pk


def test_a_run_posted_with_tokenizer_none_records_it_and_scores_under_tok_none() -> None:
    client, study_id = _client_and_study()
    posted = client.post(
        f"/api/studies/{study_id}/scoring-runs/",
        {"metrics": ["bleu-2"], "references": "single", "tokenizer": "none"},
        format="json",
    )
    assert posted.status_code == 202, posted.content
    assert posted.json()["tokenizer"] == "none"
    scoring_run_execute(run_id=posted.json()["id"])
    run = client.get(f"/api/scoring-runs/{posted.json()['id']}/").json()
    assert run["status"] == "succeeded"
    assert run["tokenizer"] == "none"
    scores = client.get(f"/api/studies/{study_id}/scores/?metric=bleu-2").json()["results"]
    assert ["tok:none" in row["signature"].split("|") for row in scores] == [True]
    assert scores[0]["implementation"] == "nltk"
    assert scores[0]["value"] == pytest.approx(1.0)  # the same whitespace tokens: a perfect match


def test_the_tokenizer_defaults_to_the_languages_own() -> None:
    client, study_id = _client_and_study()
    posted = client.post(f"/api/studies/{study_id}/scoring-runs/", {"metrics": ["bleu-2"]}, format="json")
    assert posted.status_code == 202, posted.content
    assert posted.json()["tokenizer"] == "default"
    scoring_run_execute(run_id=posted.json()["id"])
    assert MetricSignature.objects.get(name="bleu-2").parameters["tok"] == "en-v1"


def test_an_unknown_tokenizer_is_a_400_naming_the_field_and_the_choices() -> None:
    client, study_id = _client_and_study()
    response = client.post(
        f"/api/studies/{study_id}/scoring-runs/", {"metrics": ["bleu-2"], "tokenizer": "13a"}, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {"tokenizer": ['"13a" is not a tokenizer; choose one of default, none']}
    assert ScoringRun.objects.count() == 0


def test_the_openapi_schema_describes_the_tokenizer() -> None:
    client, _ = _client_and_study()
    schema = json.loads(client.get("/api/schema/?format=json").content)
    request_body = schema["paths"]["/api/studies/{study_id}/scoring-runs/"]["post"]["requestBody"]
    reference = request_body["content"]["application/json"]["schema"]["$ref"]
    properties = schema["components"]["schemas"][reference.rsplit("/", 1)[1]]["properties"]
    tokenizer = properties["tokenizer"]
    assert "pre-tokenized" in tokenizer["description"]
    assert "tok:none" in tokenizer["description"]
    enum = schema["components"]["schemas"][tokenizer["allOf"][0]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert enum == ["default", "none"]

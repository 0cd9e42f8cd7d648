"""The training-job API: create (JSON or multipart), follow, cancel; 400s that name the field;
another researcher's job is a 404; the trained-model list's figures; the OpenAPI schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from rest_framework.test import APIClient

from scoring.models import TrainedModel, TrainingJob, TrainingStatus
from tests.factories import ResearcherFactory, UserFactory
from tests.scoring.training_builders import topic_study, training_places, write_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def places(tmp_path: Path, settings):
    return training_places(tmp_path, settings)


@pytest.fixture
def corpus(places) -> Path:
    return write_pairs(places.corpora / "pairs.jsonl")


def api_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def payload(corpus: Path, **overrides) -> dict:
    data = {
        "kind": "ruber",
        "name": "api-ruber",
        "corpus_path": str(corpus),
        "corpus_format": "generic",
        "epochs": 2,
    }
    data.update(overrides)
    return data


def test_create_follow_and_cancel_a_job(researcher, corpus: Path) -> None:
    client = api_for(researcher)
    created = client.post("/api/training-jobs/", payload(corpus), format="json")
    assert created.status_code == 202, created.content
    job = created.json()
    assert job["status"] == "pending"
    assert job["kind"] == "ruber"
    assert job["name"] == "api-ruber"
    assert job["parameters"] == {"epochs": 2, "language": "en"}
    assert job["curve"] == []
    assert job["trained_model"] is None
    assert job["corpus"].startswith(str(corpus.resolve()))

    followed = client.get(f"/api/training-jobs/{job['id']}/")
    assert followed.status_code == 200
    assert followed.json()["status_text"]
    assert [row["id"] for row in client.get("/api/training-jobs/").json()] == [job["id"]]

    cancelled = client.post(f"/api/training-jobs/{job['id']}/cancel/")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert client.post(f"/api/training-jobs/{job['id']}/cancel/").status_code == 409


def test_another_researchers_job_is_a_404_and_an_annotator_is_refused(researcher, corpus: Path) -> None:
    job_id = api_for(researcher).post("/api/training-jobs/", payload(corpus), format="json").json()["id"]
    bob = api_for(ResearcherFactory.create(username="bob"))
    assert bob.get(f"/api/training-jobs/{job_id}/").status_code == 404
    assert bob.post(f"/api/training-jobs/{job_id}/cancel/").status_code == 404
    assert bob.get("/api/training-jobs/").json() == []
    assert TrainingJob.objects.get().status == TrainingStatus.PENDING  # bob's cancel changed nothing
    annotator = api_for(UserFactory.create(username="annotator"))
    assert annotator.get(f"/api/training-jobs/{job_id}/").status_code == 403
    assert annotator.post("/api/training-jobs/", payload(corpus, name="x"), format="json").status_code == 403


def test_a_study_of_another_researcher_is_a_404(researcher, corpus: Path) -> None:
    study = topic_study(owner=ResearcherFactory.create(username="bob"))
    response = api_for(researcher).post("/api/training-jobs/", payload(corpus, study=study.pk), format="json")
    assert response.status_code == 404
    assert not TrainingJob.objects.exists()


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"corpus_path": "/etc"}, "corpus_path", "corpora are read from"),
        ({"name": "two words"}, "name", "letters, digits"),
        ({"kind": "bert-ruber", "cells": ["bert-max-xx"]}, "cells", "unknown cell(s) bert-max-xx"),
        ({"epochs": 0}, "epochs", "greater than or equal to 1"),
        ({"corpus_format": "csv"}, "corpus_format", "not a valid choice"),
    ],
)
def test_bad_requests_are_400s_naming_the_field(
    researcher, corpus: Path, overrides: dict, field: str, message: str
) -> None:
    response = api_for(researcher).post("/api/training-jobs/", payload(corpus, **overrides), format="json")
    assert response.status_code == 400
    assert message in " ".join(response.json()[field])
    assert not TrainingJob.objects.exists()


def test_a_corpus_uploaded_with_the_request(researcher, corpus: Path, places) -> None:
    with corpus.open("rb") as handle:
        response = api_for(researcher).post(
            "/api/training-jobs/",
            {"kind": "ruber", "name": "uploaded", "corpus_format": "generic", "corpus_file": handle},
            format="multipart",
        )
    assert response.status_code == 202, response.content
    job = TrainingJob.objects.get()
    assert Path(job.corpus_path).is_relative_to(places.uploads.resolve())
    assert job.corpus.startswith("upload: pairs.jsonl")


def test_the_trained_model_list_shows_the_figures(researcher, tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "w").write_bytes(b"1234")
    TrainedModel.objects.create(
        name="dd-ruber", kind="ruber", path=str(folder), content_hash="f" * 64, corpus="dailydialog",
        pairs=76052, epochs=10, validation_accuracy=0.87, size_bytes=None,
        curve=[{"epoch": 1, "validation_accuracy": 0.5}],
    )  # fmt: skip
    rows = api_for(researcher).get("/api/trained-models/").json()
    assert rows == [
        {
            "name": "dd-ruber", "kind": "ruber", "content_hash": "f" * 64, "language": "en", "corpus": "dailydialog",
            # the figures come from the artifact's config and curve (1 epoch, 0.5), not what the row stored
            "is_default": False, "pairs": 76052, "dialogs": None, "epochs": 1, "kept_epoch": 1, "scoring_cell": "",
            "cells": [], "validation_accuracy": 0.5, "near_chance": True, "size_bytes": 4, "curve": [{"epoch": 1, "validation_accuracy": 0.5}], "created_at": rows[0]["created_at"],
        }
    ]  # fmt: skip


def test_the_schema_documents_the_training_job_endpoints(researcher) -> None:
    client = api_for(researcher)
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    assert set(paths["/api/training-jobs/"]) >= {"get", "post"}
    assert "get" in paths["/api/training-jobs/{job_id}/"]
    assert "post" in paths["/api/training-jobs/{job_id}/cancel/"]
    job = schema["components"]["schemas"]["TrainingJob"]["properties"]
    assert {"status", "status_text", "progress", "curve", "trained_model"} <= set(job)
    model = schema["components"]["schemas"]["TrainedModel"]["properties"]
    assert {"pairs", "epochs", "cells", "validation_accuracy", "size_bytes", "content_hash", "corpus"} <= set(
        model
    )

"""The REST API: studies, imports, scoring runs, scores, metrics, the OpenAPI schema, and who sees what."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.models import DialogContext, Response, Study
from scoring.models import ScoringRun
from scoring.services import scoring_run_execute
from tests.correlation.report_helpers import report_get
from tests.factories import ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _jsonl(*rows: dict) -> SimpleUploadedFile:
    data = "\n".join(json.dumps(row) for row in rows).encode()
    return SimpleUploadedFile("replies.jsonl", data, content_type="application/jsonl")


ROWS = [
    {"context": ["how are you ?"], "response": "fine , thanks .", "system": "a", "references": ["i am fine ."],
     "ratings": {"appropriateness": [2, 1]}},
    {"context": ["how are you ?"], "response": "the sky .", "system": "b", "references": ["i am fine ."],
     "ratings": {"appropriateness": [0, 0]}},
    {"context": ["where do you live ?"], "response": "in paris .", "system": "a",
     "references": ["i live in paris ."], "ratings": {"appropriateness": [2, 2]}},
    {"context": ["where do you live ?"], "response": "yes .", "system": "b",
     "references": ["i live in paris ."], "ratings": {"appropriateness": [0, 1]}},
]  # fmt: skip


def test_study_create_import_score_and_read_everything_back() -> None:
    owner = ResearcherFactory.create()
    client = _client(owner)
    created = client.post("/api/studies/", {"name": "api study", "scale": "0-2"}, format="json")
    assert created.status_code == 201, created.content
    study_id = created.json()["id"]
    assert created.json()["questions"][0]["scale_max"] == 2

    imported = client.post(
        f"/api/studies/{study_id}/imports/", {"format": "jsonl", "files": [_jsonl(*ROWS)]}, format="multipart"
    )
    assert imported.status_code == 201, imported.content
    assert Response.objects.filter(context__study_id=study_id).count() == 4
    assert len(client.get(f"/api/studies/{study_id}/imports/").json()) == 1

    run = client.post(
        f"/api/studies/{study_id}/scoring-runs/",
        {"metrics": ["bleu-1", "bleu-2"], "references": "multi"},
        format="json",
    )
    assert run.status_code == 202, run.content
    assert run.json()["status"] == "pending"
    scoring_run_execute(run_id=run.json()["id"])  # what the worker does; the broker path is tested elsewhere
    status = client.get(f"/api/scoring-runs/{run.json()['id']}/").json()
    assert status["status"] == "succeeded"
    assert status["progress_done"] == status["progress_total"] > 0

    scores = client.get(f"/api/studies/{study_id}/scores/?metric=bleu-1").json()
    assert scores["count"] == 4
    exact = next(row for row in scores["results"] if row["system"] == "a" and row["value"] > 0.5)
    assert exact["references"] == "multi"
    assert exact["signature"].startswith("bleu-1|")

    table = report_get(client, f"/api/studies/{study_id}/correlations/").json()
    metrics = {(row["metric"], row["references"]) for row in table["rows"]}
    assert ("bleu-2", "multi") in metrics
    assert all(row["n"] == 4 for row in table["rows"])


def test_rejected_import_returns_every_problem_and_changes_nothing() -> None:
    owner = ResearcherFactory.create()
    client = _client(owner)
    study_id = client.post("/api/studies/", {"name": "s"}, format="json").json()["id"]
    bad = dict(ROWS[0], ratings={"appropriateness": [7]})
    response = client.post(
        f"/api/studies/{study_id}/imports/",
        {"format": "jsonl", "files": [_jsonl(ROWS[1], bad)]},
        format="multipart",
    )
    assert response.status_code == 400
    problem = response.json()["problems"][0]
    assert problem["file"] == "replies.jsonl"
    assert problem["line"] == 2
    assert "appropriateness" in problem["field"]
    assert DialogContext.objects.filter(study_id=study_id).count() == 0


def test_unknown_metric_is_a_400_naming_it() -> None:
    owner = ResearcherFactory.create()
    client = _client(owner)
    study_id = client.post("/api/studies/", {"name": "s"}, format="json").json()["id"]
    response = client.post(f"/api/studies/{study_id}/scoring-runs/", {"metrics": ["blue-9"]}, format="json")
    assert response.status_code == 400
    assert "blue-9" in json.dumps(response.json())
    assert ScoringRun.objects.count() == 0


def test_researchers_see_only_their_own_studies_and_annotators_see_none() -> None:
    alice, bob = ResearcherFactory.create(), ResearcherFactory.create()
    study_id = _client(alice).post("/api/studies/", {"name": "alice's"}, format="json").json()["id"]
    assert [s["name"] for s in _client(alice).get("/api/studies/").json()] == ["alice's"]
    assert _client(bob).get("/api/studies/").json() == []
    for url in (
        f"/api/studies/{study_id}/",
        f"/api/studies/{study_id}/imports/",
        f"/api/studies/{study_id}/scoring-runs/",
        f"/api/studies/{study_id}/scores/",
        f"/api/studies/{study_id}/correlations/",
    ):
        assert _client(bob).get(url).status_code == 404, url
    annotator = UserFactory.create()
    assert _client(annotator).get("/api/studies/").status_code == 403
    assert APIClient().get("/api/studies/").status_code in (401, 403)
    assert Study.objects.count() == 1


def test_openapi_schema_and_docs_are_served() -> None:
    client = _client(ResearcherFactory.create())
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    paths = json.loads(schema.content)["paths"]
    for path in ("/api/studies/", "/api/studies/{study_id}/imports/", "/api/scoring-runs/{run_id}/",
                 "/api/studies/{study_id}/scores/", "/api/studies/{study_id}/correlations/", "/api/metrics/"):  # fmt: skip
        assert path in paths, path
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    # Swagger UI comes from static (drf-spectacular-sidecar), not a CDN: every script and stylesheet is local.
    # (Not a search for "cdn" in the page: its CSRF token is random and may spell it.)
    sources = re.findall(r'(?:src|href)="([^"]*)"', docs.content.decode())
    assert not [source for source in sources if source.startswith(("http:", "https:", "//"))], sources
    scripts = re.findall(r'<script src="([^"]*)"', docs.content.decode())
    assert any(script.endswith("swagger-ui-bundle.js") for script in scripts), scripts
    # Every script is a file of this site: the static ones, and Swagger UI's start-up script, which the view
    # serves at its own ?script address rather than inline (the Content-Security-Policy refuses inline code).
    assert all(script.startswith("/static/") for script in scripts if script != "/api/docs/?script="), scripts
    assert "/api/docs/?script=" in scripts
    assert "<script>" not in docs.content.decode()
    start = client.get("/api/docs/?script=")
    assert start.status_code == 200
    assert start["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in start.content.decode()


def test_metric_list_names_bleu() -> None:
    names = [row["name"] for row in _client(UserFactory.create()).get("/api/metrics/").json()]
    assert {"bleu-1", "bleu-2", "bleu-3", "bleu-4"} <= set(names)


def test_a_study_can_ask_several_questions() -> None:
    client = _client(ResearcherFactory.create())
    body = {
        "name": "usr-like",
        "questions": [
            {
                "name": "appropriateness",
                "scale_min": 0,
                "scale_max": 2,
                "labels": ["bad", "borderline", "good"],
            },
            {"name": "fluency", "scale_min": 1, "scale_max": 5},
        ],
    }
    created = client.post("/api/studies/", body, format="json")
    assert created.status_code == 201, created.content
    assert [(q["name"], q["scale_max"]) for q in created.json()["questions"]] == [
        ("appropriateness", 2),
        ("fluency", 5),
    ]
    bad = dict(
        body, name="bad", questions=[{"name": "x", "scale_min": 1, "scale_max": 3, "labels": ["a", "b"]}]
    )
    response = client.post("/api/studies/", bad, format="json")
    assert response.status_code == 400
    assert "2 labels for the 3 points of 1-3: give one per point, or none" in json.dumps(response.json())
    assert not Study.objects.filter(name="bad").exists()

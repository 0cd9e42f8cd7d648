"""Crafted input gets a 400 or 404 that names the file, line and field, never a 500.

Runs on SQLite and PostgreSQL (scripts/test_postgres.sh): SQLite raised OverflowError for ids above 2**63
and stored NUL characters that PostgreSQL refuses with a message quoting SQL.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.models import DialogContext, Response, Study
from tests.annotation.work_builders import work_study
from tests.api.work_api_support import members
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db

ROW = {
    "context": ["how are you ?"],
    "response": "fine , thanks .",
    "system": "a",
    "ratings": {"appropriateness": [2]},
}


def _researcher_client() -> tuple[APIClient, Study]:
    owner = ResearcherFactory.create()
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(owner)
    created = client.post("/api/studies/", {"name": "hostile", "scale": "0-2"}, format="json")
    return client, Study.objects.get(pk=created.json()["id"])


def _import(client: APIClient, study: Study, name: str, data: bytes, fmt: str = "jsonl") -> tuple[int, dict]:
    upload = SimpleUploadedFile(name, data)
    response = client.post(
        f"/api/studies/{study.pk}/imports/", {"format": fmt, "files": [upload]}, format="multipart"
    )
    assert response["Content-Type"] == "application/json"
    return response.status_code, response.json()


def _only_problem(body: dict) -> dict:
    assert body["detail"] == "the import was rejected and nothing was changed", body
    assert len(body["problems"]) == 1, body
    return body["problems"][0]


def _good_line() -> str:
    return json.dumps(ROW)


def test_a_line_nested_50000_deep_is_a_problem_of_its_line() -> None:
    client, study = _researcher_client()
    deep = '{"context": ["hi"], "response": ' + "[" * 50_000 + "]" * 50_000 + ', "system": "a"}'
    status, body = _import(client, study, "deep.jsonl", f"{_good_line()}\n{deep}\n".encode())
    assert status == 400
    problem = _only_problem(body)
    assert (problem["file"], problem["line"]) == ("deep.jsonl", 2)
    assert (
        problem["message"] == "JSON nested 50001 levels deep; at most 100 are accepted"
    )  # the object, then the lists
    assert not Response.objects.filter(context__study=study).exists()


@pytest.mark.parametrize(
    ("escaped", "field", "what"),
    [
        ('"response": "fine \\ud800"', "response", "lone surrogate (\\ud800)"),
        ('"response": "fine \\u0000 thanks"', "response", "NUL character (\\u0000)"),
        ('"context": ["hi", "there \\u0000"]', "context", "NUL character (\\u0000)"),
        ('"ratings": {"\\ud800": [1]}', "ratings", "lone surrogate (\\ud800)"),
    ],
)
def test_text_no_database_can_store_is_refused_naming_file_line_and_field(
    escaped: str, field: str, what: str
) -> None:
    client, study = _researcher_client()
    line = json.dumps({key: value for key, value in ROW.items() if key != field})[:-1] + ", " + escaped + "}"
    status, body = _import(client, study, "bad.jsonl", f"{_good_line()}\n{line}\n".encode())
    assert status == 400, body
    problem = _only_problem(body)
    assert (problem["file"], problem["line"], problem["field"]) == ("bad.jsonl", 2, field)
    assert what in problem["message"]
    assert "LINE 1" not in json.dumps(body)
    assert "INSERT" not in json.dumps(body)
    assert not DialogContext.objects.filter(study=study).exists()


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_raw_nul_byte_is_refused_with_its_line_on_every_database(fmt: str) -> None:
    client, study = _researcher_client()
    if fmt == "jsonl":
        data = f"{_good_line()}\n".encode() + b'{"context": ["hi"], "response": "a\x00b", "system": "a"}\n'
    else:
        data = b"context,response,system\nhi,fine,a\nhello,th\x00ere,b\n"
    status, body = _import(client, study, f"nul.{fmt}", data, fmt=fmt)
    assert status == 400, body
    problem = _only_problem(body)
    assert (problem["file"], problem["line"]) == (f"nul.{fmt}", 3 if fmt == "csv" else 2)
    assert "NUL character" in problem["message"]
    assert not DialogContext.objects.filter(study=study).exists()


def test_an_unclosed_csv_quote_is_reported_as_such() -> None:
    client, study = _researcher_client()
    data = b'context,response,system\n"hi there,fine,a\nhello,yes,b\n'
    status, body = _import(client, study, "quote.csv", data, fmt="csv")
    assert status == 400
    problem = _only_problem(body)
    assert (problem["file"], problem["line"], problem["field"]) == ("quote.csv", 2, "context")
    assert "never closed" in problem["message"]
    assert "empty response" not in problem["message"]


def test_a_huge_rating_is_printed_as_a_number_of_normal_length() -> None:
    client, study = _researcher_client()
    line = json.dumps({**ROW, "ratings": {"appropriateness": [1e308]}})
    status, body = _import(client, study, "huge.jsonl", f"{line}\n".encode())
    assert status == 400
    problem = _only_problem(body)
    assert problem["field"] == "ratings.appropriateness[0]"
    assert problem["message"].startswith("1e+308 is outside the study's scale")
    assert len(problem["message"]) < 120


def test_a_lone_surrogate_key_in_a_rating_body_is_a_400_naming_the_field() -> None:
    study = work_study(contexts=1)
    (member,) = members(study, 1)
    member.client.raise_request_exception = False
    item = member.next(study).json()
    raw = '{"values": {"\\ud800": 1}, "seconds": 3}'
    response = member.client.post(
        f"/api/work/{study.pk}/assignments/{item['assignment']}/rating/", raw, content_type="application/json"
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert 'a key of field "values"' in response.json()["detail"]


WORK_PATHS = [
    ("get", "/api/work/{big}/next/?kind=rate"),
    ("get", "/api/work/{big}/previous/?kind=rate"),
    ("post", "/api/work/{big}/consent/"),
    ("get", "/api/work/{big}/training/next/"),
    ("post", "/api/work/{study}/training/{big}/answer/"),
    ("post", "/api/work/{study}/assignments/{big}/rating/"),
    ("post", "/api/work/{study}/assignments/{big}/reference/"),
    ("post", "/api/work/{study}/assignments/{big}/diversity/"),
    ("post", "/api/work/{study}/assignments/{big}/pairwise/"),
    ("post", "/api/work/{study}/assignments/{big}/skip/"),
    ("post", "/api/work/{study}/assignments/{big}/notes/"),
]


@pytest.mark.parametrize("big", [2**63, 2**64 + 1, 10**30])
def test_ids_above_2_63_are_404_in_the_work_api_and_metric_score_deletion(big: int) -> None:
    study = work_study(contexts=1)
    (member,) = members(study, 1)
    member.client.raise_request_exception = False
    for method, template in WORK_PATHS:
        path = template.format(big=big, study=study.pk)
        response = (
            getattr(member.client, method)(path, {}, format="json")
            if method == "post"
            else member.client.get(path)
        )
        assert response.status_code == 404, (path, response.status_code)
        assert response.json() == {"detail": "Not found."}, path
    owner = APIClient(raise_request_exception=False)
    owner.force_authenticate(study.owner)
    for path in (f"/api/studies/{study.pk}/metric-scores/{big}/", f"/api/studies/{big}/metric-scores/1/"):
        response = owner.delete(path)
        assert response.status_code == 404, path
        assert response.json() == {"detail": "Not found."}


def test_the_largest_id_still_reaches_the_view() -> None:
    study = work_study(contexts=1)
    owner = APIClient()
    owner.force_authenticate(study.owner)
    response = owner.delete(f"/api/studies/{study.pk}/metric-scores/{2**63 - 1}/")
    assert response.status_code == 404
    assert response.json()["detail"] != "Not found."  # the view's own message: no such metric

"""Crafted requests get a 400 that says what is wrong, never a 500.

A NUL character (``%00``) in the address, a query parameter, a form field, a header or a cookie is refused
before any view runs (config/request_text.py): PostgreSQL cannot store or even compare text holding one, and
a lookup by such text was a 500 there (``DataError``) while SQLite answered 404. A JSON body with a NUL in a
string, or nested deeper than the API reads, is a 400 of the JSON parser (kernel/http/api_formats.py): a body
nested 1,000 arrays deep exhausted Python's recursion limit. Runs on SQLite and on PostgreSQL
(scripts/test_postgres.sh).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.models import Study
from tests.annotation.work_builders import work_study

pytestmark = pytest.mark.django_db
FORM_ENCODED = "application/x-www-form-urlencoded"


def _owner_client(study: Study, *, api: bool) -> Client:
    client = Client(raise_request_exception=False)
    if api:
        token = Token.objects.create(user=study.owner)
        client.defaults["HTTP_AUTHORIZATION"] = f"Token {token.key}"
    else:
        client.force_login(study.owner)
    return client


def _assert_api_400(response: Any, *named: str) -> str:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"] == "application/json"
    detail = response.json()["detail"]
    for text in named:
        assert text in detail, detail
    return detail


def _assert_page_400(response: Any) -> None:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("text/html")
    assert 'id="error-400"' in response.content.decode()


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("/api/studies/{study}/correlations/?question=%00", 'query parameter "question"'),
        ("/api/studies/{study}/scores/?metric=%00", 'query parameter "metric"'),
        ("/api/studies/{study}/scores/?metric=bleu-2&%00=1", 'query parameter "%00"'),
        ("/api/studies/%00/", "address"),
    ],
)
def test_a_nul_in_an_api_address_or_query_is_a_json_400(path: str, named: str) -> None:
    study = work_study(contexts=1)
    response = _owner_client(study, api=True).get(path.format(study=study.pk))
    detail = _assert_api_400(response, named, "NUL character")
    assert "\x00" not in detail


@pytest.mark.parametrize(
    ("path", "logged_in"),
    [
        ("/work/join/%00/", False),
        ("/work/join/ab%00cd/?next=%00", False),
        ("/reports/{study}/conversations/%00/", True),
        ("/reports/{study}/conversations/?search=%00", True),
    ],
)
def test_a_nul_in_a_page_address_or_query_is_the_400_page(path: str, logged_in: bool) -> None:
    study = work_study(contexts=1)
    client = _owner_client(study, api=False) if logged_in else Client(raise_request_exception=False)
    _assert_page_400(client.get(path.format(study=study.pk)))


@pytest.mark.parametrize("multipart", [False, True])
def test_a_nul_in_a_form_field_is_the_400_page(multipart: bool) -> None:
    fields = {"username": "alice\x00", "password": "a-long-enough-pass-42"}
    client = Client(raise_request_exception=False)
    if multipart:
        response = client.post("/accounts/login/", fields)
    else:
        response = client.post("/accounts/login/", urlencode(fields), content_type=FORM_ENCODED)
    _assert_page_400(response)


@pytest.mark.parametrize("method", ["post", "put"])
def test_a_nul_in_a_form_encoded_api_body_is_a_json_400_naming_the_field(method: str) -> None:
    study = work_study(contexts=1)
    body = urlencode({"kind": "ruber", "name": "x", "corpus_path": "a\x00b"})
    response = getattr(_owner_client(study, api=True), method)(
        "/api/training-jobs/", body, content_type=FORM_ENCODED
    )
    _assert_api_400(response, 'form field "corpus_path"', "NUL character")


def test_a_nul_in_a_cookie_or_header_is_a_400_json_under_the_api() -> None:
    study = work_study(contexts=1)
    # A quoted cookie may escape a character in octal, and Django decodes \000 to NUL: the session lookup
    # then compared a NUL key in the database.
    client = Client(raise_request_exception=False)
    client.cookies["sessionid"] = "placeholder"
    api = client.get("/api/studies/", HTTP_COOKIE='sessionid="\\000abcdefgh12345678"')
    _assert_api_400(api, 'cookie "sessionid"', "NUL character")
    page = client.get("/studies/", HTTP_COOKIE='sessionid="\\000abcdefgh12345678"')
    _assert_page_400(page)
    token = _owner_client(study, api=True).get("/api/studies/", HTTP_AUTHORIZATION="Token abc\x00def")
    _assert_api_400(token, 'header "Authorization"', "NUL character")


DEPTH = 1000


@pytest.mark.parametrize("path", ["/api/studies/", "/api/score/", "/api/training-jobs/"])
def test_a_json_body_nested_1000_deep_is_a_400_naming_the_limit(path: str) -> None:
    study = work_study(contexts=1)
    client = _owner_client(study, api=True)
    body = "[" * DEPTH + "]" * DEPTH  # 2 KB
    response = client.post(path, body, content_type="application/json")
    _assert_api_400(response, "nested 1,000 levels deep", "at most 100")
    # At the limit (the object and 99 lists), and with brackets inside a string, which do not nest: read,
    # and answered by the view (a field at fault), not refused as too deep.
    at_limit = {"name": "[" * 5000, "replies": json.loads("[" * 99 + "]" * 99)}
    response = client.post(path, json.dumps(at_limit), content_type="application/json")
    assert response.status_code == 400
    assert "nested" not in response.content.decode(), response.content[:300]


def test_a_nul_in_a_json_string_or_key_is_a_400_naming_the_field() -> None:
    study = work_study(contexts=1)
    client = _owner_client(study, api=True)
    body = {"replies": ["fine"], "references": [["a\x00b"]], "metrics": ["bleu-2"]}
    response = client.post("/api/score/", json.dumps(body), content_type="application/json")
    _assert_api_400(response, 'field "references[0][0]"', "NUL character")
    body = {"replies": ["fine"], "metrics": ["bleu-2"], "options": {"n\x00": "1"}}
    response = client.post("/api/score/", json.dumps(body), content_type="application/json")
    _assert_api_400(response, 'a key of field "options"', "NUL character")


def test_the_schema_lets_every_operation_answer_the_400_of_a_refused_request() -> None:
    """A NUL in the address or a header is refused before the view, whatever the operation, with
    ``{"detail"}``; where a view documents its own 400, the schema offers that answer or this one."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    detail = {"$ref": "#/components/schemas/ErrorDetail"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            answer = operation["responses"].get("400")
            assert answer is not None, f"{method.upper()} {path} documents no 400"
            body = answer["content"]["application/json"]["schema"]
            accepted = body.get("anyOf", [body])
            assert detail in accepted or body == {"$ref": "#/components/schemas/InvalidInput"}, (
                f"{method.upper()} {path}: {body}"
            )


def test_a_training_corpus_line_nested_5000_deep_is_a_400_naming_the_line() -> None:
    study = work_study(contexts=1)
    line = b'{"query": "a", "reply": ' + b"[" * 5000 + b"]" * 5000 + b"}\n"
    upload = SimpleUploadedFile("deep.jsonl", b'{"query": "hi", "reply": "hello"}\n' * 5 + line)
    fields = {"kind": "ruber", "name": "deep", "corpus_format": "generic", "corpus_file": upload}
    response = _owner_client(study, api=True).post("/api/training-jobs/", fields)
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert "line 6: JSON nested too deep to read" in json.dumps(response.json())

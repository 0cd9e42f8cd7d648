"""Researchers' export and progress endpoints (REST API and the study page's download links): the same
bytes as the export files, streamed; owners only; the OpenAPI schema still generates without warnings."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Assignment, WorkItem
from annotation.selectors.exports import export_chunks
from tests.annotation.export_builders import annotated_study
from tests.api.work_api_support import client_for
from tests.factories import AnnotatorFactory, ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db

EXPORTS = ("ratings", "references", "diversity")


def _file(study, what: str, fmt: str) -> bytes:
    return "".join(export_chunks(study=study, what=what, fmt=fmt)).encode("utf-8")


def _streamed(response) -> bytes:
    assert response.streaming, "an export is streamed, not built in memory"
    return b"".join(response.streaming_content)


@pytest.mark.parametrize("what", EXPORTS)
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_api_streams_the_export_file(what, fmt):
    built = annotated_study()
    response = client_for(built.study.owner).get(f"/api/studies/{built.study.pk}/{what}/", {"format": fmt})
    assert response.status_code == 200
    assert response["Content-Type"].startswith({"csv": "text/csv", "jsonl": "application/jsonl"}[fmt])
    assert f'filename="study-{built.study.pk}-{what}.{fmt}"' in response["Content-Disposition"]
    body = _streamed(response)
    assert body == _file(built.study, what, fmt)
    assert body.strip()


def test_accept_header_selects_csv_too():
    built = annotated_study()
    response = client_for(built.study.owner).get(
        f"/api/studies/{built.study.pk}/ratings/", HTTP_ACCEPT="text/csv"
    )
    assert _streamed(response) == _file(built.study, "ratings", "csv")


def test_json_pages_hold_the_jsonl_rows():
    built = annotated_study()
    client = client_for(built.study.owner)
    url = f"/api/studies/{built.study.pk}/ratings/"
    every_row = [json.loads(line) for line in _file(built.study, "ratings", "jsonl").decode().splitlines()]
    collected, offset = [], 0
    while offset is not None:
        page = client.get(url, {"limit": 10, "offset": offset}).json()
        assert page["columns"][:3] == ["study", "item", "response_id"]
        assert len(page["results"]) <= 10
        collected += page["results"]
        offset = page["next_offset"]
    assert collected == every_row
    assert len(every_row) == 24


def test_only_the_owner_gets_exports_and_progress():
    built = annotated_study()
    study = built.study
    stranger = client_for(ResearcherFactory.create())
    annotator_user = UserFactory.create()
    AnnotatorFactory.create(study=study, user=annotator_user, pseudonym="volunteer")
    for path in ("ratings/?format=csv", "ratings/", "references/?format=jsonl", "diversity/", "progress/"):
        url = f"/api/studies/{study.pk}/{path}"
        not_found = stranger.get(url)
        assert not_found.status_code == 404, url
        assert b"rater-" not in not_found.content
        assert client_for(annotator_user).get(url).status_code == 403, url  # annotators are not researchers
        assert APIClient().get(url).status_code in (401, 403), url
    assert json.loads(stranger.get(f"/api/studies/{study.pk}/ratings/?format=csv").content)["detail"]


def test_progress_counts_per_annotator_and_per_item():
    built = annotated_study()
    study = built.study
    progress = client_for(study.owner).get(f"/api/studies/{study.pk}/progress/").json()
    people = {row["annotator"]: row for row in progress["annotators"]}
    assert set(people) == {"rater-0", "rater-1", "rater-2"}
    assert [people[name]["rated"] for name in sorted(people)] == [4, 4, 4]
    assert (people["rater-0"]["wrote"], people["rater-1"]["judged"]) == (1, 1)
    assert people["rater-2"]["report_inclusion"] == "exclude"
    assert all(row["active"] == 0 and row["checks_failed"] == 0 for row in people.values())

    assert (people["rater-2"]["included_in_reports"], people["rater-0"]["included_in_reports"]) == (
        False,
        True,
    )

    items = progress["items"]
    assert len(items) == WorkItem.objects.filter(study=study, kind="rate").count() == 8
    assert sum(row["done"] for row in items) == 12  # three annotators, four replies each
    assert {row["wanted"] for row in items} == {3}
    assert [row["done"] for row in items] == sorted(row["done"] for row in items)  # least complete first
    for row in items:
        item = WorkItem.objects.get(pk=row["work_item"])
        assert row["done"] == Assignment.objects.filter(item=item, status="done").count()
        assert all(row[key] for key in ("item", "context", "system")), row
    tasks = {row["kind"]: row for row in progress["tasks"]}
    assert (tasks["rate"]["done"], tasks["rate"]["wanted"]) == (12, 24)
    assert (tasks["write"]["done"], tasks["diversity"]["done"]) == (1, 1)


@pytest.mark.parametrize("what", EXPORTS)
def test_study_page_links_download_the_files(what):
    built = annotated_study()
    owner = Client()
    owner.force_login(built.study.owner)
    page = owner.get(f"/studies/{built.study.pk}/").content.decode()
    for fmt in ("csv", "jsonl"):
        url = f"/studies/{built.study.pk}/export/{what}.{fmt}"
        assert f'href="{url}"' in page
        response = owner.get(url)
        assert response.status_code == 200
        assert _streamed(response) == _file(built.study, what, fmt)


def test_download_links_are_404_for_everyone_but_the_owner():
    built = annotated_study()
    url = f"/studies/{built.study.pk}/export/ratings.csv"
    for user in (ResearcherFactory.create(), UserFactory.create()):
        client = Client()
        client.force_login(user)
        assert client.get(url).status_code == 404
    assert Client().get(url).status_code == 302  # to the login page
    owner = Client()
    owner.force_login(built.study.owner)
    assert owner.get(f"/studies/{built.study.pk}/export/ratings.xlsx").status_code == 404
    assert owner.get(f"/studies/{built.study.pk}/export/passwords.csv").status_code == 404


def test_schema_lists_the_endpoints_and_generates_without_warnings(tmp_path):
    schema = client_for(ResearcherFactory.create()).get("/api/schema/?format=json")
    paths = json.loads(schema.content)["paths"]
    for path in (
        "/api/work/join/",
        "/api/work/{study_id}/next/",
        "/api/work/{study_id}/previous/",
        "/api/work/{study_id}/assignments/{assignment_id}/rating/",
        "/api/work/{study_id}/assignments/{assignment_id}/reference/",
        "/api/work/{study_id}/assignments/{assignment_id}/diversity/",
        "/api/work/{study_id}/assignments/{assignment_id}/skip/",
        "/api/studies/{study_id}/ratings/",
        "/api/studies/{study_id}/references/",
        "/api/studies/{study_id}/diversity/",
        "/api/studies/{study_id}/progress/",
    ):
        assert path in paths, path
    ratings = paths["/api/studies/{study_id}/ratings/"]["get"]["responses"]["200"]["content"]
    assert {"application/json", "text/csv", "application/jsonl"} <= set(ratings)
    call_command(
        "spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"), stderr=io.StringIO()
    )
    assert (tmp_path / "schema.yml").stat().st_size > 0

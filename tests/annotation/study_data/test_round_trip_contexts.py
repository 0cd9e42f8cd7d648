"""The data round trip: a study's contexts downloaded (JSONL and CSV, page link and API), a
system's outputs keyed by the same ``context_id`` uploaded back through the existing replies import, which
finds every context again, those imported without an id included. Owners only."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.importers import ImportFile, ImportRejected
from annotation.models import DialogContext, Reference, Response, Study, StudyImport
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from tests.api.work_api_support import client_for
from tests.factories import AnnotatorFactory, ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db

AWKWARD = '=HYPERLINK("http://x") , "quoted" ; \u00e9t\u00e9 |||\nsecond line'


def _jsonl(records: list[dict[str, Any]], name: str) -> ImportFile:
    return ImportFile(name=name, data="".join(json.dumps(r) + "\n" for r in records).encode("utf-8"))


@pytest.fixture
def study(researcher) -> Study:
    """Contexts with ids and references, one with awkward text, and two imported without an id."""
    study = study_create(owner=researcher, name="Round trip: pilot #1")
    study_import(
        study=study,
        format="jsonl",
        files=[
            _jsonl(
                [
                    {
                        "context_id": "73_4",
                        "context": [{"speaker": "guest", "text": "The wifi is down ."}, "Which room ?"],
                        "response": "room 12 .",
                        "system": "human",
                        "references": ["room twelve .", "it is 12 ."],
                    },
                    {
                        "context_id": "=cmd|' /C calc'!A0",
                        "context": [AWKWARD],
                        "response": "ok .",
                        "system": "human",
                    },
                    {"context": ["Are you free tomorrow ?"], "response": "yes .", "system": "human"},
                    {
                        "context": ["Lunch ?", "Maybe , what time ?"],
                        "response": "noon .",
                        "system": "human",
                        "references": ["at noon ."],
                    },
                ],
                "first.jsonl",
            )
        ],
    )
    return study


def _streamed(response: Any) -> bytes:
    assert response.streaming, "the file is streamed, not built in memory"
    return b"".join(response.streaming_content)


def _download(client: Client, study: Study, fmt: str) -> tuple[Any, bytes]:
    response = client.get(reverse("annotation:study-contexts", args=[study.pk, fmt]))
    assert response.status_code == 200
    return response, _streamed(response)


def _expected(study: Study) -> list[dict[str, Any]]:
    rows = []
    for context in DialogContext.objects.filter(study=study).order_by("position", "id"):
        rows.append(
            {
                "context_id": context.external_id or f"context-{context.pk}",
                "turns": [{"speaker": turn["speaker"], "text": turn["text"]} for turn in context.turns],
                "references": list(
                    Reference.objects.filter(context=context).order_by("id").values_list("text", flat=True)
                ),
            }
        )
    return rows


def test_the_jsonl_download_holds_every_context_with_its_turns_and_references(client, study):
    client.force_login(study.owner)
    response, body = _download(client, study, "jsonl")

    assert response["Content-Type"].startswith("application/jsonl")
    assert 'filename="round-trip-pilot-1-contexts.jsonl"' in response["Content-Disposition"]
    lines = [json.loads(line) for line in body.decode("utf-8").splitlines()]
    assert lines == _expected(study)
    assert [list(line) for line in lines] == [["context_id", "turns", "references"]] * 4
    assert lines[0] == {
        "context_id": "73_4",
        "turns": [
            {"speaker": "guest", "text": "The wifi is down ."},
            {"speaker": "B", "text": "Which room ?"},
        ],
        "references": ["room twelve .", "it is 12 ."],
    }
    without_id = DialogContext.objects.get(study=study, turns__0__text="Are you free tomorrow ?")
    assert lines[2]["context_id"] == f"context-{without_id.pk}"


def test_the_csv_download_has_the_same_rows_as_json_cells_and_no_formula(client, study):
    client.force_login(study.owner)
    response, body = _download(client, study, "csv")

    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="round-trip-pilot-1-contexts.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(body.decode("utf-8"), newline="")))
    assert list(rows[0]) == ["context_id", "turns", "references"]
    expected = _expected(study)
    # A text cell that a spreadsheet would run as a formula starts with "'" (kernel/csv_cells.py).
    assert rows[1]["context_id"] == "'=cmd|' /C calc'!A0"
    rows[1]["context_id"] = rows[1]["context_id"].removeprefix("'")
    assert [
        {
            "context_id": row["context_id"],
            "turns": json.loads(row["turns"]),
            "references": json.loads(row["references"]),
        }
        for row in rows
    ] == expected
    assert json.loads(rows[1]["turns"])[0]["text"] == AWKWARD  # newlines, quotes and separators survive


def test_outputs_keyed_by_the_downloaded_context_ids_upload_back_onto_the_same_contexts(client, study):
    """The round trip of the issue: download, run a system, upload the outputs through the page's import."""
    client.force_login(study.owner)
    _, body = _download(client, study, "jsonl")
    contexts = [json.loads(line) for line in body.decode("utf-8").splitlines()]
    outputs = "".join(
        json.dumps(
            {
                "context_id": row["context_id"],
                "system": "my-bot",
                "response": f"my answer to {row['turns'][-1]['text']}",
            }
        )
        + "\n"
        for row in contexts
    )
    before = set(DialogContext.objects.filter(study=study).values_list("pk", flat=True))

    upload = io.BytesIO(outputs.encode("utf-8"))
    upload.name = "my-bot-outputs.jsonl"
    response = client.post(
        reverse("annotation:study-import", args=[study.pk]), {"format": "jsonl", "files": [upload]}
    )

    assert response.status_code == 302
    record = StudyImport.objects.get(study=study, filenames=["my-bot-outputs.jsonl"])
    assert record.counts["contexts_created"] == 0
    assert record.counts["contexts_reused"] == 4
    assert record.counts["responses_created"] == 4
    assert set(DialogContext.objects.filter(study=study).values_list("pk", flat=True)) == before
    for row in contexts:
        reply = Response.objects.get(system__name="my-bot", text=f"my answer to {row['turns'][-1]['text']}")
        assert [turn["text"] for turn in reply.context.turns] == [turn["text"] for turn in row["turns"]]


def test_csv_outputs_keyed_by_context_id_upload_back_too(study):
    rows = [json.loads(line) for line in _file_text(study, "jsonl").splitlines()]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["context_id", "system", "response"])
    for row in rows:
        writer.writerow([row["context_id"], "csv-bot", f"reply to {row['context_id']}"])
    record = study_import(
        study=study, format="csv", files=[ImportFile("out.csv", buffer.getvalue().encode())]
    )

    assert record.counts["contexts_created"] == 0
    assert record.counts["responses_created"] == 4
    without_id = DialogContext.objects.get(study=study, turns__0__text="Lunch ?")
    assert (
        Response.objects.get(system__name="csv-bot", context=without_id).text
        == f"reply to context-{without_id.pk}"
    )


def _file_text(study: Study, fmt: str) -> str:
    from annotation.selectors.contexts_download import contexts_file_chunks

    return "".join(contexts_file_chunks(study=study, fmt=fmt))


def test_a_context_id_of_the_download_form_that_names_no_context_is_still_refused(study):
    """``context-<n>`` only finds contexts of this study imported without an id; anything else is unknown."""
    other = study_create(owner=study.owner, name="other")
    study_import(
        study=other,
        format="jsonl",
        files=[_jsonl([{"context": ["elsewhere ."], "response": "x .", "system": "s"}], "o.jsonl")],
    )
    foreign = DialogContext.objects.get(study=other)
    named = DialogContext.objects.get(study=study, external_id="73_4")
    for context_id in (f"context-{foreign.pk}", f"context-{named.pk}", "context-0"):
        with pytest.raises(ImportRejected) as rejected:
            study_import(
                study=study,
                format="jsonl",
                files=[_jsonl([{"context_id": context_id, "response": "x .", "system": "s2"}], "bad.jsonl")],
            )
        assert f'unknown context id "{context_id}"' in str(rejected.value)
    assert not Response.objects.filter(system__name="s2").exists()


def test_the_api_streams_the_same_files_and_pages_the_rows(study):
    client = client_for(study.owner)
    for fmt in ("jsonl", "csv"):
        response = client.get(f"/api/studies/{study.pk}/contexts/", {"format": fmt})
        assert response.status_code == 200
        assert _streamed(response).decode("utf-8") == _file_text(study, fmt)
    page = client.get(f"/api/studies/{study.pk}/contexts/", {"limit": 3}).json()
    assert page["columns"] == ["context_id", "turns", "references"]
    assert page["results"] == _expected(study)[:3]
    assert page["next_offset"] == 3
    rest = client.get(f"/api/studies/{study.pk}/contexts/", {"limit": 3, "offset": 3}).json()
    assert rest["results"] == _expected(study)[3:]
    assert rest["next_offset"] is None


def test_only_the_owner_gets_the_contexts(client, study):
    intruder = ResearcherFactory.create(username="mallory")
    annotator = UserFactory.create(username="volunteer")
    AnnotatorFactory.create(study=study, user=annotator, pseudonym="annotator-1")
    for user in (intruder, annotator):
        client.force_login(user)
        for fmt in ("jsonl", "csv"):
            assert client.get(reverse("annotation:study-contexts", args=[study.pk, fmt])).status_code == 404
    assert (
        client_for(intruder).get(f"/api/studies/{study.pk}/contexts/", {"format": "jsonl"}).status_code == 404
    )
    client.logout()
    assert client.get(reverse("annotation:study-contexts", args=[study.pk, "jsonl"])).status_code == 302
    client.force_login(study.owner)
    assert client.get(f"/studies/{study.pk}/contexts.xml").status_code == 404
    page = client.get(reverse("annotation:study-detail", args=[study.pk])).content.decode()
    assert reverse("annotation:study-contexts", args=[study.pk, "jsonl"]) in page
    assert reverse("annotation:study-contexts", args=[study.pk, "csv"]) in page

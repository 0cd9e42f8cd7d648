"""Annotation exports (annotation/exports/files.py, annotation/selectors/exports.py, export_annotations): every
file parsed back equals the database rows exactly, in CSV and in JSONL, awkward text included; the
ratings re-import through the generic jsonl format into the same ratings."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from annotation.exports.files import csv_cell, ratings_as_import_lines, rows_as_csv, rows_as_jsonl
from annotation.importers import ImportFile
from annotation.models import DiversityJudgment, Rating, Reference, Response, Study
from annotation.selectors.exports import export_chunks, rating_rows
from annotation.services.imports import study_import
from annotation.services.studies import QuestionSpec, study_create
from tests.annotation.export_builders import AWKWARD_REFERENCE, AWKWARD_SYSTEM, annotated_study

pytestmark = pytest.mark.django_db


def _export(study: Study, what: str, fmt: str) -> str:
    return "".join(export_chunks(study=study, what=what, fmt=fmt))


def _jsonl(text: str) -> list[dict[str, Any]]:
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def _when(text: str) -> datetime:
    assert text.endswith("Z"), text  # UTC, spelled one way
    return datetime.fromisoformat(text)


def _label(external_id: str, pk: int) -> str:
    return external_id or str(pk)


def _expected_ratings(study: Study, excluded_id: int) -> list[tuple[Any, ...]]:
    ratings = Rating.objects.filter(response__context__study=study).select_related(
        "response__context", "response__system", "annotator", "question"
    )
    return [
        (
            study.name,
            _label(r.response.external_id, r.response.pk),
            r.response.pk,
            _label(r.response.context.external_id, r.response.context.pk),
            r.response.system.name,
            r.annotator.pseudonym,
            r.question.name,
            r.value,
            r.seconds_spent,
            r.client_seconds,
            r.created_at,
            r.annotator_id != excluded_id,
        )
        for r in ratings.order_by("id")
    ]


def _rating_tuple(row: dict[str, Any]) -> tuple[Any, ...]:
    return (
        row["study"],
        row["item"],
        row["response_id"],
        row["context"],
        row["system"],
        row["annotator"],
        row["question"],
        row["value"],
        row["seconds"],
        row["client_seconds"],
        _when(row["time"]),
        row["included_in_reports"],
    )


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _none_or(convert: Any, cell: str) -> Any:
    return None if cell == "" else convert(cell)


def test_ratings_jsonl_parses_back_to_the_database_rows():
    built = annotated_study()
    rows = _jsonl(_export(built.study, "ratings", "jsonl"))
    expected = _expected_ratings(built.study, built.excluded.pk)
    assert len(expected) == 3 * 4 * 2  # three annotators, four replies each, two questions
    assert [_rating_tuple(row) for row in rows] == expected
    assert list(rows[0]) == [
        "study", "item", "response_id", "context", "system", "annotator", "question", "value", "seconds",
        "client_seconds", "time", "included_in_reports",
    ]  # fmt: skip
    assert {row["included_in_reports"] for row in rows if row["annotator"] == "rater-2"} == {False}
    assert all(row["seconds"] is not None for row in rows)  # the server always measures
    assert any(row["client_seconds"] is None for row in rows)  # a missing claim stays null, not 0
    assert any(row["system"] == AWKWARD_SYSTEM for row in rows)


def test_ratings_csv_parses_back_to_the_database_rows():
    built = annotated_study()
    text = _export(built.study, "ratings", "csv")
    rows = _csv_rows(text)
    parsed = [
        (
            row["study"],
            row["item"],
            int(row["response_id"]),
            row["context"],
            row["system"],
            row["annotator"],
            row["question"],
            int(row["value"]),
            _none_or(float, row["seconds"]),
            _none_or(float, row["client_seconds"]),
            _when(row["time"]),
            {"true": True, "false": False}[row["included_in_reports"]],
        )
        for row in rows
    ]
    assert parsed == _expected_ratings(built.study, built.excluded.pk)
    assert f'"{AWKWARD_SYSTEM.replace(chr(34), chr(34) * 2)}"' in text  # quoted, inner quotes doubled
    assert any(row["context"] == "dlg,1" for row in rows)


def _expected_references(study: Study) -> list[tuple[Any, ...]]:
    references = Reference.objects.filter(context__study=study, origin="collected").select_related(
        "context", "author"
    )
    return [
        (
            study.name,
            _label(r.context.external_id, r.context.pk),
            r.pk,
            r.text,
            r.author.pseudonym if r.author else None,
            r.seconds_spent,
            r.client_seconds,
            r.keystrokes,
            r.flags,
            r.created_at,
        )
        for r in references.order_by("id")
    ]


def test_references_parse_back_from_jsonl_and_csv():
    built = annotated_study()
    expected = _expected_references(built.study)
    assert [row[3] for row in expected] == [AWKWARD_REFERENCE, "good idea"]
    assert expected[1][8] == ["no-keystrokes", "pasted", "too-fast"]

    from_jsonl = [
        (
            row["study"], row["context"], row["reference_id"], row["text"], row["author"], row["seconds"],
            row["client_seconds"], row["keystrokes"], row["flags"], _when(row["time"]),
        )
        for row in _jsonl(_export(built.study, "references", "jsonl"))
    ]  # fmt: skip
    assert from_jsonl == expected

    from_csv = [
        (
            row["study"], row["context"], int(row["reference_id"]), row["text"], row["author"],
            _none_or(float, row["seconds"]), _none_or(float, row["client_seconds"]),
            _none_or(int, row["keystrokes"]), row["flags"].split(";") if row["flags"] else [], _when(row["time"]),
        )
        for row in _csv_rows(_export(built.study, "references", "csv"))
    ]  # fmt: skip
    assert from_csv == expected  # the newline, quotes and non-ASCII text survive


def test_imported_references_are_not_in_the_collected_export():
    built = annotated_study()
    context = built.study.contexts.get(external_id="dlg,1")
    Reference.objects.create(context=context, text="from the corpus", origin="original")
    texts = [row["text"] for row in _jsonl(_export(built.study, "references", "jsonl"))]
    assert "from the corpus" not in texts
    assert len(texts) == 2


def test_diversity_judgments_parse_back():
    built = annotated_study()
    (judgment,) = DiversityJudgment.objects.filter(context__study=built.study)
    chosen = sorted(judgment.appropriate.all(), key=lambda response: response.pk)
    expected = {
        "study": built.study.name,
        "context": _label(judgment.context.external_id, judgment.context.pk),
        "system": AWKWARD_SYSTEM,
        "annotator": "rater-1",
        "replies": 3,
        "appropriate": [_label(response.external_id, response.pk) for response in chosen],
        "meanings": 2,
        "seconds": judgment.seconds_spent,
        "client_seconds": 20.0,
    }
    (row,) = _jsonl(_export(built.study, "diversity", "jsonl"))
    assert _when(row.pop("time")) == judgment.created_at
    assert row == expected
    (cells,) = _csv_rows(_export(built.study, "diversity", "csv"))
    assert cells["appropriate"].split(";") == expected["appropriate"]
    assert (cells["system"], cells["meanings"], cells["replies"]) == (AWKWARD_SYSTEM, "2", "3")


def test_an_empty_study_exports_a_header_only():
    built = annotated_study()
    empty = study_create(owner=built.study.owner, name="nothing yet")
    assert _export(empty, "ratings", "jsonl") == ""
    assert _export(empty, "ratings", "csv").splitlines() == [
        "study,item,response_id,context,system,annotator,question,value,seconds,client_seconds,time,"
        "included_in_reports"
    ]


def test_command_writes_the_same_bytes_as_the_download(tmp_path):
    built = annotated_study(name="cli study")
    for what in ("ratings", "references", "diversity"):
        for fmt in ("csv", "jsonl"):
            target = tmp_path / f"{what}.{fmt}"
            call_command(
                "export_annotations", str(built.study.pk), "--what", what, "--format", fmt,
                "--output", str(target), stderr=io.StringIO(),
            )  # fmt: skip
            assert target.read_bytes() == _export(built.study, what, fmt).encode("utf-8"), (what, fmt)
    printed = io.StringIO()
    call_command(
        "export_annotations", "cli study", "--what", "references", "--format", "jsonl", stdout=printed
    )
    assert printed.getvalue() == _export(built.study, "references", "jsonl")
    with pytest.raises(CommandError, match="no study"):
        call_command("export_annotations", "no such study")


def test_exported_ratings_reimport_through_the_generic_jsonl_format():
    """Regroup the rating export into the import format, add each reply's context and text from the
    database, import into a fresh study: the same ratings, annotator by annotator, come out. (The
    generic format holds one reply per system and context, so extra samples of a system stay out.)"""
    built = annotated_study()
    study = built.study
    replies = {
        _label(reply.external_id, reply.pk): reply
        for reply in Response.objects.filter(context__study=study).select_related("context")
    }
    lines = [
        json.dumps(
            {
                **entry,
                "id": f"copy-{entry['id']}",
                "context": replies[entry["id"]].context.turns,
                "response": replies[entry["id"]].text,
            }
        )
        for entry in ratings_as_import_lines(
            row for row in rating_rows(study=study) if replies[row["item"]].sample_index == 0
        )
    ]
    copy = study_create(
        owner=study.owner,
        name="re-imported",
        questions=[
            QuestionSpec(name="appropriateness", scale_min=0, scale_max=2),
            QuestionSpec(name="fluency", scale_min=1, scale_max=5),
        ],
    )
    study_import(
        study=copy, format="jsonl", files=[ImportFile(name="back.jsonl", data="\n".join(lines).encode())]
    )

    def ratings_of(target: Study) -> list[tuple[str, str, str, str, int]]:
        return sorted(
            Rating.objects.filter(response__context__study=target, response__sample_index=0).values_list(
                "response__system__name", "response__text", "annotator__pseudonym", "question__name", "value"
            )
        )

    assert ratings_of(copy) == ratings_of(study)
    assert len(ratings_of(study)) >= 12  # most of the 24 ratings are on first samples


def test_csv_cells_and_lines():
    assert [csv_cell(v) for v in (None, True, False, 0.1 + 0.2, 3, ["a", "b"], "x")] == [
        "", "true", "false", "0.30000000000000004", "3", "a;b", "x",
    ]  # fmt: skip
    lines = list(rows_as_csv([{"a": 'say "hi", ok', "b": "line\nbreak"}], ["a", "b"]))
    assert lines == ["a,b\n", '"say ""hi"", ok","line\nbreak"\n']
    with pytest.raises(ValueError, match="Out of range float"):
        list(rows_as_jsonl([{"a": float("nan")}], ["a"]))

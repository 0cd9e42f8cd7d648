"""The generic csv format: the same meaning as jsonl (docs/import-formats.md), read from a table."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.importers import ImportFile, ImportRejected
from annotation.models import DialogContext, Rating, Reference, Response
from annotation.services.imports import study_import
from annotation.services.studies import study_create

DATA = Path(__file__).resolve().parent.parent / "data" / "import"


def _snapshot(study) -> dict:
    """Everything an import wrote, without database ids."""
    return {
        "contexts": sorted(
            (context.external_id, repr(context.turns))
            for context in DialogContext.objects.filter(study=study)
        ),
        "references": sorted(Reference.objects.filter(context__study=study).values_list("text", "origin")),
        "responses": sorted(
            Response.objects.filter(context__study=study).values_list("external_id", "system__name", "text")
        ),
        "ratings": sorted(
            Rating.objects.filter(response__context__study=study).values_list(
                "response__external_id", "annotator__pseudonym", "question__name", "value"
            )
        ),
    }


@pytest.mark.django_db
def test_the_csv_example_imports_exactly_like_the_jsonl_example(researcher):
    from_csv = study_create(owner=researcher, name="from csv")
    from_jsonl = study_create(owner=researcher, name="from jsonl")
    csv_file = DATA / "example.csv"
    jsonl_file = DATA / "example.jsonl"
    record = study_import(
        study=from_csv, format="csv", files=[ImportFile(csv_file.name, csv_file.read_bytes())]
    )
    study_import(
        study=from_jsonl, format="jsonl", files=[ImportFile(jsonl_file.name, jsonl_file.read_bytes())]
    )

    csv_snapshot, jsonl_snapshot = _snapshot(from_csv), _snapshot(from_jsonl)
    # Only the anonymous pseudonyms differ (csv-anon-n / jsonl-anon-n); speakers of r3 are A/B in csv.
    for snapshot in (csv_snapshot, jsonl_snapshot):
        snapshot["ratings"] = [(r, a.replace("jsonl-", "csv-"), q, v) for r, a, q, v in snapshot["ratings"]]
        snapshot["contexts"] = [
            (i, t.replace("'guest'", "'A'").replace("'host'", "'B'")) for i, t in snapshot["contexts"]
        ]
    assert csv_snapshot == jsonl_snapshot
    assert record.counts["ratings_created"] == 7


@pytest.mark.django_db
def test_a_bom_and_windows_line_ends_are_accepted(researcher):
    study = study_create(owner=researcher, name="excel")
    text = "\ufeffcontext,response,system,rating:appropriateness\r\nHi .|||Hello .,how are you ?,bot,1;2\r\n"
    study_import(study=study, format="csv", files=[ImportFile("excel.csv", text.encode("utf-8"))])

    assert sorted(Rating.objects.values_list("value", flat=True)) == [1, 2]


@pytest.mark.django_db
def test_the_context_column_is_required(researcher):
    study = study_create(owner=researcher, name="no context")
    with pytest.raises(ImportRejected) as rejected:
        study_import(
            study=study, format="csv", files=[ImportFile("r.csv", b"response,system\nhello .,bot\n")]
        )

    problem = rejected.value.problems[0]
    assert (problem.file, problem.line, problem.field) == ("r.csv", 1, "context")
